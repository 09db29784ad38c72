"""Documents: files and web pages added, their text and chunks."""

from __future__ import annotations

from typing import Self

from pydantic import BaseModel, Field, model_validator

from loci.api.schemas.common import (
    CONFIDENCE_HELP,
    REGION_HELP,
    TIME_END_HELP,
    TIME_START_HELP,
    ErrorOut,
    RequestIn,
)
from loci.mirror import Mirror
from loci.models import Brain, Document, DocumentKind, DocumentStatus, Progress, ProgressStage
from loci.search.related import Related


class ProgressOut(BaseModel):
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

    @classmethod
    def of(cls, progress: Progress) -> ProgressOut:
        return cls(stage=progress.stage, done=progress.done, total=progress.total)


class DocumentOut(BaseModel):
    id: int
    brain: str
    kind: DocumentKind
    name: str
    title: str | None
    source_url: str | None
    mime_type: str | None
    size_bytes: int
    content_hash: str
    status: DocumentStatus = Field(
        description="processing until fully indexed (words and vectors), then ready; failed "
        "with status_reason. A processing document with vectors_pending is already found by "
        "its words"
    )
    status_reason: str | None
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
        return cls(
            id=document.id,
            brain=brain.name,
            kind=document.kind,
            name=document.name,
            title=document.title,
            source_url=document.source_url,
            mime_type=document.mime_type,
            size_bytes=document.size_bytes,
            content_hash=document.content_hash,
            status=document.status,
            status_reason=document.status_reason,
            chunk_count=document.chunk_count,
            tags=list(document.tags),
            color=color if isinstance(color, str) else None,
            created_at=document.created_at,
            updated_at=document.updated_at,
            vectors_pending=document.vectors_pending,
            progress=ProgressOut.of(document.progress) if document.progress else None,
            gone_at=document.gone_at,
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


class UrlIn(RequestIn):
    url: str = Field(min_length=1, max_length=4096)
    tags: list[str] = Field(default_factory=list, max_length=50)
    markdown: str | None = Field(
        default=None,
        min_length=1,
        max_length=20_000_000,
        description="the page as the browser shows it, in Markdown (a browser extension's "
        "extraction): kept as is and cited to `url`, which is then not fetched",
    )
    title: str | None = Field(
        default=None, max_length=300, description="the page's title, with `markdown`"
    )

    @model_validator(mode="after")
    def _title_needs_markdown(self) -> Self:
        # A fetched page takes its title from its own HTML; one sent here would be dropped.
        if self.title is not None and self.markdown is None:
            raise ValueError("`title` is only taken with `markdown`")
        return self


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
