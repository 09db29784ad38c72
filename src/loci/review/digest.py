"""What a brain took in over a period, read from the store: the digest's facts.

Documents added (files, web pages — by kind, with titles) and notes written; captures still
waiting as drafts in inbox/; graph pages created or changed, with the timeline entries they
gained; documents that failed, with the reason; and themes of the new material
(`loci.review.themes`). The written summary is `loci.review.summary`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from loci.graph.records import GraphDocument
from loci.models import Brain, Chunk, Document
from loci.review.period import Period
from loci.review.themes import Vector, mean_vector, themes, words_of
from loci.store.base import Store

ADDED_KINDS = ("file", "web", "note")  # what a person adds; pages and captures are listed apart
REVIEWS_FOLDER = "reviews"  # where digests are saved: never part of the next digest
INBOX = "inbox"
MAX_LISTED = 200  # per list: a digest is read by a person
MAX_ENTRIES = 500  # timeline entries read for the period
MAX_BACKGROUND = 400  # documents the themes' word rarity is measured over


@dataclass(frozen=True)
class AddedDocument:
    id: int
    kind: str
    name: str
    title: str
    status: str
    created_at: str


@dataclass(frozen=True)
class FailedDocument:
    id: int
    kind: str
    name: str
    reason: str
    at: str


@dataclass(frozen=True)
class InboxDraft:
    id: str  # graph document id
    title: str
    created: str
    new: bool  # captured within the period


@dataclass(frozen=True)
class TimelineLine:
    at: str
    text: str


@dataclass(frozen=True)
class PageChange:
    id: str
    title: str
    type: str
    folder: str
    created: bool  # False: an existing page that changed
    entries: tuple[TimelineLine, ...]


@dataclass(frozen=True)
class DigestTheme:
    label: str
    words: tuple[str, ...]
    document_ids: tuple[int, ...]


@dataclass(frozen=True)
class Facts:
    brain: str
    period: Period
    added: tuple[AddedDocument, ...]  # files and web pages, newest first
    notes: tuple[AddedDocument, ...]
    inbox: tuple[InboxDraft, ...]
    pages: tuple[PageChange, ...]
    failed: tuple[FailedDocument, ...]
    themes: tuple[DigestTheme, ...]
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def by_kind(self) -> dict[str, int]:
        kinds: dict[str, int] = {}
        for document in self.added:
            kinds[document.kind] = kinds.get(document.kind, 0) + 1
        return kinds


def gather(store: Store, brain: Brain, period: Period) -> Facts:
    documents = store.list_documents(brain.id)
    new = [d for d in documents if d.kind in ADDED_KINDS and period.contains(d.created_at)]
    new.sort(key=lambda d: (d.created_at, d.id), reverse=True)
    added = tuple(_added(d) for d in new if d.kind != "note")
    notes = tuple(_added(d) for d in new if d.kind == "note")
    failed = tuple(
        FailedDocument(d.id, d.kind, d.name, d.status_reason or "no reason recorded", d.updated_at)
        for d in sorted(documents, key=lambda d: (d.updated_at, d.id), reverse=True)
        if d.status == "failed" and period.contains(d.updated_at)
    )
    graph_docs = store.graph.documents(brain.id, kind="page")
    inbox = tuple(
        InboxDraft(g.id, g.title, g.created, period.contains(g.created))
        for g in sorted(graph_docs, key=lambda g: (g.created, g.id), reverse=True)
        if g.status == "draft" and _top(g.folder) == INBOX
    )
    pages = _page_changes(store, brain, period, graph_docs)
    ready = [d for d in new if d.status == "ready"]
    found = _themes(store, brain, ready, documents)
    counts = {
        "added": len(added),
        "notes": len(notes),
        "inbox": len(inbox),
        "inbox_new": sum(1 for d in inbox if d.new),
        "pages_created": sum(1 for p in pages if p.created),
        "pages_changed": sum(1 for p in pages if not p.created),
        "timeline_entries": sum(len(p.entries) for p in pages),
        "failed": len(failed),
    }
    return Facts(
        brain=brain.name,
        period=period,
        added=added[:MAX_LISTED],
        notes=notes[:MAX_LISTED],
        inbox=inbox[:MAX_LISTED],
        pages=pages[:MAX_LISTED],
        failed=failed[:MAX_LISTED],
        themes=found,
        counts=counts,
    )


def _added(document: Document) -> AddedDocument:
    return AddedDocument(
        document.id,
        document.kind,
        document.name,
        document.title or document.name,
        document.status,
        document.created_at,
    )


def _top(folder: str) -> str:
    return folder.split("/")[0]


def _page_changes(
    store: Store, brain: Brain, period: Period, graph_docs: Sequence[GraphDocument]
) -> tuple[PageChange, ...]:
    """Pages (not inbox drafts, not earlier digests) written in the period, newest first, with
    the timeline entries dated in it."""
    entries: dict[str, list[TimelineLine]] = {}
    for entry in store.graph.timeline(brain.id, since=period.first_day, limit=MAX_ENTRIES):
        entries.setdefault(entry.doc_id, []).append(TimelineLine(entry.at, entry.text))
    changed = [
        g
        for g in graph_docs
        if _top(g.folder) not in (INBOX, REVIEWS_FOLDER)
        and g.status != "merged"
        and (period.contains(g.updated) or g.id in entries)
    ]
    changed.sort(key=lambda g: (g.updated, g.id), reverse=True)
    return tuple(
        PageChange(
            g.id,
            g.title,
            g.type,
            g.folder,
            period.contains(g.created),
            tuple(entries.get(g.id, ())),
        )  # fmt: skip
        for g in changed
    )


def _themes(
    store: Store, brain: Brain, new: Sequence[Document], documents: Sequence[Document]
) -> tuple[DigestTheme, ...]:
    # The brain as stored now: the caller's copy may predate its first indexed document.
    model = store.get_brain_by_id(brain.id).embedder_model
    if model is None or not new:
        return ()
    vectors: dict[int, Vector] = {}
    background: dict[int, set[str]] = {}
    for document in reversed(new):  # oldest first: a group is named after what started it
        chunks = store.list_chunks(brain.id, document.id)
        stored = store.cached_vectors(model, [c.embed_hash for c in chunks])
        mean = mean_vector([stored[c.embed_hash] for c in chunks if c.embed_hash in stored])
        if mean is None:
            continue
        vectors[document.id] = mean
        background[document.id] = words_of(_text(document, chunks))
    new_ids = {d.id for d in new}
    others = [
        d for d in documents if d.status == "ready" and d.id not in new_ids and d.kind != "item"
    ]
    room = max(0, MAX_BACKGROUND - len(background))
    for other in others[-room:] if room else []:  # the most recent others
        background[other.id] = words_of(_text(other, store.list_chunks(brain.id, other.id)))
    return tuple(DigestTheme(t.label, t.words, t.document_ids) for t in themes(vectors, background))


def _text(document: Document, chunks: Sequence[Chunk]) -> str:
    body = " ".join(c.text for c in chunks)
    return f"{document.title or ''} {body}"
