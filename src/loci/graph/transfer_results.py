"""What a transfer reports: one result per file, so a bad file fails alone and says what to
fix, and the counts per action."""

from __future__ import annotations

from dataclasses import dataclass

from loci.models import Brain

FAILED_ACTIONS = ("refused", "conflict")


@dataclass(frozen=True)
class FileResult:
    path: str  # relative to the folder, with '/'
    id: str | None
    action: str  # created updated unchanged deleted written refused conflict
    converted: bool = False  # plain Markdown that became a page (or line endings normalized)
    problems: tuple[str, ...] = ()  # what to fix, for a refused file
    message: str = ""


@dataclass(frozen=True)
class TransferReport:
    operation: str  # import export materialize sync
    brain: str
    files: tuple[FileResult, ...]
    counts: dict[str, int]  # per action

    @property
    def failed(self) -> tuple[FileResult, ...]:
        return tuple(f for f in self.files if f.action in FAILED_ACTIONS)


def summarize(operation: str, brain: Brain, files: list[FileResult]) -> TransferReport:
    counts: dict[str, int] = {}
    for f in files:
        counts[f.action] = counts.get(f.action, 0) + 1
    return TransferReport(operation, brain.name, tuple(files), counts)


def duplicate_claim(path: str, doc_id: str, other: str) -> FileResult:
    where = f" (also in {other})" if other else ""
    return FileResult(
        path, doc_id, "refused",
        problems=(f"id: {doc_id!r} is claimed by more than one file{where}; give each its own id",),
    )  # fmt: skip
