"""What the preflight routes take (`add` as a dry run); their answer is `loci.wire.preflight`."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from loci.api.schemas.common import RequestIn


class UrlsPreflightIn(RequestIn):
    urls: list[Annotated[str, Field(min_length=1, max_length=4096)]] = Field(
        min_length=1, max_length=100
    )
