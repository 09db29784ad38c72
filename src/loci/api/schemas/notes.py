"""Notes: written, read and edited through the API."""

from __future__ import annotations

from pydantic import Field

from loci.api.schemas.common import NOT_BLANK, RequestIn


class NoteIn(RequestIn):
    text: str = Field(min_length=1, max_length=1_000_000, pattern=NOT_BLANK)
    title: str | None = Field(default=None, max_length=300)
    tags: list[str] = Field(default_factory=list, max_length=50)
    color: str | None = Field(default=None, pattern=r"^#[0-9a-fA-F]{6}$")


class NoteUpdate(NoteIn):
    expected_hash: str = Field(
        min_length=64,
        max_length=64,
        description="the content_hash you read; a note changed since is a 409, not overwritten",
    )
