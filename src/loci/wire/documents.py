"""Documents: files and web pages added, their text and chunks."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.failure_advice import advice_for
from loci.ingest.formats import Format, document_format
from loci.models import (
    Brain,
    Document,
    DocumentKind,
    DocumentStatus,
    ProgressStage,
)
from loci.search.related import Related
from loci.service.reading import Passage
from loci.wire.common import CONFIDENCE_HELP, REGION_HELP, TIME_END_HELP, TIME_START_HELP, ErrorOut
from loci.wire.mirror import Mirror, shown


class FailureOut(BaseModel):
    """Why a document failed, and what a person can do about it."""

    code: str | None = Field(description="the error's code (`no_parser`, `encrypted`, …)")
    retry_helps: bool = Field(
        description="true when trying again may work (a server that did not answer); false "
        "when the file or the server's setup must change first"
    )
    what_to_do: str

    @classmethod
    def of(cls, document: Document) -> FailureOut | None:
        if document.status != "failed":
            return None
        advice = advice_for(document.failure_code)
        return cls(
            code=document.failure_code,
            retry_helps=advice.retry_helps,
            what_to_do=advice.what_to_do,
        )


class ProgressOut(Mirror):
    """What indexing a document is doing now."""

    stage: ProgressStage = Field(
        description="parse (reading the file), ocr (reading scanned pages), chunk (cutting "
        "it into passages) or embed (computing the passages' vectors)"
    )
    done: int = Field(description="units done: pages for parse and ocr, chunks for embed")
    total: int = Field(
        description="units in all: the file's pages; for embed, the chunks that had no vector "
        "when embedding began"
    )


class DocumentOut(BaseModel):
    id: int
    brain: str
    kind: DocumentKind
    format: Format = Field(description="what it is: pdf, word, image, web, note, …")
    name: str
    title: str | None
    source_url: str | None
    source_path: str | None = Field(
        description="the file on the server it was added from (a followed folder's file)"
    )
    mime_type: str | None
    size_bytes: int
    content_hash: str
    status: DocumentStatus = Field(
        description="processing until fully indexed (words and vectors), then ready; failed "
        "with status_reason. A processing document with vectors_pending is already found by "
        "its words"
    )
    status_reason: str | None
    failure: FailureOut | None = Field(description="while `status` is failed")
    chunk_count: int
    tags: list[str]
    color: str | None
    created_at: str
    updated_at: str
    vectors_pending: bool = Field(
        description="its passages are written and found by text search (and by hybrid "
        "search, on their words alone), but some have no vector yet: embedding follows"
    )
    progress: ProgressOut | None = Field(
        description="what indexing it is doing, while a worker is on it (updated a few times "
        "a second at most); null when it waits in the queue, is ready or failed. An embed "
        "progress stays while its vectors wait for their turn"
    )
    language: str | None = Field(
        default=None,
        description="the language most of its text is in (ISO 639-1, detected when indexed)",
    )
    gone_at: str | None = Field(
        default=None,
        description="when its file was found deleted from the folder it was synced from, where "
        "that folder keeps deleted files' documents (`--keep-deleted`): it stays searchable, "
        "marked; null while the file is there (the file coming back clears it) and for any "
        "other document",
    )

    @classmethod
    def of(cls, document: Document, brain: Brain) -> DocumentOut:
        color = document.metadata.get("color")
        return shown(
            cls,
            document,
            brain=brain.name,
            format=document_format(document),
            failure=FailureOut.of(document),
            color=color if isinstance(color, str) else None,
        )


class AddedOut(BaseModel):
    document: DocumentOut
    deduped: bool = Field(description="true: these exact bytes were already in the brain")
    refreshed: bool = Field(
        default=False,
        description="true: a web page kept before from this address had changed; the same "
        "document (same id) now holds the new text",
    )


class UploadResultOut(BaseModel):
    name: str
    document: DocumentOut | None = None
    deduped: bool = False
    error: ErrorOut | None = None


class UploadOut(BaseModel):
    results: list[UploadResultOut]


class TextOut(BaseModel):
    document_id: int
    text: str
    truncated: bool


class ChunkOut(Mirror):
    id: int
    index: int
    text: str
    heading_path: list[str]
    page: int | None
    line_start: int | None
    line_end: int | None
    token_count: int
    region: str | None = Field(default=None, description=REGION_HELP)
    ocr_confidence: float | None = Field(default=None, description=CONFIDENCE_HELP)
    time_start: float | None = Field(default=None, description=TIME_START_HELP)
    time_end: float | None = Field(default=None, description=TIME_END_HELP)
    char_start: int | None = Field(
        default=None, description="where the passage starts in the document's extracted text"
    )
    char_end: int | None = Field(default=None, description="where it ends (exclusive)")
    language: str | None = Field(
        default=None,
        description="the passage's language (ISO 639-1), its document's unless it differs",
    )


class PassageMarksOut(BaseModel):
    """A passage and where to mark it in the source: `boxes` on its PDF page or image."""

    chunk: ChunkOut | None = Field(description="null: the document at its start")
    page_count: int | None = Field(description="a PDF's pages; null for anything else")
    boxes: list[tuple[float, float, float, float]] = Field(
        description="left, top, right, bottom as fractions of the page or image (origin top "
        "left); empty when the passage is text to be marked by its characters"
    )

    @classmethod
    def of(cls, passage: Passage) -> PassageMarksOut:
        return cls(
            chunk=None if passage.chunk is None else ChunkOut.of(passage.chunk),
            page_count=passage.page_count,
            boxes=[
                (round(left, 4), round(top, 4), round(right, 4), round(bottom, 4))
                for left, top, right, bottom in passage.boxes
            ],
        )


class RelatedOut(BaseModel):
    document: DocumentOut
    score: float = Field(description="cosine of its closest passage to this document's meaning")
    passage: ChunkOut = Field(description="its passage closest to this document")

    @classmethod
    def of(cls, related: Related, brain: Brain) -> RelatedOut:
        return cls(
            document=DocumentOut.of(related.document, brain),
            score=round(related.score, 4),
            passage=ChunkOut.of(related.passage),
        )
