"""ChatGPT's data export (Settings → Data controls → Export): a zip whose `conversations.json`
lists every conversation with its `id`, `title`, `create_time` and `update_time` (epoch
seconds) and its messages as a tree, `mapping` (node id → `message`, `parent`, `children`):
each edit of a question and each regenerated answer is a branch of it. `current_node` is the
last message of the branch the person last looked at; walking up from it through the parents
gives the conversation as they saw it, and the other branches are left out.

Only what was shown is kept: the person's and the assistant's messages, without the system
prompt, tool calls and results, reasoning, custom instructions and messages marked
`is_visually_hidden_from_conversation`. A message's `content.parts` are text, or objects: an
image is noted where it was ("*[image]*") and, when the export holds its file, kept as a
document linked to the conversation; a voice message's transcription is kept as its text.
A conversation that cannot be read (no `mapping`, a `current_node` that is not in it) fails
alone; one with no message left to show is skipped, with why."""

from __future__ import annotations

import mimetypes
import re
from pathlib import Path
from typing import Any

from loci.imports.archive import Member
from loci.imports.conversations import (
    Conversation,
    Turn,
    conversation_item,
    epoch_iso,
    load_conversations,
    untitled,
)
from loci.imports.export_files import export_members
from loci.imports.items import Attachment, Export, ItemFailure, Limits

TOOL = "ChatGPT"
_SPEAKERS = {"user": "You", "assistant": TOOL}
_SHOWN = {"text", "multimodal_text"}
_PART_NOTES = {
    "image_asset_pointer": "*[image]*",
    "audio_asset_pointer": "*[audio]*",
    "real_time_user_audio_video_asset_pointer": "*[audio]*",
}


_FILE_ID = re.compile(r"(file[-_][A-Za-z0-9]+)")


class _Unreadable(Exception):
    pass


def read(path: Path, limits: Limits) -> Export:
    members = export_members(path, limits)
    listed = load_conversations(members, TOOL)
    files = _files(members)
    export = Export(kind="chatgpt")
    for number, raw in enumerate(listed, 1):
        name = _name(raw, number)
        try:
            conversation = _conversation(raw, files)
        except _Unreadable as error:
            export.failed.append(ItemFailure(name, str(error)))
            continue
        if not conversation.turns:
            export.skipped.append(ItemFailure(name, "no messages to show"))
            continue
        export.add(conversation_item(conversation, TOOL), limits)
    return export


def _name(raw: Any, number: int) -> str:
    title = raw.get("title") if isinstance(raw, dict) else None
    return title if isinstance(title, str) and title.strip() else f"conversation {number}"


def _files(members: list[Member]) -> dict[str, Member]:
    """The files the export holds beside conversations.json (images the person sent, DALL·E's
    pictures), by the file id their name starts with ("file-Zq8Jr2-photo.png")."""
    found: dict[str, Member] = {}
    for member in members:
        match = _FILE_ID.match(member.path.rsplit("/", 1)[-1])
        if match:
            found.setdefault(match[1], member)
    return found


def _conversation(raw: Any, files: dict[str, Member]) -> Conversation:
    if not isinstance(raw, dict):
        raise _Unreadable("not a conversation (an object with an id and a mapping)")
    key = raw.get("id") or raw.get("conversation_id")
    mapping = raw.get("mapping")
    if not isinstance(key, str) or not key:
        raise _Unreadable("the conversation has no id")
    if not isinstance(mapping, dict):
        raise _Unreadable("the conversation has no messages (`mapping`)")
    conversation = Conversation(
        key=key,
        title="",
        created=epoch_iso(raw.get("create_time")),
        updated=epoch_iso(raw.get("update_time")),
    )
    seen: set[str] = set()
    for message in _shown_branch(mapping, raw.get("current_node")):
        turn = _turn(message)
        if turn is not None:
            conversation.turns.append(turn)
            conversation.attachments += _attached(message, files, seen)
    title = raw.get("title")
    conversation.title = (
        title.strip() if isinstance(title, str) and title.strip() else untitled(conversation)
    )
    model = raw.get("default_model_slug")
    if isinstance(model, str):
        conversation.extra["model"] = model
    if raw.get("is_archived") is True:
        conversation.extra["archived"] = True
    return conversation


def _shown_branch(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The messages from the root down to `current`, the branch the person last saw."""
    if current is None:
        current = _last_leaf(mapping)
    if not isinstance(current, str) or current not in mapping:
        raise _Unreadable(f"its current message {current!r} is not among its messages")
    messages: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id in mapping:
        if node_id in seen:  # a parent loop: nothing a real export holds
            raise _Unreadable("its messages' parents go round in a loop")
        seen.add(node_id)
        node = mapping[node_id]
        if not isinstance(node, dict):
            raise _Unreadable(f"message {node_id!r} is not an object")
        if isinstance(node.get("message"), dict):
            messages.append(node["message"])
        node_id = node.get("parent")
    messages.reverse()
    return messages


def _last_leaf(mapping: dict[str, Any]) -> str | None:
    """For an export without `current_node`: the first branch followed to its end."""
    root = next(
        (k for k, n in mapping.items() if isinstance(n, dict) and n.get("parent") is None), None
    )
    node_id, steps = root, 0
    while node_id is not None and steps <= len(mapping):
        node = mapping.get(node_id)
        children = node.get("children") if isinstance(node, dict) else None
        last = children[-1] if isinstance(children, list) and children else None
        if not isinstance(last, str) or last not in mapping:
            return node_id
        node_id, steps = last, steps + 1
    return node_id


def _turn(message: dict[str, Any]) -> Turn | None:
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    speaker = _SPEAKERS.get(role) if isinstance(role, str) else None
    metadata = message.get("metadata")
    content = message.get("content")
    if speaker is None or not isinstance(content, dict):
        return None
    if isinstance(metadata, dict) and metadata.get("is_visually_hidden_from_conversation"):
        return None
    if content.get("content_type") not in _SHOWN:
        return None
    recipient = message.get("recipient")
    if recipient not in (None, "all"):  # the assistant addressing a tool, not the person
        return None
    pieces = [_part(p) for p in content.get("parts") or []]
    text = "\n\n".join(p for p in pieces if p)
    if not text.strip():
        return None
    return Turn(speaker, text, epoch_iso(message.get("create_time")))


def _attached(
    message: dict[str, Any], files: dict[str, Member], seen: set[str]
) -> list[Attachment]:
    """The files a shown message points at ("file-service://file-Zq8Jr2",
    "sediment://file_00…"), when the export holds them; each once a conversation."""
    found: list[Attachment] = []
    for part in message["content"].get("parts") or []:
        pointer = part.get("asset_pointer") if isinstance(part, dict) else None
        if not isinstance(pointer, str):
            continue
        member = files.get(pointer.rsplit("/", 1)[-1])
        if member is None or member.path in seen:
            continue
        seen.add(member.path)
        name = member.path.rsplit("/", 1)[-1]
        found.append(Attachment(name, member.data, mimetypes.guess_type(name)[0]))
    return found


def _part(part: Any) -> str:
    if isinstance(part, str):
        return part.strip()
    if not isinstance(part, dict):
        return ""
    kind = part.get("content_type")
    text = part.get("text")
    if isinstance(kind, str) and kind in _PART_NOTES:
        return _PART_NOTES[kind]
    if isinstance(text, str):  # a voice message's transcription, and the like
        return text.strip()
    return f"*[{kind}]*" if isinstance(kind, str) else ""
