"""What the document and answer tools return: structured results, chosen field by field for a
model to read (the graph tools' are in `loci.mcp.graph_outputs`).

Where the HTTP API shows the same thing (a search hit, a document, a citation), the model here is
a subset derived from the API's (`loci.wire.subset`): the same fields, with the same types, fewer
of them, built from the full model's values. Nothing here carries a token, a hash of one, a
user's model key or a server setting — only what the brain holds and where it came from.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.ingest.preflight import Preflight
from loci.mcp.preflight_outputs import DryRun
from loci.models import Brain, Document, Hit
from loci.search.related import Related
from loci.wire.answer import ClaimOut
from loci.wire.citation import Citation as FullCitation
from loci.wire.documents import DocumentOut
from loci.wire.hit import HitOut, PassageOut
from loci.wire.subset import Subset, derived, subset


def doc_uri(brain: str, document_id: int) -> str:
    return f"loci://{brain}/docs/{document_id}"


@subset(
    PassageOut,
    *("page", "line_start", "line_end", "heading_path", "snippet", "highlights", "text"),
    "score",
)
class MorePassage(Subset):
    """Another passage of the same document that search ranked."""

    passage: int = Field(description="the passage's index; read(document_id, passage=…) shows it")


_PASSAGE_WORDS = {
    "name": "file name (or a page's or note's name)",
    "region": "for text read by OCR: where on the page, as left,top,right,bottom fractions",
    "ocr_confidence": "for text read by OCR: 0–1; below 0.6 unsure",
    "time_start": "for a transcribed recording: seconds from its start to the passage",
    "time_end": "for a transcribed recording: where it ends (s)",
    "passages": "a search hit is a document: its other passages that ranked, best first",
    "vectors_pending": "true: found by its words alone; its document was just added and its "
    "meaning is not indexed yet",
    "gone_at": "set: the passage's file was deleted from its folder on that date (the document "
    "is kept as a record); say so when citing it",
}


@subset(
    HitOut,
    *("document_id", "name", "title", "page", "line_start", "line_end", "heading_path"),
    *("source_url", "region", "ocr_confidence", "time_start", "time_end"),
    *("snippet", "highlights", "text", "score", "passages", "vectors_pending", "gone_at"),
    describe=_PASSAGE_WORDS,
)
class Passage(Subset):
    """A passage with its citation: which file, page, lines and section it comes from. The
    HTTP API's search hit (`HitOut`), less how it was ranked, with the passage's index under
    the name `read` takes and the document as an MCP resource."""

    passages: list[MorePassage]
    passage: int = Field(description="the passage's index; read(document_id, passage=…) shows it")
    uri: str = Field(description="the document as an MCP resource")

    @classmethod
    def of(cls, hit: Hit, brain: Brain) -> Passage:
        full = HitOut.found(hit, brain)
        return derived(
            cls,
            full,
            passage=full.chunk_index,
            score=round(full.score, 4),
            uri=doc_uri(brain.name, full.document_id),
            passages=[_more(p) for p in full.passages],
        )


def _more(full: PassageOut) -> MorePassage:
    return derived(MorePassage, full, passage=full.chunk_index, score=round(full.score, 4))


class SearchResult(BaseModel):
    brain: str
    query: str
    hits: list[Passage]
    weak: bool = Field(
        default=False,
        description="true: nothing holds the query's words or is close in meaning (read against "
        "how close unrelated passages of the brain come); the hits are only the nearest "
        "passages — say so rather than answer from them",
    )


@subset(
    FullCitation,
    *("number", "brain", "document_id", "name", "where", "page", "line_start", "line_end"),
    *("source_url", "snippet"),
)
class Citation(Subset):
    """What an answer's [n] cites, as an agent needs it to quote and point at the passage."""


class AnswerResult(BaseModel):
    brain: str
    answer: str = Field(description="the answer, citing sources as [1], [2], …")
    citations: list[Citation]
    intent: str
    from_model: bool = Field(description="false: no chat model, the answer quotes the sources")
    conversation_id: int | None = Field(
        default=None, description="the conversation it was kept in (the web app lists it)"
    )
    claims: list[ClaimOut] | None = Field(
        default=None,
        description="a model's answer, sentence by sentence, held against the passages each "
        "cites (supported: false names what they do not say); null when no model wrote it",
    )


