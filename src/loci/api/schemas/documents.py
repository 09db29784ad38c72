"""Documents: files and web pages added, their text and chunks."""

from __future__ import annotations

from typing import Self

from pydantic import Field, model_validator

from loci.api.schemas.common import RequestIn


class UrlIn(RequestIn):
    url: str = Field(min_length=1, max_length=4096)
    tags: list[str] = Field(default_factory=list, max_length=50)
    markdown: str | None = Field(
        default=None,
        min_length=1,
        max_length=20_000_000,
        description="the page as the browser shows it, in Markdown (a browser extension's "
        "extraction): kept as is and cited to `url`, which is then not fetched",
    )
    title: str | None = Field(
        default=None, max_length=300, description="the page's title, with `markdown`"
    )

    @model_validator(mode="after")
    def _title_needs_markdown(self) -> Self:
        # A fetched page takes its title from its own HTML; one sent here would be dropped.
        if self.title is not None and self.markdown is None:
            raise ValueError("`title` is only taken with `markdown`")
        return self
