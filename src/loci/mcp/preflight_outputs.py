"""What `add_url` and `create_file` return in a dry run: the preflight object (status,
estimates, warnings) for the one item the call names. It is the HTTP API's `PreflightOut`
(`loci.wire.preflight`, which `loci add --dry-run --json` prints too) for a batch of one: its
`items` become the one `item`, and its totals are left out."""

from __future__ import annotations

from pydantic import Field

from loci.ingest.preflight import Preflight
from loci.wire.preflight import PreflightItemOut, PreflightOut
from loci.wire.subset import Subset, derived, subset


@subset(
    PreflightOut,
    *("status", "warnings", "errors", "existing_rows"),
    describe={
        "status": "ok: it would be added cleanly; warning: see warnings (e.g. a duplicate); "
        "error: it would be refused or fail, see errors",
        "existing_rows": "documents already in the brain that it duplicates",
    },
)
class DryRun(Subset):
    item: PreflightItemOut = Field(description="the one item the call names")

    @classmethod
    def of(cls, flight: Preflight) -> DryRun:
        full = PreflightOut.of(flight)
        (item,) = full.items  # a tool's dry run names exactly one item
        return derived(cls, full, item=item)
