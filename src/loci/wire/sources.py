"""Folders a brain follows (`/brains/{brain}/folders`): what is registered, and a sync's report."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field

from loci.models import Source, WatchMode
from loci.service.sources import SourceSync


class FileFailureOut(BaseModel):
    path: str
    reason: str


class SourceOut(BaseModel):
    """A followed folder, as `loci sources list --json` shows it too: the source's fields, its
    brain by name, and what its last sync found (None before one)."""

    id: int
    brain: str
    path: str
    include: list[str]
    exclude: list[str]
    on_delete: Literal["remove", "keep"]
    mode: Literal["files", "pages"]
    created_at: str
    last_sync_at: str | None
    files: int | None = Field(description="wanted files found at the last sync")
    unreachable: str | None = Field(description="why the folder could not be read at the last sync")
    errors: list[FileFailureOut] = Field(description="files the last sync could not take")
    conflicts: list[FileFailureOut] = Field(
        description="files changed both in the folder and in Loci: nothing was written"
    )
    watching: Literal["events", "poll", "off"] = Field(
        description="how a running server or worker watches the folder now: native file"
        " events, polling (network drives, WSL), or not at all (off: only a sync updates it)"
    )

    @classmethod
    def of(cls, source: Source, brain: str, watching: Mapping[int, WatchMode]) -> SourceOut:
        """`watching`: the mode of each watched source (`Sources.watching`)."""
        report: dict[str, Any] = source.last_report or {}
        return cls(
            id=source.id,
            brain=brain,
            path=source.path,
            include=list(source.include),
            exclude=list(source.exclude),
            on_delete=source.on_delete,
            mode=source.mode,
            created_at=source.created_at,
            last_sync_at=source.last_sync_at,
            files=report.get("files"),
            unreachable=report.get("unreachable"),
            errors=[FileFailureOut(**f) for f in report.get("failed", [])],
            conflicts=[FileFailureOut(**f) for f in report.get("conflicts", [])],
            watching=watching.get(source.id, "off"),
        )


class SourceRemovedOut(BaseModel):
    source: SourceOut
    documents_kept: bool
    documents_removed: int


class SourceSyncOut(BaseModel):
    """What one sync of one source did (`loci sync --json` shows the same)."""

    source_id: int
    brain: str
    path: str
    unreachable: str | None
    files: int
    added: int
    updated: int
    renamed: int
    removed: int
    gone: int = Field(
        description="files found deleted whose documents were kept, marked gone (on_delete keep)"
    )
    returned: int = Field(
        default=0, description="files of documents marked gone that are back: no longer gone"
    )
    unchanged: int
    written: int = Field(description="pages changed in Loci written to their files (pages)")
    failed: list[FileFailureOut]
    conflicts: list[FileFailureOut] = Field(
        description="files changed both in the folder and in Loci: nothing was written"
    )

    @classmethod
    def of(cls, result: SourceSync, brain: str) -> SourceSyncOut:
        return cls.model_validate(
            {"source_id": result.source_id, "brain": brain, "path": result.path}
            | result.as_report()
        )


class SyncOut(BaseModel):
    ok: bool = Field(
        description="false when a folder was unreachable, a file failed or met a conflict"
    )
    sources: list[SourceSyncOut]
