"""The nouns of Loci as frozen dataclasses, shared by every layer.

Parsers produce a `ParsedDocument` (a title, metadata and a list of `Block`s); the chunker turns
blocks into `ChunkDraft`s; the store keeps `Document`s and `Chunk`s; search returns `Hit`s whose
`Citation` points at the exact file, page, line span and heading a passage came from. Where a
passage is — page, lines, characters, OCR region, recording time — is one `Location`, carried
whole from block to citation.

The nouns of one concept live beside its package: accounts and OAuth in `loci.auth.records`, the
brain graph in `loci.graph.records`, conversations in `loci.answer.records`, Slack and webhooks in
`loci.integrations.records`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar

BlockKind = Literal["heading", "paragraph", "list", "table", "code"]
DocumentStatus = Literal["processing", "ready", "failed"]
DocumentKind = Literal["file", "web", "note", "page", "evidence", "item"]
# page, evidence: the graph; item: a capture or source item waiting for or past curation
JobStatus = Literal["queued", "running", "done", "failed"]
# An `index` job runs in two stages: "text" (parse, chunk, write the chunks and their text index:
# searchable by words) and "vectors" (embed what has no vector yet). Other jobs have one stage.
JobStage = Literal["text", "vectors"]
# A job settled at the end of its batch: (job, the stage it moves on to or None when it is done,
# its place in the queue as seconds of cost from now or None to keep its place).
Settled = tuple["Job", JobStage | None, float | None]
# What a document being indexed is doing (`Progress.stage`).
ProgressStage = Literal["parse", "ocr", "chunk", "embed"]
SearchMode = Literal["hybrid", "text", "vector"]
Visibility = Literal["restricted", "workspace"]
Role = Literal["owner", "editor", "viewer"]
# What `loci sync` does with a document whose file left a registered folder.
OnDelete = Literal["remove", "keep"]
SourceMode = Literal["files", "pages"]  # a folder's files as documents, or as graph pages


# Where text read by OCR sits on its page or image: (left, top, right, bottom) as fractions of the
# width and height, origin top left, so it holds at any rendering resolution.
Region = tuple[float, float, float, float]


_N = TypeVar("_N", int, float)

# Below this mean confidence (0-1) OCR text is kept but marked as uncertain in citations.
LOW_OCR_CONFIDENCE = 0.6


def region_text(region: Region) -> str:
    """A region as stored and cited: "left,top,right,bottom", three decimals each."""
    return ",".join(f"{v:.3f}" for v in region)


def region_of(text: str | None) -> Region | None:
    """A stored region ("left,top,right,bottom") read back; None when there is none."""
    try:
        left, top, right, bottom = (float(v) for v in (text or "").split(","))
    except ValueError:  # none, or not four numbers: nothing a reader could be pointed at
        return None
    return (left, top, right, bottom)


def region_words(region: Region) -> str:
    """Where a region sits, as a reader would look for it: "top left", "middle", …"""
    left, top, right, bottom = region
    x, y = (left + right) / 2, (top + bottom) / 2
    # A region spanning most of the height (or width) says nothing about that direction.
    row = "top" if y < 1 / 3 else "bottom" if y > 2 / 3 else "middle"
    column = "left" if x < 1 / 3 else "right" if x > 2 / 3 else "centre"
    row = "" if bottom - top > 0.6 else row
    column = "" if right - left > 0.6 else column
    if row == "middle" and column == "centre":
        return "centre"
    return f"{row} {column}".strip() or "whole page"


def time_text(seconds: float) -> str:
    """A moment of a recording as people write it: "0:07", "12:04", "1:02:09"."""
    whole = max(0, int(seconds))
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def time_span_text(start: float, end: float | None) -> str:
    """Where in a recording a passage is: "12:04–12:37" (or "12:04" when it has no end)."""
    if end is None or time_text(end) == time_text(start):
        return time_text(start)
    return f"{time_text(start)}–{time_text(end)}"


def _low(a: _N | None, b: _N | None) -> _N | None:
    return b if a is None else a if b is None else min(a, b)


def _high(a: _N | None, b: _N | None) -> _N | None:
    return b if a is None else a if b is None else max(a, b)


def _bounding(a: Region | None, b: Region | None) -> Region | None:
    if a is None or b is None:
        return b if a is None else a
    return (min(a[0], b[0]), min(a[1], b[1]), max(a[2], b[2]), max(a[3], b[3]))


@dataclass(frozen=True)
class Location:
    """Where a passage is in its document: one value from the parser's block to the citation.

    `page` is 1-based for paged formats. `line_start`/`line_end` are 1-based and inclusive, in
    the source's own coordinates: lines of the file for text formats, lines of the page's
    extracted text for PDF, paragraph numbers for DOCX. `char_start`/`char_end` are offsets
    into `ParsedDocument.text` (a chunk has them; a block's follow from its place in the text).
    Text read by OCR has its `region` on the page and the engine's confidence (0-1) in it; text
    transcribed from a recording has the seconds it was spoken between.
    """

    page: int | None = None
    line_start: int | None = None
    line_end: int | None = None
    char_start: int | None = None
    char_end: int | None = None
    region: Region | None = None
    ocr_confidence: float | None = None
    time_start: float | None = None
    time_end: float | None = None

    def union(self, other: Location) -> Location:
        """The location of a passage holding both: spans widened to cover each, the region
        their bounding box, the lower confidence (one uncertain part marks the whole). A
        passage stays on one page, so the page is this one's when it has one."""
        return Location(
            page=self.page if self.page is not None else other.page,
            line_start=_low(self.line_start, other.line_start),
            line_end=_high(self.line_end, other.line_end),
            char_start=_low(self.char_start, other.char_start),
            char_end=_high(self.char_end, other.char_end),
            region=_bounding(self.region, other.region),
            ocr_confidence=_low(self.ocr_confidence, other.ocr_confidence),
            time_start=_low(self.time_start, other.time_start),
            time_end=_high(self.time_end, other.time_end),
        )

    @property
    def region_text(self) -> str | None:
        """The region as stored and shown on the wire (see `region_text`)."""
        return None if self.region is None else region_text(self.region)

    @property
    def ocr_uncertain(self) -> bool:
        return self.ocr_confidence is not None and self.ocr_confidence < LOW_OCR_CONFIDENCE

    def where(self, page_word: str = "page", lines: bool = False) -> list[str]:
        """How a person finds the passage, part by part: "page 3", "lines 4–9" (with `lines`),
        "top left", "12:04–12:37"."""
        parts = []
        if self.page:
            parts.append(f"{page_word} {self.page}")
        if lines and self.line_start:
            parts.append(
                f"lines {self.line_start}–{self.line_end}"
                if self.line_end is not None and self.line_end != self.line_start
                else f"line {self.line_start}"
            )
        if self.region is not None:
            parts.append(region_words(self.region))
        if self.time_start is not None:
            parts.append(time_span_text(self.time_start, self.time_end))
        return parts

    def span_columns(self) -> tuple[int | None, int | None, int | None, int | None, int | None]:
        """page, line_start, line_end, char_start, char_end: the chunks table's columns."""
        return self.page, self.line_start, self.line_end, self.char_start, self.char_end

    def reading_columns(self) -> tuple[str | None, float | None, float | None, float | None]:
        """region, ocr_confidence, time_start, time_end: how the text was read, as stored."""
        return self.region_text, self.ocr_confidence, self.time_start, self.time_end

    def flat(self) -> dict[str, Any]:
        """The flat fields a citation shows on the wire (API, MCP, stored answers): the
        character offsets stay inside, the region is its text."""
        return {
            "page": self.page,
            "line_start": self.line_start,
            "line_end": self.line_end,
            "region": self.region_text,
            "ocr_confidence": self.ocr_confidence,
            "time_start": self.time_start,
            "time_end": self.time_end,
        }


NOWHERE = Location()


@dataclass(frozen=True)
class Block:
    """One structural unit of a parsed document, in reading order, and where it is (no character
    offsets: they follow from its place in `ParsedDocument.text`). A heading has `level` >= 1."""

    kind: BlockKind
    text: str
    level: int = 0
    location: Location = NOWHERE


@dataclass(frozen=True)
class Attachment:
    """A file carried inside another (an e-mail's attachment), added as a document of its own."""

    name: str
    data: bytes
    mime_type: str | None = None


@dataclass(frozen=True)
class ParsedDocument:
    title: str | None
    blocks: tuple[Block, ...]
    metadata: dict[str, Any] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = ()

    @property
    def text(self) -> str:
        """The extracted text as shown in previews: blocks joined by blank lines."""
        return "\n\n".join(b.text for b in self.blocks)


@dataclass(frozen=True)
class ChunkDraft:
    """A passage ready to embed and index; its character offsets are into
    `ParsedDocument.text`."""

    index: int
    text: str
    heading_path: tuple[str, ...]
    location: Location
    token_count: int
    content_hash: str

    def __post_init__(self) -> None:
        if self.location.char_start is None or self.location.char_end is None:
            raise ValueError("a chunk draft's location needs its character offsets")

    # A draft always has its offsets (checked above): read as plain ints.
    @property
    def char_start(self) -> int:
        return self.location.char_start or 0

    @property
    def char_end(self) -> int:
        return self.location.char_end or 0


@dataclass(frozen=True)
class Brain:
    id: int
    name: str
    embedder_model: str | None
    embedder_dims: int | None
    created_at: str
    visibility: Visibility = "restricted"


@dataclass(frozen=True)
class Document:
    id: int
    brain_id: int
    kind: DocumentKind
    name: str
    title: str | None
    source_url: str | None
    mime_type: str | None
    size_bytes: int
    content_hash: str
    status: DocumentStatus
    status_reason: str | None
    chunk_count: int
    tags: tuple[str, ...]
    metadata: dict[str, Any]
    created_at: str
    updated_at: str
    # Where a file added from a folder lives (absolute): adding that path again updates this
    # document. None for uploads, notes, web pages and pages.
    source_path: str | None = None
    # Its chunks are written and found by their words, but some have no vector yet: the
    # embedding stage is still to come (status processing) or failed (status failed).
    vectors_pending: bool = False
    # What indexing it is doing now, while it is being worked on; None otherwise.
    progress: Progress | None = None
    # The code of the error that failed it (`loci.errors`), while `status` is failed.
    failure_code: str | None = None

    # The language most of its text is in (ISO 639-1, detected when indexed); None: unknown.
    language: str | None = None
    # A followed folder's file that was deleted while its source keeps deleted files'
    # documents: when that was found (None while the file is there, or for any other
    # document). The document stays searchable, marked; the file coming back clears it.
    gone_at: str | None = None
    # An imported or synced item's identity in the place it came from ("notion:<page id>"):
    # importing or syncing it again updates this document. None for anything else.
    origin: str | None = None


WaitUntil = Literal["searchable", "ready"]  # how far a caller waits for its documents


def is_settled(document: Document) -> bool:
    """Its indexing is over: ready (fully indexed) or failed."""
    return document.status != "processing"


def is_searchable(document: Document) -> bool:
    """Its words find it (its text stage is done, its vectors may follow), or it failed."""
    return document.status != "processing" or document.vectors_pending


@dataclass(frozen=True)
class Progress:
    """How far a document's indexing has come: OCR's page `done` of `total`, embedding's chunk
    `done` of `total` (of the chunks that had no vector when its embedding began)."""

    stage: ProgressStage
    done: int
    total: int

    def as_json(self) -> dict[str, Any]:
        return {"stage": self.stage, "done": self.done, "total": self.total}

    @classmethod
    def of(cls, value: Any) -> Progress | None:
        """A stored progress (its JSON object), or None for anything else."""
        if not isinstance(value, dict) or value.get("stage") not in PROGRESS_STAGES:
            return None
        done, total = value.get("done"), value.get("total")
        if not isinstance(done, int) or not isinstance(total, int):
            return None
        return cls(value["stage"], done, total)


PROGRESS_STAGES: tuple[ProgressStage, ...] = ("parse", "ocr", "chunk", "embed")


@dataclass(frozen=True)
class DocumentVersion:
    """Content a document had before it was replaced in place (a file edited and synced or
    added again, a note rewritten, a web page fetched again): its bytes stay a blob this
    points at. `number` counts a document's contents from 1; the current one is the next."""

    document_id: int
    number: int
    name: str
    mime_type: str | None
    size_bytes: int
    content_hash: str
    saved_at: str  # when this content became the document's
    replaced_at: str  # when newer content took its place


@dataclass(frozen=True)
class DocumentListing:
    """What a list of documents filters and sorts by, without a document's JSON columns (its
    tags and metadata): read for every document of a large brain, decoded cheaply."""

    id: int
    kind: DocumentKind
    name: str
    title: str | None
    mime_type: str | None
    size_bytes: int
    status: DocumentStatus
    source_url: str | None = None
    source_path: str | None = None


@dataclass(frozen=True)
class Chunk:
    id: int
    document_id: int
    index: int
    text: str
    heading_path: tuple[str, ...]
    location: Location
    token_count: int
    content_hash: str
    # The key of the chunk's vector: sha256 of what was embedded (context line and text).
    embed_hash: str = ""
    language: str | None = None  # ISO 639-1 of this passage (its document's unless it differs)


@dataclass(frozen=True)
class Citation:
    document_id: int
    name: str
    title: str | None
    chunk_index: int
    location: Location
    heading_path: tuple[str, ...]
    source_url: str | None

    def flat(self) -> dict[str, Any]:
        """The citation as the wire shows it: flat, its location's fields beside the rest."""
        return {
            "document_id": self.document_id,
            "name": self.name,
            "title": self.title,
            "chunk_index": self.chunk_index,
            **self.location.flat(),
            "heading_path": list(self.heading_path),
            "source_url": self.source_url,
        }


@dataclass(frozen=True)
class Hit:
    chunk_id: int
    citation: Citation
    text: str
    snippet: str
    score: float
    text_rank: int | None
    vector_rank: int | None
    text_score: float | None
    vector_score: float | None
    # Graph expansion: the page ids from a search hit to this one, when a link brought it in
    # or lifted it (see `loci.graph.linked_search`).
    graph_path: tuple[str, ...] = ()
    # True when a reranker ordered the hits: `score` is then its relevance, not the fusion's.
    reranked: bool = False
    # Where the query's terms are in `snippet`: (start, end) character offsets.
    highlights: tuple[tuple[int, int], ...] = ()
    # A search by document: the document's other passages that ranked, best first
    # (`loci.search.grouping`); a hit under another has none.
    more: tuple[Hit, ...] = ()
    # The passage has no vector yet (its document's embedding stage is still to come): it was
    # found by its words alone, and a hybrid search scored it by the text leg alone.
    vectors_pending: bool = False
    # How close in meaning, read against the brain (`loci.search.closeness`): k when only one
    # pair of unrelated passages of the brain in 10^k is as close. None: not scored by the
    # vector leg, or no reading for this embedder in a brain this small.
    closeness: float | None = None
    # Its document's file was deleted from its folder (kept, marked: see `Document.gone_at`).
    gone_at: str | None = None

    @property
    def matched_by(self) -> str:
        if self.text_rank is None and self.vector_rank is None:
            return "graph" if self.graph_path else "none"
        if self.text_rank is not None and self.vector_rank is not None:
            found = "both"
        else:
            found = "text" if self.text_rank is not None else "vector"
        return f"{found}+graph" if self.graph_path else found


@dataclass(frozen=True)
class PassageContext:
    """A passage's cosine to a query, read beside its document's opening (its first passage,
    embedded under the document's title): what the document says it is about
    (`loci.search.openings`)."""

    cosine: float  # the query's cosine to the passage
    opening: int  # the document's first passage
    opening_cosine: float  # the query's cosine to it
    coherence: float  # the passage's cosine to it (1 for the opening itself)


@dataclass(frozen=True)
class TextCeiling:
    """What BM25 can say about a query in a brain: the best score a passage could reach (each
    matching term's idf times k1 + 1) and the idf of its most specific matching term, out of a
    brain of `rows` passages (`loci.search.confidence.text_trust`)."""

    score: float
    best_idf: float
    rows: int


@dataclass(frozen=True)
class DocumentTextScores:
    """BM25 of whole documents for a query, given per passage: what the document each passage
    belongs to scores when read whole (`loci.store.document_terms`,
    `loci.search.document_words`)."""

    of_passage: dict[int, float]  # chunk id -> its document's BM25 (0: no term of the query)
    ceiling: float  # the best a document could score: each matching term at saturation


@dataclass(frozen=True)
class Job:
    id: int
    brain_id: int
    document_id: int
    kind: str
    status: JobStatus
    attempts: int
    last_error: str | None
    run_after: float
    lease_owner: str | None
    lease_expires: float | None
    stage: JobStage = "text"


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions every search leg applies inside its query, not after it."""

    name: str | None = None  # exact file name or title; `*` and `?` glob
    kinds: tuple[DocumentKind, ...] = ()
    tags: tuple[str, ...] = ()  # all of them
    created_after: str | None = None  # ISO date or datetime
    created_before: str | None = None
    document_ids: tuple[int, ...] = ()

    @property
    def empty(self) -> bool:
        return not (
            self.name
            or self.kinds
            or self.tags
            or self.created_after
            or self.created_before
            or self.document_ids
        )


@dataclass(frozen=True)
class NewDocument:
    kind: DocumentKind
    name: str
    title: str | None
    source_url: str | None
    mime_type: str | None
    size_bytes: int
    content_hash: str
    tags: tuple[str, ...] = ()
    metadata: dict[str, Any] = field(default_factory=dict)
    source_path: str | None = None
    origin: str | None = None


@dataclass(frozen=True)
class IndexedChunk:
    """A chunk draft with the hash of exactly what was embedded for it."""

    draft: ChunkDraft
    embed_hash: str
    language: str | None = None  # ISO 639-1, as detected (`loci.language`); None: unknown


@dataclass(frozen=True)
class IndexWrite:
    """One document's text index as the text stage writes it (`Store.replace_indexes`)."""

    document_id: int
    chunks: Sequence[IndexedChunk]
    text: str
    title: str | None
    status_reason: str | None
    # The content it was read from. A document whose content is other by the time of the
    # write is left as it is: its new content has a job of its own, which may even have run
    # already (`Store.replace_indexes`). None: written whatever the document holds.
    content_hash: str | None = None


@dataclass(frozen=True)
class BrainStats:
    documents_by_status: dict[str, int]
    documents_by_kind: dict[str, int]
    chunks: int
    jobs_by_status: dict[str, int]
    bytes_stored: int
    # Documents found by their words whose vectors are still to come (status processing).
    vectors_pending: int
    # Jobs queued or running, by the stage they are at ("text", "vectors"): the queue's depth.
    queue_by_stage: dict[str, int]


# followed folders -------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """A folder a brain follows: `loci sync` keeps the documents of its files in step with it
    (`mode` "files"), or its Markdown as graph pages, both ways ("pages"). `last_report` is
    what the last sync found (counts, per-file failures, conflicts), None before one."""

    id: int
    brain_id: int
    path: str  # absolute and resolved
    include: tuple[str, ...]
    exclude: tuple[str, ...]
    on_delete: OnDelete
    created_at: str
    last_sync_at: str | None
    last_report: dict[str, Any] | None
    mode: SourceMode = "files"
    # A place that is not a folder (`kind` "feed", "page", ...; `path` is then its address),
    # run by the worker every `every_s` seconds (`loci.service.scheduled`). `next_run_at` and
    # `lease_until` are epoch seconds on the database's clock; `failures` counts failed runs
    # in a row (the backoff), `last_error` says why the last one failed (None: it worked).
    kind: str = "folder"
    every_s: float | None = None
    next_run_at: float | None = None
    lease_owner: str | None = None
    lease_until: float | None = None
    failures: int = 0
    last_error: str | None = None
    state: dict[str, Any] = field(default_factory=dict)  # the upstream's, between runs
    options: dict[str, Any] = field(default_factory=dict)
    secret: str | None = field(default=None, repr=False)  # sealed (`SecretBox`)

    @property
    def scheduled(self) -> bool:
        return self.kind != "folder"


@dataclass(frozen=True)
class Schedule:
    """What a source that is not a folder is: its `kind`, how often it runs (`every_s`), its
    kind's options and its credential, sealed."""

    kind: str
    every_s: float | None = None
    options: Mapping[str, Any] = field(default_factory=dict)
    secret: str | None = None


WatchMode = Literal["events", "poll"]  # native file system events, or polling the folder


@dataclass(frozen=True)
class WatchLease:
    """Which process watches a source, how, and for how much longer unless it renews."""

    source_id: int
    brain_id: int
    owner: str
    mode: WatchMode
    remaining_s: float  # negative once it has run out
