"""A brain's digest over a period as the HTTP API and the MCP `digest` tool both show it: the
structure `loci.review.facade.Digest.as_dict` gives, declared once for the two surfaces."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from loci.wire.citation import Citation


class DigestCounts(BaseModel):
    added: int = Field(description="files and web pages added in the period")
    notes: int = Field(description="notes written in the period")
    inbox: int = Field(description="captures waiting as drafts in inbox/, whenever captured")
    inbox_new: int = Field(description="of those, captured in the period")
    pages_created: int
    pages_changed: int
    timeline_entries: int = Field(description="timeline entries dated in the period")
    failed: int = Field(description="documents that failed in the period")


class DigestDocumentOut(BaseModel):
    id: int
    kind: str
    name: str
    title: str
    status: str
    created_at: str


class DigestFailedOut(BaseModel):
    id: int
    kind: str
    name: str
    reason: str
    at: str


class DigestDraftOut(BaseModel):
    id: str = Field(description="the draft's graph document id")
    title: str
    created: str
    new: bool = Field(description="captured in the period")


class DigestEntryOut(BaseModel):
    at: str
    text: str


class DigestPageOut(BaseModel):
    id: str
    title: str
    type: str
    folder: str
    created: bool = Field(description="created in the period (false: an older page changed)")
    entries: list[DigestEntryOut]


class DigestThemeOut(BaseModel):
    label: str
    words: list[str] = Field(description="its most distinctive words, most distinctive first")
    document_ids: list[int]


class DigestSummaryOut(BaseModel):
    text: str = Field(description="the recap; [n] cites summary.sources' number n")
    by: Literal["model", "extract"]
    model: str | None
    fallback: str | None = Field(description="why a configured model's recap is missing")
    sources: list[Citation] = Field(description="numbered citations, as answers carry")


class DigestOut(BaseModel):
    brain: str
    since: str = Field(description="the period as asked: 24h, 7d, 2w, or a date")
    start: str = Field(description="the period's start, UTC (inclusive)")
    end: str = Field(description="the period's end, UTC (exclusive): now")
    period: str = Field(description="the period's days, as people read them")
    counts: DigestCounts
    added_by_kind: dict[str, int]
    added: list[DigestDocumentOut]
    notes: list[DigestDocumentOut]
    inbox: list[DigestDraftOut]
    pages: list[DigestPageOut]
    failed: list[DigestFailedOut]
    themes: list[DigestThemeOut]
    summary: DigestSummaryOut
