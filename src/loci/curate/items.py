"""Source items: what arrives to be curated, normalized the same way whatever brought it.

    capture   text someone saved ("save this", `loci save`, a chat message) → an inbox draft
    meeting   a transcript with a title, a date and attendees → an evidence snapshot, then a
              meeting page and the attendees' person pages

An item is keyed by its content hash: a capture by its text alone (the same words saved twice
are one capture, wherever they came from), any other item by all of its fields (a webhook that
delivers the same meeting twice is one item; an edited transcript is a new one).

Text from outside becomes a page body through `defuse`, so a write of it always validates.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

from loci.errors import InvalidInput
from loci.graph.document import TIMELINE_HEADING
from loci.graph.links import TYPED_LINK, Link, is_source_ref, link_problem

ITEM_TYPES = ("capture", "meeting")
PROVIDER = re.compile(r"^[a-z0-9][a-z0-9_-]{0,31}$")
MAX_TITLE = 200
MAX_ATTENDEES = 200


@dataclass(frozen=True)
class Attendee:
    name: str
    email: str | None = None


@dataclass(frozen=True)
class SourceItem:
    provider: str  # a lowercase slug: cli, slack, jamie, …
    id: str  # the provider's own id; `provider:id` is the item's source ref
    type: str  # capture | meeting
    title: str
    text: str
    date: str | None = None  # ISO date or time (meetings)
    attendees: tuple[Attendee, ...] = ()
    url: str | None = None

    @property
    def ref(self) -> str:
        return f"{self.provider}:{self.id}"

    def canonical(self) -> bytes:
        """The bytes kept and hashed: a capture's text alone, any other item whole."""
        value: dict[str, Any] = (
            {"type": "capture", "text": self.text} if self.type == "capture" else asdict(self)
        )
        return json.dumps(value, sort_keys=True, ensure_ascii=False).encode("utf-8")

    def describe(self) -> dict[str, Any]:
        """What the item's row keeps beside its bytes (a capture's bytes hold only its text)."""
        return {"provider": self.provider, "id": self.id, "type": self.type,
                "title": self.title, "source": self.ref}  # fmt: skip


def stored_item(data: bytes, metadata: Mapping[str, Any]) -> SourceItem:
    """The item back from its row's bytes and metadata."""
    value = json.loads(data)
    if value.get("type") == "capture":
        return SourceItem(
            provider=str(metadata["provider"]),
            id=str(metadata["id"]),
            type="capture",
            title=str(metadata["title"]),
            text=str(value["text"]),
        )
    attendees = tuple(Attendee(a["name"], a.get("email")) for a in value.get("attendees") or ())
    return SourceItem(**{**value, "attendees": attendees})


def capture(text: str, *, title: str | None, source: str) -> SourceItem:
    """A capture of `text`, sourced to `source` (provider:id)."""
    if not text.strip():
        raise InvalidInput("nothing to save: the text is empty")
    if not is_source_ref(source):
        raise InvalidInput(
            f"source {source!r} must be provider:id — a lowercase provider slug, a colon, an id "
            "without spaces (e.g. slack:C01/1712345)"
        )
    provider, _, ident = source.partition(":")
    name = clean_title(title) if title and title.strip() else title_from(text)
    return SourceItem(provider, ident, "capture", name, text.replace("\r\n", "\n"))


