"""Folders a brain follows (`/brains/{brain}/folders`) and the feeds and pages it follows on a
schedule (`/brains/{brain}/followed`): what is registered, and a sync's report."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
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
    kind: str = Field(
        default="folder",
        description="folder, or what the worker runs on a schedule: feed, page, imap, git, webdav",
    )
    every_s: float | None = Field(default=None, description="a scheduled source's period")
    next_run_at: str | None = Field(
        default=None, description="when a scheduled source runs next (UTC, ISO 8601)"
    )
    running: bool = Field(default=False, description="a worker runs it right now")
    last_error: str | None = Field(
        default=None, description="why the last run of a scheduled source failed (None: it worked)"
    )
    failures: int = Field(default=0, description="failed runs in a row (each doubles the wait)")
    counts: dict[str, int] = Field(
        default_factory=dict,
        description="what the last run did: added, updated, removed, gone, unchanged",
    )
    moved_to: str | None = Field(
        default=None, description="where the last run found the feed moved for good"
    )

    @classmethod
    def of(cls, source: Source, brain: str, watching: Mapping[int, WatchMode]) -> SourceOut:
        """`watching`: the mode of each watched source (`Sources.watching`)."""
        report: dict[str, Any] = source.last_report or {}
        counts = {
            k: int(report[k])
            for k in ("added", "updated", "removed", "gone", "returned", "unchanged")
            if isinstance(report.get(k), int)
        }
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
            kind=source.kind,
            every_s=source.every_s,
            next_run_at=_when(source.next_run_at),
            running=source.lease_owner is not None,
            last_error=source.last_error,
            failures=source.failures,
            counts=counts if source.scheduled else {},
            moved_to=report.get("moved_to"),
        )


def _when(epoch: float | None) -> str | None:
    if epoch is None:
        return None
    moment = datetime.fromtimestamp(epoch, UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


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
