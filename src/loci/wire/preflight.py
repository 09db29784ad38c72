"""What adding would do (`add` as a dry run): the preflight routes' answer, `loci add --dry-run
--json` and an MCP dry run's item."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loci.wire.mirror import Mirror


class ExistingRefOut(Mirror):
    id: int | None = Field(description="null: an earlier item of the same request")
    name: str
    status: str | None = None
    reason: str | None = Field(
        default=None,
        description="why it failed, when its status is failed: `loci reprocess` "
        "(POST …/files/{id}/reprocess) tries it again; adding the same bytes does not",
    )


class PreflightItemOut(Mirror):
    source: str = Field(description="the file name or URL as given")
    outcome: Literal["add", "duplicate", "fail", "refuse"] = Field(
        description="add: stored and indexed; duplicate: already there, nothing stored; "
        "fail: stored but indexing will fail; refuse: not stored"
    )
    kind: Literal["file", "web"]
    name: str | None
    size_bytes: int | None
    media_type: str | None
    parser: str | None = Field(description="the format it is read as: pdf, markdown, html, …")
    duplicate_of: ExistingRefOut | None
    replaces: ExistingRefOut | None = Field(
        default=None,
        description="a file added before from the same path, with other bytes: adding updates "
        "that document (same id) instead of keeping both",
    )
    over_limit: str | None
    ocr: bool
    ocr_reason: str | None
    transcription: str | None = Field(
        default=None, description="for a recording: the speech-to-text model its words come from"
    )
    chunks: int
    chunks_exact: bool = Field(description="false: estimated (text that comes from OCR)")
    seconds: float = Field(description="estimated indexing time")
    address: str | None = Field(description="for a URL: the addresses it resolves to")
    rendered: bool = Field(description="for a URL: rendered in a browser before indexing")
    warnings: list[str]
    error: str | None


class PreflightTotalsOut(Mirror):
    items: int
    add: int
    duplicate: int
    fail: int
    refuse: int
    new_bytes: int
    chunks: int
    ocr: int
    seconds: float


class PreflightOut(Mirror):
    status: Literal["ok", "warning", "error"]
    warnings: list[str]
    errors: list[str]
    existing_rows: int = Field(description="documents already in the brain that items duplicate")
    items: list[PreflightItemOut]
    totals: PreflightTotalsOut
