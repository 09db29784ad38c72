"""Claude's data export (Settings → Privacy → Export data): a zip whose `conversations.json`
lists every conversation with its `uuid`, `name`, `created_at` and `updated_at` (ISO 8601)
and its `chat_messages`, in order, each with its `sender` ("human" or "assistant"), its
`text`, its `content` blocks (`{"type": "text", "text": …}`; tool calls and their results,
and the assistant's "thinking", are not what the person was shown and are left out),
`created_at`, and what the person attached: `attachments` carry the text Claude extracted
from a file (`extracted_content`), kept as a document linked to the conversation, and
`files` (images, PDFs read as images) only their names, noted in the turn.

A conversation that cannot be read (no uuid, messages that are not a list) fails alone; one
with no message is skipped, with why."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from loci.imports.conversations import (
    Conversation,
    Turn,
    conversation_item,
    iso,
    load_conversations,
    untitled,
)
from loci.imports.export_files import export_members
from loci.imports.items import Attachment, Export, ItemFailure, Limits

TOOL = "Claude"
_SPEAKERS = {"human": "You", "assistant": TOOL}


class _Unreadable(Exception):
    pass


def read(path: Path, limits: Limits) -> Export:
    listed = load_conversations(export_members(path, limits), TOOL)
    export = Export(kind="claude")
    for number, raw in enumerate(listed, 1):
        name = _name(raw, number)
        try:
            conversation = _conversation(raw)
        except _Unreadable as error:
            export.failed.append(ItemFailure(name, str(error)))
            continue
        if not conversation.turns:
            export.skipped.append(ItemFailure(name, "no messages"))
            continue
        export.add(conversation_item(conversation, TOOL), limits)
    return export


def _name(raw: Any, number: int) -> str:
    title = raw.get("name") if isinstance(raw, dict) else None
    return title if isinstance(title, str) and title.strip() else f"conversation {number}"


def _conversation(raw: Any) -> Conversation:
    if not isinstance(raw, dict):
        raise _Unreadable("not a conversation (an object with a uuid and chat_messages)")
    key = raw.get("uuid")
    messages = raw.get("chat_messages", [])
    if not isinstance(key, str) or not key:
        raise _Unreadable("the conversation has no uuid")
    if not isinstance(messages, list):
        raise _Unreadable("its chat_messages are not a list")
    conversation = Conversation(
        key=key, title="", created=iso(raw.get("created_at")), updated=iso(raw.get("updated_at"))
    )
    for message in messages:
        if not isinstance(message, dict):
            raise _Unreadable("one of its messages is not an object")
        speaker = _SPEAKERS.get(message.get("sender"))  # type: ignore[arg-type]
        if speaker is None:
            continue
        notes, attachments = _attached(message)
        conversation.attachments += attachments
        text = "\n\n".join(p for p in (_text(message), notes) if p)
        if text:
            conversation.turns.append(Turn(speaker, text, iso(message.get("created_at"))))
    name = raw.get("name")
    conversation.title = (
        name.strip() if isinstance(name, str) and name.strip() else untitled(conversation)
    )
    return conversation


def _text(message: dict[str, Any]) -> str:
    """What the message said: its text blocks, or (older exports) its `text`."""
    content = message.get("content")
    if isinstance(content, list):
        blocks = [
            b["text"].strip()
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        if any(blocks):
            return "\n\n".join(b for b in blocks if b)
    text = message.get("text")
    return text.strip() if isinstance(text, str) else ""


def _attached(message: dict[str, Any]) -> tuple[str, list[Attachment]]:
    names: list[str] = []
    kept: list[Attachment] = []
    listed = [message.get("attachments"), message.get("files")]
    for entry in [e for entries in listed if isinstance(entries, list) for e in entries]:
        if not isinstance(entry, dict):
            continue
        name = entry.get("file_name")
        if not isinstance(name, str) or not name.strip():
            continue
        names.append(name.strip())
        extracted = entry.get("extracted_content")
        if isinstance(extracted, str) and extracted.strip():
            # The text Claude read from the file, not the file: kept as text under its name.
            kept.append(Attachment(name.strip() + ".txt", extracted.encode(), "text/plain"))
    notes = "*attached: " + ", ".join(dict.fromkeys(names)) + "*" if names else ""
    return notes, kept
