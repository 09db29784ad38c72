"""What the ChatGPT and Claude readers share: an export's `conversations.json` found and
loaded, and a conversation, once read as its turns, written as one document.

Each turn is a section of its own, headed by who spoke and when ("## You — 2024-03-01 10:02",
"## ChatGPT — 2024-03-01 10:02", in UTC), so a passage found is cited to the turn that holds
it and the person's words are told from the assistant's. Headings inside a turn are pushed
below the turn's (`sections.demote_headings`); two turns of the same minute by the same
speaker get "(2)", "(3)" so no two sections share a heading."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from loci.imports.archive import Member
from loci.imports.items import Attachment, ExportRefused, Item
from loci.imports.markdown import file_name, note_markdown
from loci.imports.sections import demote_headings

CONVERSATIONS = "conversations.json"


@dataclass(frozen=True)
class Turn:
    speaker: str  # as the heading shows it: "You", "ChatGPT", "Claude"
    text: str  # Markdown
    when: str | None = None  # ISO 8601


@dataclass
class Conversation:
    key: str
    title: str
    created: str | None
    updated: str | None
    turns: list[Turn] = field(default_factory=list)
    attachments: list[Attachment] = field(default_factory=list)
    extra: dict[str, Any] = field(default_factory=dict)


def load_conversations(members: list[Member], tool: str) -> list[Any]:
    """The list in the export's `conversations.json` (at any depth of the export: some unzip
    tools add a folder), or the export refused with why."""
    found = [m for m in members if m.path.rsplit("/", 1)[-1] == CONVERSATIONS]
    if not found:
        raise ExportRefused(
            f"this export has no {CONVERSATIONS}; is it {tool}'s data export (the zip it"
            " e-mails you)?"
        )
    member = min(found, key=lambda m: m.path.count("/"))
    try:
        text = member.data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ExportRefused(
            f"{member.path} is not UTF-8 text ({error.reason} at byte {error.start}), as"
            f" {tool} writes it; nothing was imported"
        ) from None
    try:
        loaded = json.loads(text)
    except json.JSONDecodeError as error:
        raise ExportRefused(
            f"{member.path} is not valid JSON ({error.msg} at line {error.lineno}, column"
            f" {error.colno}); is the export complete? Nothing was imported"
        ) from None
    if not isinstance(loaded, list):
        raise ExportRefused(
            f"{member.path} is not a list of conversations, as {tool} writes it; nothing was"
            " imported"
        )
    return loaded


def epoch_iso(value: object) -> str | None:
    """An epoch time in seconds (ChatGPT writes floats) as ISO 8601 in UTC."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return datetime.fromtimestamp(value, UTC).isoformat()
    except (OverflowError, OSError, ValueError):
        return None


def iso(value: object) -> str | None:
    """An ISO 8601 time as the tool wrote it, if it reads as one."""
    if not isinstance(value, str):
        return None
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return None
    return value


def conversation_item(conversation: Conversation, tool: str) -> Item:
    headings: dict[str, int] = {}
    sections: list[str] = []
    for turn in conversation.turns:
        minute = _minute(turn.when)
        heading = turn.speaker + (f" — {minute}" if minute else "")
        seen = headings[heading] = headings.get(heading, 0) + 1
        if seen > 1:
            heading += f" ({seen})"
        sections.append(f"## {heading}\n\n{demote_headings(turn.text.strip(), 2)}")
    return Item(
        key=conversation.key,
        name=file_name(conversation.title, "conversation"),
        body=note_markdown(
            conversation.title,
            "\n\n".join(sections),
            where=(tool,),
            created=conversation.created,
            updated=conversation.updated,
        ),
        title=conversation.title,
        created=conversation.created,
        updated=conversation.updated,
        where=(tool,),
        attachments=tuple(conversation.attachments),
        extra={"turns": len(conversation.turns), **conversation.extra},
    )


def _minute(when: str | None) -> str | None:
    if not when:
        return None
    try:
        moment = datetime.fromisoformat(when)
    except ValueError:
        return None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%d %H:%M")


def untitled(conversation: Conversation) -> str:
    """A title for a conversation its tool left untitled: its first words."""
    for turn in conversation.turns:
        words = " ".join(turn.text.split())
        if words:
            return words[:60] + ("…" if len(words) > 60 else "")
    return "Untitled conversation"
