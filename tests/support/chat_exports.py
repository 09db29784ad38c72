"""ChatGPT's and Claude's data exports, built as the tools write them (the shapes of
OpenAI's `conversations.json` — a tree of messages per conversation, `current_node` the last
one shown — and of Anthropic's — `chat_messages` in order), for the `loci import chatgpt` and
`loci import claude` tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tests.support.exports import zip_of


def epoch(when: str) -> float:
    """ "2024-03-01 10:02" (UTC) as ChatGPT writes times: epoch seconds, with a fraction."""
    return datetime.fromisoformat(when).replace(tzinfo=UTC).timestamp() + 0.25


def chatgpt_message(
    node: str,
    role: str,
    parts: list[Any],
    when: str | None,
    *,
    content_type: str = "text",
    recipient: str = "all",
    hidden: bool = False,
) -> dict[str, Any]:
    metadata: dict[str, Any] = {"is_visually_hidden_from_conversation": True} if hidden else {}
    return {
        "id": node,
        "author": {"role": role, "name": None, "metadata": {}},
        "create_time": epoch(when) if when else None,
        "update_time": None,
        "content": {"content_type": content_type, "parts": parts},
        "status": "finished_successfully",
        "end_turn": True,
        "weight": 1.0,
        "metadata": metadata,
        "recipient": recipient,
    }


def chatgpt_conversation(
    key: str,
    title: str | None,
    messages: list[dict[str, Any]],
    *,
    created: str = "2024-03-01 10:00",
    updated: str = "2024-03-01 10:30",
) -> dict[str, Any]:
    """A conversation whose messages follow one another (no branches), under the empty root
    node every export has."""
    mapping: dict[str, Any] = {"client-created-root": _node("client-created-root", None, None)}
    parent = "client-created-root"
    for message in messages:
        mapping[message["id"]] = _node(message["id"], message, parent)
        mapping[parent]["children"].append(message["id"])
        parent = message["id"]
    return {
        "title": title,
        "create_time": epoch(created),
        "update_time": epoch(updated),
        "mapping": mapping,
        "moderation_results": [],
        "current_node": parent,
        "plugin_ids": None,
        "conversation_id": key,
        "conversation_template_id": None,
        "gizmo_id": None,
        "is_archived": False,
        "safe_urls": [],
        "default_model_slug": "gpt-4o",
        "id": key,
    }


def branch(conversation: dict[str, Any], parent: str, messages: list[dict[str, Any]]) -> None:
    """Another branch from `parent` (a question edited, an answer regenerated); it is not
    the one shown unless `current_node` is moved to its end."""
    mapping = conversation["mapping"]
    for message in messages:
        mapping[message["id"]] = _node(message["id"], message, parent)
        mapping[parent]["children"].append(message["id"])
        parent = message["id"]


def _node(node: str, message: dict[str, Any] | None, parent: str | None) -> dict[str, Any]:
    return {"id": node, "message": message, "parent": parent, "children": []}


def chatgpt_sample() -> list[dict[str, Any]]:
    """Two conversations as a real export has them: a hidden system message, an edited
    question whose first branch is not shown, the assistant running code (a tool call and its
    output), an image the person sent, headings in an answer; and a conversation that was
    opened and never used."""
    sourdough = chatgpt_conversation(
        "6f1c2a9e-0b7d-4c53-9a51-1d2f3e4a5b6c",
        "Sourdough starter rescue",
        [
            chatgpt_message("sys", "system", [""], None, hidden=True),
            chatgpt_message(
                "u1",
                "user",
                ["My starter smells like nail polish remover. Is it dead?"],
                "2024-03-01 10:02",
            ),
            chatgpt_message(
                "a1",
                "assistant",
                [
                    "Not dead, just hungry: the acetone smell means the yeast ran out of food.\n\n"
                    "## Feeding schedule\n\nDiscard half and feed it twice a day with rye flour."
                ],
                "2024-03-01 10:02",
            ),
            chatgpt_message(
                "a2",
                "assistant",
                ["hydration = 100 * water / flour"],
                "2024-03-01 10:05",
                content_type="code",
                recipient="python",
            ),
            chatgpt_message(
                "t1", "tool", ["hydration printed: 100"], "2024-03-01 10:05", content_type="code"
            ),
            chatgpt_message(
                "u2",
                "user",
                [
                    {
                        "content_type": "image_asset_pointer",
                        "asset_pointer": "file-service://file-Zq8Jr2",
                        "size_bytes": 201344,
                        "width": 1024,
                        "height": 768,
                    },
                    "Here is the jar after one day.",
                ],
                "2024-03-01 10:20",
                content_type="multimodal_text",
            ),
            chatgpt_message(
                "a3",
                "assistant",
                ["Those bubbles are a good sign; bake when it doubles within six hours."],
                "2024-03-01 10:21",
            ),
        ],
    )
    # The person first asked about spelt, then edited the question: that branch is not shown.
    branch(
        sourdough,
        "a1",
        [
            chatgpt_message("u2-old", "user", ["Can I feed it with spelt?"], "2024-03-01 10:10"),
            chatgpt_message(
                "a3-old", "assistant", ["Spelt works, it ferments quickly."], "2024-03-01 10:10"
            ),
        ],
    )
    empty = chatgpt_conversation(
        "0d7e8f90-1a2b-4c3d-8e9f-a0b1c2d3e4f5",
        "New chat",
        [chatgpt_message("sys2", "system", [""], None, hidden=True)],
    )
    return [sourdough, empty]


def claude_message(key: str, sender: str, text: str, when: str, **more: Any) -> dict[str, Any]:
    stamp = when.replace(" ", "T") + ":07.118842Z"
    return {
        "uuid": key,
        "text": text,
        "content": [
            {
                "start_timestamp": stamp,
                "stop_timestamp": stamp,
                "type": "text",
                "text": text,
                "citations": [],
            }
        ],
        "sender": sender,
        "created_at": stamp,
        "updated_at": stamp,
        "attachments": more.get("attachments", []),
        "files": more.get("files", []),
    }


def claude_conversation(
    key: str, name: str, messages: list[dict[str, Any]], *, created: str, updated: str
) -> dict[str, Any]:
    return {
        "uuid": key,
        "name": name,
        "summary": "",
        "created_at": created,
        "updated_at": updated,
        "account": {"uuid": "a7c1e2f3-0000-4000-8000-000000000001"},
        "chat_messages": messages,
    }


def claude_sample() -> list[dict[str, Any]]:
    """A conversation with a file the person attached (its extracted text), an image, a
    tool call and Claude's thinking among the content blocks; and one with no message."""
    answer = claude_message(
        "m2",
        "assistant",
        "The lease lets you leave after twelve months with two months' notice.",
        "2024-05-10 18:41",
    )
    answer["content"] = [
        {"type": "thinking", "thinking": "Look for the break clause first."},
        {"type": "tool_use", "name": "search", "input": {"q": "break clause"}},
        {"type": "tool_result", "content": [{"type": "text", "text": "clause 9.2"}]},
        {
            "type": "text",
            "text": "The lease lets you leave after twelve months with two months' notice.",
        },
    ]
    lease = claude_conversation(
        "c0ffee00-1234-4abc-9def-0123456789ab",
        "Reading my flat lease",
        [
            claude_message(
                "m1",
                "human",
                "Can I break this lease early? The landlord mentions a break clause.",
                "2024-05-10 18:40",
                attachments=[
                    {
                        "file_name": "lease.pdf",
                        "file_size": 48213,
                        "file_type": "pdf",
                        "extracted_content": "9.2 Either party may end the tenancy after 12"
                        " months by giving two months' written notice.",
                    }
                ],
                files=[{"file_name": "floorplan.png"}],
            ),
            answer,
            claude_message(
                "m3", "human", "Does the notice have to be on paper?", "2024-05-10 18:45"
            ),
            claude_message(
                "m4",
                "assistant",
                "Written notice means a letter or an e-mail if the lease allows electronic"
                " notices.",
                "2024-05-10 18:45",
            ),
        ],
        created="2024-05-10T18:40:01.000000Z",
        updated="2024-05-10T18:45:30.000000Z",
    )
    empty = claude_conversation(
        "e0e0e0e0-0000-4000-8000-00000000e0e0",
        "",
        [],
        created="2024-05-11T09:00:00.000000Z",
        updated="2024-05-11T09:00:00.000000Z",
    )
    return [lease, empty]


def chat_export(
    path: Path,
    conversations: list[Any] | bytes,
    *,
    extra: bool = True,
    files: dict[str, bytes] | None = None,
) -> Path:
    """The zip the tool e-mails: `conversations.json` beside the other files it holds (the
    images sent in ChatGPT's conversations named by their file id, "file-Zq8Jr2-jar.jpg")."""
    data = (
        conversations
        if isinstance(conversations, bytes)
        else json.dumps(conversations, ensure_ascii=False, indent=2).encode("utf-8")
    )
    members = {"conversations.json": data}
    if extra:
        members["user.json"] = b'{"id": "user-1", "email": "person@example.org"}'
        members["chat.html"] = b"<html><body>conversations</body></html>"
    members.update(files or {})
    return zip_of(path, members)
