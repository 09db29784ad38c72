"""What the document and answer tools return: structured results, chosen field by field for a
model to read (the graph tools' are in `loci.mcp.graph_outputs`).

Each model is built from a domain object by its `of`; nothing here carries a token, a hash of
one, a user's model key or a server setting — only what the brain holds and where it came from.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from loci.ingest.preflight import Preflight
from loci.mcp.preflight_outputs import DryRun
from loci.models import Brain, Document, Hit
from loci.search.related import Related
from loci.wire.answer import ClaimOut


def doc_uri(brain: str, document_id: int) -> str:
    return f"loci://{brain}/docs/{document_id}"


class MorePassage(BaseModel):
    """Another passage of the same document that search ranked."""

    passage: int = Field(description="the passage's index; read(document_id, passage=…) shows it")
    page: int | None
    line_start: int | None
    line_end: int | None
    heading_path: list[str]
    snippet: str
    highlights: list[tuple[int, int]] = Field(
        description="where the query's terms are in the snippet: [start, end] offsets in "
        "characters (Unicode code points), end exclusive, in order"
    )
    text: str
    score: float

    @classmethod
    def of(cls, hit: Hit) -> MorePassage:
        at = hit.citation.location
        return cls(
            passage=hit.citation.chunk_index,
            page=at.page,
            line_start=at.line_start,
            line_end=at.line_end,
            heading_path=list(hit.citation.heading_path),
            snippet=hit.snippet,
            highlights=list(hit.highlights),
            text=hit.text,
            score=round(hit.score, 4),
        )


class Passage(BaseModel):
    """A passage with its citation: which file, page, lines and section it comes from."""

    document_id: int
    name: str = Field(description="file name (or a page's or note's name)")
    title: str | None
    page: int | None
    line_start: int | None
    line_end: int | None
    heading_path: list[str]
    source_url: str | None
    region: str | None = Field(
        description="for text read by OCR: where on the page, as left,top,right,bottom fractions"
    )
    ocr_confidence: float | None = Field(description="for text read by OCR: 0–1; below 0.6 unsure")
    time_start: float | None = Field(
        description="for a transcribed recording: seconds from its start to the passage"
    )
    time_end: float | None = Field(description="for a transcribed recording: where it ends (s)")
    passage: int = Field(description="the passage's index; read(document_id, passage=…) shows it")
    snippet: str = Field(description="an excerpt of the passage, as plain text")
    highlights: list[tuple[int, int]] = Field(
        description="where the query's terms are in the snippet: [start, end] offsets in "
        "characters (Unicode code points), end exclusive, in order"
    )
    text: str
    score: float
    uri: str = Field(description="the document as an MCP resource")
    passages: list[MorePassage] = Field(
        default_factory=list,
        description="a search hit is a document: its other passages that ranked, best first",
    )
    vectors_pending: bool = Field(
        default=False,
        description="true: found by its words alone; its document was just added and its "
        "meaning is not indexed yet",
    )
    gone_at: str | None = Field(
        default=None,
        description="set: the passage's file was deleted from its folder on that date (the "
        "document is kept as a record); say so when citing it",
    )

    @classmethod
    def of(cls, hit: Hit, brain: Brain) -> Passage:
        citation = hit.citation.flat()
        passage = citation.pop("chunk_index")
        return cls(
            **citation,
            passage=passage,
            snippet=hit.snippet,
            highlights=list(hit.highlights),
            text=hit.text,
            score=round(hit.score, 4),
            uri=doc_uri(brain.name, hit.citation.document_id),
            passages=[MorePassage.of(p) for p in hit.more],
            vectors_pending=hit.vectors_pending,
            gone_at=hit.gone_at,
        )


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


class Citation(BaseModel):
    number: int = Field(description="the [n] the answer cites")
    brain: str | None = Field(default=None, description="the brain the passage is in")
    document_id: int
    name: str
    where: str = Field(description="file, page and section, as a person reads it")
    page: int | None
    line_start: int | None
    line_end: int | None
    source_url: str | None
    snippet: str

    @classmethod
    def of(cls, citation: dict[str, Any]) -> Citation:
        return cls(
            number=citation["number"],
            brain=citation.get("brain"),
            document_id=citation["document_id"],
            name=citation["name"],
            where=citation["where"],
            page=citation["page"],
            line_start=citation["line_start"],
            line_end=citation["line_end"],
            source_url=citation["source_url"],
            snippet=citation["snippet"],
        )


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


class FileInfo(BaseModel):
    id: int
    name: str
    title: str | None
    kind: str = Field(description="file, web, note, page, evidence or item")
    status: str = Field(
        description="processing (not searchable yet, or, with vectors_pending, searchable by "
        "its words only), ready or failed"
    )
    vectors_pending: bool = Field(
        default=False, description="its text is indexed, its meaning (vectors) not yet"
    )
    gone_at: str | None = Field(
        default=None,
        description="set: its file was deleted from the folder it was synced from on that "
        "date; the document is kept (the folder keeps deleted files' documents)",
    )
    status_reason: str | None
    size_bytes: int
    tags: list[str]
    source_url: str | None
    created_at: str
    uri: str

    @classmethod
    def of(cls, document: Document, brain: Brain) -> FileInfo:
        return cls(
            id=document.id,
            name=document.name,
            title=document.title,
            kind=document.kind,
            status=document.status,
            vectors_pending=document.vectors_pending,
            gone_at=document.gone_at,
            status_reason=document.status_reason,
            size_bytes=document.size_bytes,
            tags=list(document.tags),
            source_url=document.source_url,
            created_at=document.created_at,
            uri=doc_uri(brain.name, document.id),
        )


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
