"""What one sync of one followed folder did (`SourceSync`), as `loci sync`, the API and the
web app's Sources panel report it and as a source keeps its `last_report`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class FileFailure:
    path: str
    reason: str

    @classmethod
    def of_document(cls, path: str, document_id: int, reason: str | None) -> FileFailure:
        """A file taken whose document failed to index: its reason, and how to try again once
        the file is fixed (or the engine it lacked is installed)."""
        why = reason or "failed to index"
        return cls(path, f"{why} — `loci reprocess {document_id}` tries it again")


@dataclass
class SourceSync:
    """What one sync of one source did."""

    source_id: int
    brain_id: int
    path: str
    unreachable: str | None = None  # why the folder could not be read; then nothing changed
    files: int = 0  # wanted files found in the folder
    added: int = 0
    updated: int = 0
    renamed: int = 0  # a file renamed and edited counts as renamed and updated
    removed: int = 0
    gone: int = 0  # files found deleted whose documents were kept, marked gone (on_delete keep)
    returned: int = 0  # files of documents marked gone that are back (no longer gone)
    unchanged: int = 0
    written: int = 0  # pages changed in Loci written to their files (a folder of pages)
    failed: list[FileFailure] = field(default_factory=list)
    # Files changed both in the folder and in Loci since the last sync: nothing was written.
    conflicts: list[FileFailure] = field(default_factory=list)
    # Documents queued for indexing by this sync, so a caller can wait for them.
    queued: list[int] = field(default_factory=list)
    # The wanted files found (their paths): the watcher keeps the folder's file count with them.
    found: list[str] = field(default_factory=list, repr=False)

    def as_report(self) -> dict[str, Any]:
        """What is kept as the source's `last_report`."""
        return {
            "unreachable": self.unreachable,
            "files": self.files,
            "added": self.added,
            "updated": self.updated,
            "renamed": self.renamed,
            "removed": self.removed,
            "gone": self.gone,
            "returned": self.returned,
            "unchanged": self.unchanged,
            "written": self.written,
            "failed": [{"path": f.path, "reason": f.reason} for f in self.failed],
            "conflicts": [{"path": f.path, "reason": f.reason} for f in self.conflicts],
        }
