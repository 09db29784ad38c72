"""What `add_url` and `create_file` return in a dry run: the preflight object (status,
estimates, warnings) for the one item the call names. The item is the HTTP API's
`PreflightItemOut`, declared once in `loci.wire.preflight` (its preflight routes show
the same object for a batch, and `loci add --dry-run --json` prints it too)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from loci.ingest.preflight import Preflight
from loci.wire.preflight import PreflightItemOut


class DryRun(BaseModel):
    status: Literal["ok", "warning", "error"] = Field(
        description="ok: it would be added cleanly; warning: see warnings (e.g. a duplicate); "
        "error: it would be refused or fail, see errors"
    )
    warnings: list[str]
    errors: list[str]
    existing_rows: int = Field(description="documents already in the brain that it duplicates")
    item: PreflightItemOut

    @classmethod
    def of(cls, flight: Preflight) -> DryRun:
        (item,) = flight.items  # a tool's dry run names exactly one item
        return cls(
            status=flight.status,
            warnings=flight.warnings,
            errors=flight.errors,
            existing_rows=flight.existing_rows,
            item=PreflightItemOut.of(item),
        )