def normalize(provider: str, raw: Mapping[str, Any]) -> SourceItem:
    """A provider's item (a JSON object) as a `SourceItem`, or `InvalidInput` saying what is
    wrong with it."""
    if not PROVIDER.match(provider or ""):
        raise InvalidInput(f"provider {provider!r} must be a lowercase slug (a-z, 0-9, '-', '_')")
    if not isinstance(raw, Mapping):
        raise InvalidInput("a source item is a JSON object")
    ident = str(raw.get("id") or "").strip()
    if not ident or not is_source_ref(f"{provider}:{ident}"):
        raise InvalidInput(
            "the item needs an `id`: the provider's own id, without spaces, at most 220 characters"
        )
    text = raw.get("text") if raw.get("text") is not None else raw.get("transcript")
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("the item needs a `text` (or `transcript`) that is not empty")
    text = text.replace("\r\n", "\n")
    attendees = _attendees(raw.get("attendees"))
    kind = str(raw.get("type") or ("meeting" if attendees else "capture")).strip().lower()
    if kind not in ITEM_TYPES:
        raise InvalidInput(f"item type {kind!r} must be one of {', '.join(ITEM_TYPES)}")
    date = _date(raw.get("date"), required=kind == "meeting")
    title = raw.get("title")
    if title is not None and not isinstance(title, str):
        raise InvalidInput("the item's `title` must be text")
    if title and title.strip():
        name = clean_title(title)
    elif kind == "meeting":
        name = f"Meeting {date}"
    else:
        name = title_from(text)
    url = raw.get("url")
    if url is not None and not (isinstance(url, str) and re.match(r"^https?://\S+$", url)):
        raise InvalidInput("the item's `url` must be an http(s) address")
    return SourceItem(provider, ident, kind, name, text, date, attendees, url)


def _attendees(value: Any) -> tuple[Attendee, ...]:
    if value is None:
        return ()
    if not isinstance(value, list):
        raise InvalidInput("`attendees` must be a list of names or {name, email} objects")
    found: dict[str, Attendee] = {}
    for entry in value:
        if isinstance(entry, str):
            name, email = entry, None
        elif isinstance(entry, Mapping) and isinstance(entry.get("name"), str):
            name, email = entry["name"], entry.get("email")
            if email is not None and not isinstance(email, str):
                raise InvalidInput(f"attendee {name!r}: `email` must be text")
        else:
            raise InvalidInput("each attendee is a name or an object with a `name`")
        name = clean_title(name)
        if name:
            found.setdefault(name.casefold(), Attendee(name, (email or "").strip() or None))
    if len(found) > MAX_ATTENDEES:
        raise InvalidInput(f"at most {MAX_ATTENDEES} attendees per item")
    return tuple(found.values())


def _date(value: Any, *, required: bool) -> str | None:
    if value is None or value == "":
        if required:
            raise InvalidInput("a meeting needs a `date`, ISO: 2026-03-04 or 2026-03-04T10:00Z")
        return None
    text = str(value).strip()
    try:
        dt.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(f"date {text!r} must be an ISO date or time") from None
    return text


# text from outside ---------------------------------------------------------------------------
def defuse(text: str) -> str:
    """`text` made safe as the body of a page: a typed link the grammar refuses gets its
    brackets escaped (Markdown shows the same characters, the brain no longer reads a link),
    and a line that reads as the timeline heading is escaped, so the timeline stays ours."""

    def fix(match: re.Match[str]) -> str:
        link = Link(match.group(1), match.group(2).strip(), match.group(3), match.start())  # type: ignore[arg-type]
        return match.group(0) if link_problem(link) is None else "\\[\\[" + match.group(0)[2:]

    lines = TYPED_LINK.sub(fix, text.replace("\r\n", "\n")).split("\n")
    return "\n".join("\\" + line if line.strip() == TIMELINE_HEADING else line for line in lines)


def label(text: str, limit: int = 120) -> str:
    """Text fit for a link label or a timeline entry: one line, no link or code brackets."""
    flat = " ".join(re.sub(r"[\[\]|`*]", " ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1].rstrip() + "…"


def clean_title(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= MAX_TITLE else flat[: MAX_TITLE - 1].rstrip() + "…"


def title_from(text: str) -> str:
    """A capture's title: its first line that says something, without Markdown markers."""
    for line in text.split("\n"):
        words = re.sub(r"^[\s#>*\-+]+", "", line).strip()
        if words:
            return label(words, 80)
    return "Capture"
