"""What a phone's Web Share Target sends (via the web app) and what keeping it returns."""

from __future__ import annotations

from pydantic import Field

from loci.api.schemas.common import RequestIn


class ShareIn(RequestIn):
    title: str = Field(default="", max_length=2000, description="the shared item's title")
    text: str = Field(default="", max_length=1_000_000, description="the shared text")
    url: str = Field(default="", max_length=4096, description="the shared link")
