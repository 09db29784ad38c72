"""What `add_url` and `create_file` return in a dry run: seed 004's preflight object for the one
item the call names, field for field as `loci.ingest.preflight` works it out (the HTTP API's
preflight routes show the same object for a batch)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from loci.ingest.preflight import Preflight


class ExistingDocument(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: int | None = Field(description="the document already in the brain (read it by this id)")
    name: str
    status: str | None = Field(description="its status; failed: adding reports that failure")


class PlannedItem(BaseModel):
    """What adding this one item would do."""

    model_config = ConfigDict(from_attributes=True)

    source: str = Field(description="the file name or URL as given")
    outcome: Literal["add", "duplicate", "fail", "refuse"] = Field(
        description="add: stored and indexed; duplicate: already in the brain, nothing new "
        "stored; fail: stored but indexing will fail; refuse: not stored at all"
    )
    kind: Literal["file", "web"]
    name: str | None
    size_bytes: int | None
    media_type: str | None
    parser: str | None = Field(description="the format it is read as: markdown, pdf, html, …")
    duplicate_of: ExistingDocument | None
    over_limit: str | None = Field(description="why it is over the size limit, if it is")
    ocr: bool = Field(description="true: its text comes from OCR")
    ocr_reason: str | None
    transcription: str | None = Field(
        default=None, description="for a recording: the speech-to-text model its words come from"
    )
    chunks: int = Field(description="passages it will be indexed as")
    chunks_exact: bool = Field(description="false: an estimate (text that comes from OCR)")
    seconds: float = Field(description="estimated indexing time")
    address: str | None = Field(description="for a URL: the addresses it resolves to")
    rendered: bool = Field(description="for a URL: rendered in a browser before indexing")
    warnings: list[str]
    error: str | None = Field(description="why it will be refused or fail")


class DryRun(BaseModel):
    status: Literal["ok", "warning", "error"] = Field(
        description="ok: it would be added cleanly; warning: see warnings (e.g. a duplicate); "
        "error: it would be refused or fail, see errors"
    )
    warnings: list[str]
    errors: list[str]
    existing_rows: int = Field(description="documents already in the brain that it duplicates")
    item: PlannedItem

    @classmethod
    def of(cls, flight: Preflight) -> DryRun:
        (item,) = flight.items  # a tool's dry run names exactly one item
        return cls(
            status=flight.status,
            warnings=flight.warnings,
            errors=flight.errors,
            existing_rows=flight.existing_rows,
            item=PlannedItem.model_validate(item),
        )
