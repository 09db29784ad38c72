"""A brain document: Markdown with YAML frontmatter at `folder/id.md`, readable and
editable as a plain file.

    ---
    id: ana-lopez
    kind: page                # page | evidence — evidence lives under evidence/, pages outside
    type: person              # person company project meeting concept source analysis note
    folder: people
    status: active            # draft | active | archived | merged (with mergedInto)
    title: Ana López
    aliases: [Ana]
    relations: [{type: works_at, target: acme}]
    sources: [file:12]
    created: 2026-03-04T10:00:00Z
    updated: 2026-03-05T09:12:00Z
    ---

    Ana leads the garden project [[page:garden-project|Garden]] since March
    [[evidence:ev-kickoff-notes|kickoff notes]].

    ## Timeline

    - **2026-03-04** Kickoff held; Ana leads. — [[source:file:12|meeting notes]] `ev-3f2a9c1b7d`

The compiled truth (before `## Timeline`) is rewritten in place; the timeline only grows, and
each entry's `ev-` id is derived from its content, so the same entry written twice is one entry.
A document read from disk keeps its exact text: parsing never changes what is stored.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import re
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast

import yaml

from loci.errors import InvalidInput

Kind = Literal["page", "evidence"]
DocType = Literal[
    "person", "company", "project", "meeting", "concept", "source", "analysis", "note"
]
Status = Literal["draft", "active", "archived", "merged"]
TYPES: tuple[str, ...] = (
    "person", "company", "project", "meeting", "concept", "source", "analysis", "note",
)  # fmt: skip
STATUSES: tuple[str, ...] = ("draft", "active", "archived", "merged")
LEGACY_TYPES = {"media": "source", "email": "source", "writing": "analysis"}
DEFAULT_FOLDERS: dict[str, str] = {
    "person": "people",
    "company": "companies",
    "project": "projects",
    "meeting": "meetings",
    "concept": "concepts",
    "source": "sources",
    "analysis": "analysis",
    "note": "inbox",
}
EVIDENCE_ZONE = "evidence"
TIMELINE_HEADING = "## Timeline"
KNOWN_KEYS = (
    "id", "kind", "type", "folder", "status", "title", "aliases", "relations", "sources",
    "mergedInto", "created", "updated",
)  # fmt: skip
ENTRY = re.compile(
    r"^- \*\*(?P<at>[^*]+)\*\* (?P<text>.*?)"
    r"(?: — (?P<source>\[\[source:[^\]]+\]\]))?"
    r"(?: `(?P<id>ev-[0-9a-f]{10})`)?\s*$"
)
FRONTMATTER = re.compile(r"\A---\n(.*?)\n---\n?", re.DOTALL)


@dataclass(frozen=True)
class Relation:
    type: str
    target: str


@dataclass(frozen=True)
class TimelineEntry:
    id: str  # ev-…, derived from the entry's content
    at: str  # ISO date or datetime
    text: str
    source: str | None  # provider:id

    def render(self) -> str:
        pointer = f" — [[source:{self.source}]]" if self.source else ""
        return f"- **{self.at}** {self.text}{pointer} `{self.id}`"


def entry_id(document_id: str, at: str, text: str, source: str | None) -> str:
    basis = "\n".join((document_id, at, " ".join(text.split()), source or ""))
    return "ev-" + hashlib.sha256(basis.encode("utf-8")).hexdigest()[:10]


def new_entry(document_id: str, at: str, text: str, source: str | None) -> TimelineEntry:
    text = " ".join(text.split())
    return TimelineEntry(entry_id(document_id, at, text, source), at, text, source)


@dataclass(frozen=True)
class BrainDoc:
    id: str
    kind: Kind
    type: DocType
    folder: str
    status: Status = "draft"
    title: str = ""
    aliases: tuple[str, ...] = ()
    relations: tuple[Relation, ...] = ()
    sources: tuple[str, ...] = ()
    merged_into: str | None = None
    created: str = ""
    updated: str = ""
    truth: str = ""  # the compiled truth, Markdown
    timeline: tuple[TimelineEntry, ...] = ()
    extra: dict[str, Any] = field(default_factory=dict)  # frontmatter keys Loci does not use

    @property
    def path(self) -> str:
        return f"{self.folder}/{self.id}.md"

    def with_changes(self, **changes: Any) -> BrainDoc:
        return replace(self, **changes)

    def render(self) -> str:
        """The canonical text: frontmatter in a fixed key order, truth, timeline."""
        front: dict[str, Any] = {
            "id": self.id,
            "kind": self.kind,
            "type": self.type,
            "folder": self.folder,
            "status": self.status,
            "title": self.title,
        }
        if self.aliases:
            front["aliases"] = list(self.aliases)
        if self.relations:
            front["relations"] = [{"type": r.type, "target": r.target} for r in self.relations]
        if self.sources:
            front["sources"] = list(self.sources)
        if self.merged_into:
            front["mergedInto"] = self.merged_into
        if self.created:
            front["created"] = self.created
        if self.updated:
            front["updated"] = self.updated
        front.update(self.extra)
        head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000).strip()
        body = self.truth.strip("\n")
        parts = [f"---\n{head}\n---\n"]
        if body:
            parts.append(f"\n{body}\n")
        if self.timeline:
            parts.append(f"\n{TIMELINE_HEADING}\n\n" + "\n".join(e.render() for e in self.timeline))
            parts.append("\n")
        return "".join(parts)


def now() -> str:
    return dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(text: str, *, path: str | None = None) -> BrainDoc:
    """A document from its text; `path` (folder/id.md) fills id and folder the text leaves
    out. Shape problems (a missing id, an unknown type) are left to `validate`; only text that
    cannot be read at all raises `InvalidInput`."""
    match = FRONTMATTER.match(text)
    if match is None:
        raise InvalidInput("the document has no YAML frontmatter (--- … ---) at the top")
    try:
        front = yaml.safe_load(match.group(1)) or {}
    except yaml.YAMLError as error:
        raise InvalidInput(f"the frontmatter is not valid YAML: {error}") from None
    if not isinstance(front, dict):
        raise InvalidInput("the frontmatter must be a mapping of keys to values")
    body = text[match.end() :]
    truth, timeline = _split_body(body)
    folder_from_path, id_from_path = _split_path(path)
    doc_type = str(front.get("type") or "note")
    return BrainDoc(
        id=str(front.get("id") or id_from_path or ""),
        kind=cast(Kind, str(front.get("kind") or "page")),
        type=cast(DocType, LEGACY_TYPES.get(doc_type, doc_type)),
        folder=str(front.get("folder") or folder_from_path or ""),
        status=cast(Status, str(front.get("status") or "draft")),
        title=str(front.get("title") or ""),
        aliases=tuple(str(a) for a in _list(front.get("aliases"))),
        relations=tuple(_relations(front.get("relations"))),
        sources=tuple(str(s) for s in _list(front.get("sources"))),
        merged_into=_optional(front.get("mergedInto")),
        created=_timestamp(front.get("created")),
        updated=_timestamp(front.get("updated")),
        truth=truth,
        timeline=tuple(timeline),
        extra={k: v for k, v in front.items() if k not in KNOWN_KEYS},
    )


def _split_body(body: str) -> tuple[str, list[TimelineEntry]]:
    lines = body.split("\n")
    try:
        at = next(i for i, line in enumerate(lines) if line.strip() == TIMELINE_HEADING)
    except StopIteration:
        return body.strip("\n"), []
    entries = []
    for line in lines[at + 1 :]:
        m = ENTRY.match(line.strip())
        if m:
            source = m.group("source")
            ref = source[len("[[source:") : -2].split("|")[0] if source else None
            entries.append(
                TimelineEntry(m.group("id") or "", m.group("at").strip(), m.group("text"), ref)
            )
        elif line.strip():
            entries.append(TimelineEntry("", "", line.strip(), None))  # validation names it
    return "\n".join(lines[:at]).strip("\n"), entries


def _split_path(path: str | None) -> tuple[str | None, str | None]:
    if not path:
        return None, None
    folder, _, name = path.rpartition("/")
    return (folder or None), name.removesuffix(".md")


def _list(value: Any) -> list[Any]:
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _optional(value: Any) -> str | None:
    return str(value) if value else None


def _timestamp(value: Any) -> str:
    if isinstance(value, dt.datetime):
        moment = value.astimezone(dt.UTC) if value.tzinfo else value
        return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
    if isinstance(value, dt.date):
        return value.isoformat()
    return str(value) if value else ""


def _relations(value: Any) -> list[Relation]:
    out = []
    for item in _list(value):
        if isinstance(item, dict) and item.get("type") and item.get("target"):
            out.append(Relation(str(item["type"]), str(item["target"])))
        elif isinstance(item, str) and ":" in item:  # shorthand "works_at: acme"
            relation_type, target = item.split(":", 1)
            out.append(Relation(relation_type.strip(), target.strip()))
        else:
            out.append(Relation("", str(item)))  # validation names it
    return out
