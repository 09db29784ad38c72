"""What the brain graph's operations return: plain frozen dataclasses every surface can render
(the CLI as tables or `--json`, the HTTP API later as schemas)."""

from __future__ import annotations

from dataclasses import dataclass

from loci.graph.document import BrainDoc
from loci.graph.records import GraphDocument, GraphEdge
from loci.models import Citation, Document


@dataclass(frozen=True)
class Summary:
    id: str
    kind: str
    type: str
    folder: str
    path: str
    status: str
    title: str
    aliases: tuple[str, ...]
    merged_into: str | None
    updated: str
    content_hash: str  # pass it back as `expected_hash` to edit this version
    document_id: int | None  # the indexed document search cites


def summary(record: GraphDocument) -> Summary:
    return Summary(
        record.id, record.kind, record.type, record.folder, f"{record.folder}/{record.id}.md",
        record.status, record.title, record.aliases, record.merged_into, record.updated,
        record.content_hash, record.document_id,
    )  # fmt: skip


@dataclass(frozen=True)
class Page:
    """One document with its parsed form and its edges both ways."""

    summary: Summary
    content: str  # the exact Markdown
    doc: BrainDoc
    links: tuple[GraphEdge, ...]  # from this document
    backlinks: tuple[GraphEdge, ...]  # from other documents to this one


@dataclass(frozen=True)
class QueryHit:
    document: Summary
    score: float
    matched_by: str  # text, vector, both, or graph (reached by following links)
    snippet: str
    citation: Citation
    links: tuple[GraphEdge, ...]
    backlinks: tuple[GraphEdge, ...]
    path: tuple[str, ...] = ()  # for a graph hit: the ids from the search hit to this page
    highlights: tuple[tuple[int, int], ...] = ()  # the query's terms in `snippet`: (start, end)


@dataclass(frozen=True)
class Written:
    """A write's outcome: the document as stored now, and whether anything changed."""

    document: Summary
    changed: bool


@dataclass(frozen=True)
class DeletePlan:
    document: Summary
    backlinks: tuple[GraphEdge, ...]  # links other documents would be left with
    deleted: bool  # False: a dry run, nothing changed


@dataclass(frozen=True)
class FolderCount:
    folder: str
    documents: int  # directly in this folder
    total: int  # in it and every folder under it


@dataclass(frozen=True)
class SourcePointer:
    ref: str  # provider:id
    document: Document | None  # the ingested file, page or note it names; None: outside Loci
