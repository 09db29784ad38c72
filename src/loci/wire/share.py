"""What a phone's Web Share Target sends (via the web app) and what keeping it returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from loci.models import Brain
from loci.service.sharing import Shared
from loci.wire.documents import DocumentOut
from loci.wire.graph import GraphSummaryOut


class SharedOut(BaseModel):
    brain: str
    saved_as: Literal["page", "capture"] = Field(
        description="page: the link was fetched and kept as a web page; capture: kept as an "
        "inbox draft, curated in the background"
    )
    document: DocumentOut = Field(description="the web page, or the kept capture")
    draft: GraphSummaryOut | None = Field(description="a capture's inbox draft")
    deduped: bool = Field(description="true: it was in the brain already")
    fetch_error: str | None = Field(
        description="why a shared link could not be fetched (it was kept as a capture instead)"
    )

    @classmethod
    def of(cls, shared: Shared, brain: Brain) -> SharedOut:
        return cls(
            brain=brain.name,
            saved_as=shared.saved_as,
            document=DocumentOut.of(shared.document, brain),
            draft=GraphSummaryOut.of(shared.draft) if shared.draft is not None else None,
            deduped=shared.deduped,
            fetch_error=shared.fetch_error,
        )
