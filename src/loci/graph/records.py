"""The brain graph as stored: a document's row (its exact Markdown and the fields queries filter
on), its edges and timeline entries, its versions, and the writes that change it."""

from __future__ import annotations

from dataclasses import dataclass

from loci.models import NewDocument


@dataclass(frozen=True)
class GraphEdge:
    source: str  # graph document ids
    target: str
    type: str  # a relation type, `wiki_link` or `cites`


@dataclass(frozen=True)
class GraphTimelineEntry:
    doc_id: str  # the graph document it belongs to
    entry_id: str  # ev-…, derived from the entry's content
    at: str
    text: str
    source: str | None


@dataclass(frozen=True)
class GraphDocument:
    """A graph document as stored: its exact Markdown plus the fields queries filter on."""

    brain_id: int
    id: str
    kind: str  # page | evidence
    type: str
    folder: str
    status: str
    title: str
    aliases: tuple[str, ...]
    merged_into: str | None
    created: str
    updated: str
    content: str
    content_hash: str
    document_id: int | None  # the indexed `documents` row search cites


@dataclass(frozen=True)
class GraphVersion:
    """The content a write replaced (or deleted), with who did it, how and when."""

    id: int
    doc_id: str
    action: str
    actor: str
    content: str
    content_hash: str
    created_at: str


@dataclass(frozen=True)
class GraphPut:
    """Create or overwrite one graph document (rename it when `previous_id` is set).

    `expected_hash` None means the document must not exist yet; otherwise the stored one must
    still have that hash. `index` is its `documents` row for search, (re)queued with the write.
    """

    id: str
    kind: str
    type: str
    folder: str
    status: str
    title: str
    aliases: tuple[str, ...]
    merged_into: str | None
    created: str
    updated: str
    content: str
    content_hash: str
    edges: tuple[GraphEdge, ...]
    timeline: tuple[GraphTimelineEntry, ...]
    index: NewDocument
    expected_hash: str | None
    action: str
    previous_id: str | None = None


@dataclass(frozen=True)
class GraphDelete:
    id: str
    expected_hash: str
    action: str = "delete"
