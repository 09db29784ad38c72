"""An import's report (`loci import`, `POST /brains/{brain}/imports`, the MCP tool)."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from loci.imports.readers import KINDS
from loci.service.importing import ImportOutcome, ImportReport


class ImportKindOut(BaseModel):
    name: str = Field(description="as given to `loci import NAME PATH`")
    what: str = Field(description="the export it reads")


def import_kinds() -> list[ImportKindOut]:
    return [ImportKindOut(name=k.name, what=k.what) for k in KINDS]


class ImportOutcomeOut(BaseModel):
    name: str = Field(description="the item's title, or its name in the export")
    action: Literal["add", "update", "unchanged", "fail", "skip"]
    document_id: int | None
    reason: str | None = Field(
        description="why it failed or was skipped (in a dry run, what a link will become)"
    )
    attachments: int
    source_id: int | None = Field(
        default=None, description="the source an item to follow became (OPML's feeds)"
    )

    @classmethod
    def of(cls, outcome: ImportOutcome) -> ImportOutcomeOut:
        return cls(
            name=outcome.name,
            action=outcome.action,
            document_id=outcome.document_id,
            reason=outcome.reason,
            attachments=outcome.attachments,
            source_id=outcome.source_id,
        )


class ImportReportOut(BaseModel):
    """What an import did, or in a dry run would do, with each item of the export."""

    kind: str
    dry_run: bool
    added: int
    updated: int
    unchanged: int
    failed: int
    skipped: int
    items: list[ImportOutcomeOut]

    @classmethod
    def of(cls, report: ImportReport) -> ImportReportOut:
        c = report.counts
        return cls(
            kind=report.kind,
            dry_run=report.dry_run,
            added=c["add"],
            updated=c["update"],
            unchanged=c["unchanged"],
            failed=c["fail"],
            skipped=c["skip"],
            items=[ImportOutcomeOut.of(o) for o in report.outcomes],
        )
