"""Folders a brain follows (`/brains/{brain}/folders`): what is registered, and a sync's report."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from loci.api.schemas.common import RequestIn

Glob = Annotated[str, Field(min_length=1, max_length=500)]


class SourceIn(RequestIn):
    path: str = Field(min_length=1, max_length=4096, description="an absolute folder on the server")
    include: list[Glob] = Field(
        default_factory=list, max_length=100, description="only files matching these globs"
    )
    exclude: list[Glob] = Field(
        default_factory=list, max_length=100, description="skip files matching these globs"
    )
    on_delete: Literal["remove", "keep"] = Field(
        default="remove", description="a deleted file's document: removed, or kept as gone"
    )
    mode: Literal["files", "pages"] = Field(
        default="files",
        description="files: each file is a document; pages: the folder's Markdown (an Obsidian"
        " vault) is kept as graph pages, and edits made in Loci are written back to the files",
    )


class FollowIn(RequestIn):
    url: str = Field(min_length=1, max_length=4096, description="the feed's or page's address")
    every_s: float = Field(
        default=3600.0, ge=60, le=30 * 86400, description="how often it is checked, in seconds"
    )
    kind: Literal["feed", "page"] | None = Field(
        default=None, description="feed or page; none: told by what the address answers"
    )
    on_delete: Literal["remove", "keep"] = Field(
        default="remove",
        description="an entry gone upstream: its document removed, or kept as gone",
    )
    urls: list[Annotated[str, Field(min_length=1, max_length=4096)]] = Field(
        default_factory=list, max_length=999, description="page: more pages checked with it"
    )


class ResolveIn(RequestIn):
    path: str = Field(
        min_length=1, max_length=4096, description="the conflicting file, as the sync named it"
    )
    keep: Literal["file", "loci"] = Field(
        description="file: the file's text goes into the page; loci: the page goes to the file"
    )