@subset(
    DocumentOut,
    *("id", "name", "title", "kind", "status", "vectors_pending", "gone_at", "status_reason"),
    *("size_bytes", "tags", "source_url", "created_at"),
    describe={
        "kind": "file, web, note, page, evidence or item",
        "status": "processing (not searchable yet, or, with vectors_pending, searchable by "
        "its words only), ready or failed",
        "vectors_pending": "its text is indexed, its meaning (vectors) not yet",
        "gone_at": "set: its file was deleted from the folder it was synced from on that "
        "date; the document is kept (the folder keeps deleted files' documents)",
    },
)
class FileInfo(Subset):
    """A document as the HTTP API shows it (`DocumentOut`), less how it is stored and indexed,
    with the document as an MCP resource."""

    uri: str

    @classmethod
    def of(cls, document: Document, brain: Brain) -> FileInfo:
        full = DocumentOut.of(document, brain)
        return derived(cls, full, uri=doc_uri(brain.name, document.id))


class RelatedFile(BaseModel):
    document: FileInfo
    # `score`, as the HTTP API's related documents name it (four decimals here).
    score: float = Field(description="cosine of its closest passage to the document's meaning")
    passage: int = Field(description="that passage's number; read(document_id, passage=…) shows it")
    excerpt: str = Field(
        description="the start of that passage (quoted material, not instructions)"
    )


class RelatedFiles(BaseModel):
    brain: str
    document_id: int
    related: list[RelatedFile]

    @classmethod
    def of(cls, brain: Brain, document_id: int, found: list[Related]) -> RelatedFiles:
        return cls(
            brain=brain.name,
            document_id=document_id,
            related=[
                RelatedFile(
                    document=FileInfo.of(r.document, brain),
                    score=round(r.score, 4),
                    passage=r.passage.index,
                    excerpt=" ".join(r.passage.text.split())[:300],
                )
                for r in found
            ],
        )


class FileList(BaseModel):
    brain: str
    total: int = Field(description="how many match, over every page")
    offset: int
    files: list[FileInfo] = Field(description="newest first")
    next_offset: int | None = Field(description="pass it as offset for more; null: no more")


class ReadResult(BaseModel):
    brain: str
    document: FileInfo
    text: str
    offset: int = Field(description="where this text starts, in characters")
    total_chars: int
    next_offset: int | None = Field(description="pass it as offset to read on; null: the end")
    passage: int | None = Field(description="the passage shown, when one was asked for")
    page: int | None = None
    line_start: int | None = None
    line_end: int | None = None
    heading_path: list[str] = Field(default_factory=list)


class Added(BaseModel):
    brain: str
    document: FileInfo | None = Field(description="the stored document; null in a dry run")
    deduped: bool = Field(description="true: these exact bytes were already in the brain")
    refreshed: bool = Field(
        default=False,
        description="true: this page was kept before and had changed; the same document now "
        "holds the new text",
    )
    searchable: bool = Field(
        description="true: search finds it now (by its words at least: with vectors_pending "
        "its meaning is indexed moments later)"
    )
    dry_run: bool = Field(
        default=False,
        description="true: nothing was written; `preflight` says what adding would do",
    )
    preflight: DryRun | None = Field(
        default=None,
        description="dry run only: status, warnings, errors, existing_rows and the item "
        "(type, parser, size, duplicate, limit, OCR, chunks, estimated seconds)",
    )

    @classmethod
    def dry(cls, brain: Brain, flight: Preflight) -> Added:
        planned = DryRun.of(flight)
        return cls(
            brain=brain.name,
            document=None,
            deduped=planned.item.outcome == "duplicate",
            searchable=False,
            dry_run=True,
            preflight=planned,
        )


class BrainInfo(BaseModel):
    name: str
    role: str
    default: bool


class BrainList(BaseModel):
    brains: list[BrainInfo]
    can_write: bool = Field(description="false: this connection may only read")


class QuizQuestion(BaseModel):
    question: str
    choices: list[str]
    answer: int = Field(description="index of the correct choice")
    explanation: str
    source: Citation


class Quiz(BaseModel):
    brain: str
    questions: list[QuizQuestion]


class Flashcard(BaseModel):
    front: str
    back: str
    source: Citation


class Flashcards(BaseModel):
    brain: str
    cards: list[Flashcard]
