"""What a phone's Web Share Target sends (via the web app) and what keeping it returns."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from loci.api.schemas.common import RequestIn
from loci.api.schemas.documents import DocumentOut
from loci.api.schemas.graph import GraphSummaryOut
from loci.models import Brain
from loci.service.sharing import Shared


class ShareIn(RequestIn):
    title: str = Field(default="", max_length=2000, description="the shared item's title")
    text: str = Field(default="", max_length=1_000_000, description="the shared text")
    url: str = Field(default="", max_length=4096, description="the shared link")


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
