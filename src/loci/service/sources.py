"""Folders a brain follows: `Sources`, the service `Loci` holds as `loci.sources`.

A registered folder's files are documents known by their path (`Library.add_file`), so a sync
is a reconcile of the files on disk with the documents whose `source_path` lies under the
folder: a new path is added, changed bytes update the document in place (same id), a file gone
whose bytes reappear under a new path is a rename (the document moves; nothing is re-indexed),
and a file gone for good removes its document — or, where the person chose to keep deleted
files, leaves it marked gone (`Document.gone_at`: still found, marked; the file coming back, at
its path or under another name, clears it). Unchanged files cost a stat: the size and mtime
recorded at the last sync (`metadata["file"]`) are compared before anything is read.

A folder that is not there (a drive unplugged, a share not mounted) deletes nothing: the source
is reported unreachable until it is back.

A folder followed as pages (`mode` "pages": an Obsidian-style vault) is synced by `PageSources`
(`source_pages`) instead: its Markdown files are graph pages, kept in step both ways.

`sync_paths` reconciles only some paths of a source (what a watcher saw change, see
`loci.service.watching`) by the same rules; a new file whose bytes are a document of the
source whose file is gone is that document renamed, wherever the two paths fell in the batches.
Reconciles of one source in this process take turns (a sync over the API while the watcher
works on the same folder).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loci.errors import InvalidInput, LociError, NotFound
from loci.ingest.folder_walk import (
    FolderFile,
    read_whole,
    unreachable,
    walk_folder,
    walk_paths,
    wanted,
)
from loci.ingest.size_cap import over_cap
from loci.ingest.sources import clean_name
from loci.models import Brain, Document, OnDelete, Source, SourceMode, WatchMode
from loci.service.library import Library
from loci.service.source_pages import Keep, PageSources
from loci.store.base import Store
from loci.store.blobs import sha256_hex


@dataclass(frozen=True)
class FileFailure:
    path: str
    reason: str


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
    renamed: int = 0
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


@dataclass(frozen=True)
class SyncReport:
    sources: list[SourceSync]

    @property
    def ok(self) -> bool:
        return all(s.unreachable is None and not s.failed and not s.conflicts for s in self.sources)


def _file_stamp(file: FolderFile) -> dict[str, int]:
    return {"size": file.size, "mtime_ns": file.mtime_ns}


def _unread(error: OSError) -> str:
    """Why a file the walk found could not be read, as a person reads it."""
    if isinstance(error, FileNotFoundError):
        return "deleted or moved away while it was synced; looked at again at the next sync"
    return f"cannot read: {error.strerror}"


def _contains(outer: Path, inner: Path) -> bool:
    return inner == outer or outer in inner.parents


def in_scope(path: str, scope: set[str]) -> bool:
    """Whether `path` is one of `scope` or lies inside one of them."""
    if path in scope:
        return True
    parent = os.path.dirname(path)
    while parent and parent != path:
        if parent in scope:
            return True
        path, parent = parent, os.path.dirname(parent)
    return False


# Up to this many changed paths are looked up one by one; more, and the source's documents are
# read once and sorted out in memory.
LOOKUP_PATHS = 64


class Sources:
    """Registering folders, and reconciling each with its documents (`sync`)."""

    def __init__(self, store: Store, library: Library, pages: PageSources) -> None:
        self.store = store
        self.library = library
        self.pages = pages
        self._locks: dict[int, threading.Lock] = {}
        self._locks_guard = threading.Lock()

    def _lock(self, source_id: int) -> threading.Lock:
        with self._locks_guard:
            return self._locks.setdefault(source_id, threading.Lock())

    def add(
        self,
        brain: Brain,
        path: Path,
        include: Sequence[str] = (),
        exclude: Sequence[str] = (),
        on_delete: OnDelete = "remove",
        mode: SourceMode = "files",
    ) -> Source:
        if on_delete not in ("remove", "keep"):
            raise InvalidInput(f"on_delete must be remove or keep, got {on_delete!r}")
        if mode not in ("files", "pages"):
            raise InvalidInput(f"a folder is kept as files or pages, not {mode!r}")
        root = path.expanduser().resolve()
        if not root.is_dir():
            raise InvalidInput(f"{path} is not a folder (a source is a folder to follow)")
        for other in self.store.sources(brain.id):
            known = Path(other.path)
            if known == root:
                raise InvalidInput(f"{root} is already source #{other.id} of this brain")
            if _contains(known, root) or _contains(root, known):
                where = "is inside" if _contains(known, root) else "holds"
                # One file, one source: two would add, rename and remove the same documents.
                raise InvalidInput(
                    f"{root} {where} source #{other.id} ({known}) of this brain; a file can"
                    f" belong to one source only (`loci sources rm {other.id}` first to follow"
                    " this one instead)"
                )
        include = [g.strip() for g in include if g.strip()]
        exclude = [g.strip() for g in exclude if g.strip()]
        return self.store.create_source(brain.id, str(root), include, exclude, on_delete, mode)

    def list(self, brain: Brain | None = None) -> list[Source]:
        """A brain's sources, or every brain's (None)."""
        return self.store.sources(brain.id if brain else None)

    def get(self, brain: Brain, source_id: int) -> Source:
        return self.store.get_source(brain.id, source_id)

    def find(self, source_id: int) -> tuple[Brain, Source]:
        """A source by its id alone, with its brain (the CLI acts on every brain)."""
        for source in self.store.sources():
            if source.id == source_id:
                return self.store.get_brain_by_id(source.brain_id), source
        raise NotFound(f"no source {source_id} (`loci sources list` shows them)")

    def watching(self, brain: Brain | None = None) -> dict[int, WatchMode]:
        """How each source that a running server or worker watches is watched (a source not
        in it is not watched now)."""
        leases = self.store.watch_leases(brain.id if brain else None)
        return {i: lease.mode for i, lease in leases.items() if lease.remaining_s > 0}

    def brain_of(self, result: SourceSync) -> Brain:
        return self.store.get_brain_by_id(result.brain_id)

    def remove(self, brain: Brain, source_id: int, keep_documents: bool) -> tuple[Source, int]:
        """Stop following a folder; its documents stay (`keep_documents`) or are removed.
        Returns the source and how many documents were removed."""
        with self._lock(source_id):  # not while a watcher reconciles it in this process
            source = self.store.get_source(brain.id, source_id)
            if source.mode == "pages":  # its manifest goes with it: the pages are read first
                removed = 0 if keep_documents else self.pages.remove_pages(brain, source)
                self.store.delete_source(brain.id, source_id)
                return source, removed
            self.store.delete_source(brain.id, source_id)
            if keep_documents:
                return source, 0
            documents = self._documents(brain, source)
            for document in documents:
                self.library.remove(brain, document.id)
            return source, len(documents)

    def sync(self, brain: Brain | None = None) -> SyncReport:
        """Reconcile every source of `brain` (None: of every brain) once."""
        brains: dict[int, Brain] = {}
        results = []
        for source in self.list(brain):
            if source.brain_id not in brains:
                brains[source.brain_id] = self.store.get_brain_by_id(source.brain_id)
            result = self._sync_one(brains[source.brain_id], source)
            self.store.record_sync(source.brain_id, source.id, result.as_report())
            results.append(result)
        return SyncReport(results)

    def resolve(self, brain: Brain, source_id: int, path: str, keep: Keep) -> SourceSync:
        """Settle a conflict of a folder of pages by keeping the file's side or Loci's, then
        sync the folder so the other side follows."""
        source = self.store.get_source(brain.id, source_id)
        self.pages.resolve(brain, source, path, keep)
        result = self._sync_one(brain, source)
        self.store.record_sync(source.brain_id, source.id, result.as_report())
        return result

    def sync_paths(self, brain: Brain, source: Source, paths: Iterable[Path]) -> SourceSync:
        """Reconcile only `paths` of `source` — files or folders inside it, there or gone — as
        `sync` would: what a watcher saw change. The caller records the report. A folder of
        pages is synced whole (its links cross files)."""
        return self._sync_one(brain, source, {str(p) for p in paths})

    def _sync_one(self, brain: Brain, source: Source, scope: set[str] | None = None) -> SourceSync:
        with self._lock(source.id):
            try:  # as registered now: a watcher may hold a source removed a moment ago
                source = self.store.get_source(brain.id, source.id)
            except NotFound:
                return SourceSync(source.id, source.brain_id, source.path, "no longer followed")
            if source.mode == "pages":
                return self._sync_pages(brain, source)
            return self._reconcile(brain, source, scope)

    def _reconcile(self, brain: Brain, source: Source, scope: set[str] | None) -> SourceSync:
        result = SourceSync(source.id, source.brain_id, source.path)
        root = Path(source.path)
        known = {d.source_path: d for d in self._documents(brain, source, scope)}
        result.unreachable = unreachable(root, bool(known))
        if result.unreachable is not None:
            return result
        if scope is None:
            files, problems = walk_folder(root, source.include, source.exclude)
        else:
            files, problems = walk_paths(root, map(Path, scope), source.include, source.exclude)
        result.files = len(files)
        result.found = [str(f.path) for f in files]
        result.failed.extend(FileFailure(p.path, p.reason) for p in problems)
        on_disk = {str(f.path) for f in files}
        # A document kept as gone whose file is there again is no longer gone.
        back = [d.id for p, d in known.items() if d.gone_at is not None and p in on_disk]
        result.returned = len(self.store.mark_gone(brain.id, back, False)) if back else 0
        new: list[FolderFile] = []
        for file in files:
            path = str(file.path)
            document = known.get(path)
            if document is None:
                new.append(file)
            else:
                self._check(brain, file, document, result)
        gone = [d for p, d in known.items() if p not in on_disk]
        gone_by_hash = {d.content_hash: d for d in gone}
        gone_sizes = {d.size_bytes for d in gone}
        for file in new:
            moved = self._renamed(file, gone_by_hash, gone_sizes)
            if moved is not None and self._move(brain, moved, file):
                del gone_by_hash[moved.content_hash]
                result.renamed += 1
            else:
                self._add(brain, file, result, new_in=root)
        kept: list[int] = []
        for document in gone_by_hash.values():
            if source.on_delete == "keep":
                kept.append(document.id)
                continue
            try:
                self.library.remove(brain, document.id)
            except NotFound:  # removed meanwhile (`loci rm`, another sync): as good
                continue
            result.removed += 1
        # Kept documents of deleted files are marked gone, once: a later sync changes nothing.
        result.gone = len(self.store.mark_gone(brain.id, kept, True)) if kept else 0
        return result

    def _sync_pages(self, brain: Brain, source: Source) -> SourceSync:
        synced = self.pages.sync(brain, source)
        counts = synced.counts
        return SourceSync(
            source.id,
            source.brain_id,
            source.path,
            unreachable=synced.unreachable,
            files=synced.files,
            added=counts.get("created", 0),
            updated=counts.get("updated", 0),
            renamed=counts.get("renamed", 0),
            removed=counts.get("deleted", 0),
            gone=counts.get("gone", 0),
            unchanged=counts.get("unchanged", 0),
            written=counts.get("written", 0),
            failed=[FileFailure(path, why) for path, why in synced.refused],
            conflicts=[FileFailure(path, why) for path, why in synced.conflicts],
            queued=synced.queued,
        )

    def _move(self, brain: Brain, document: Document, file: FolderFile) -> bool:
        """Move `document` to `file`'s path (a rename); False if it was removed meanwhile."""
        try:
            self.store.move_document(brain.id, document.id, file.path.name, str(file.path))
        except NotFound:
            return False
        self.store.merge_document_metadata(document.id, {"file": _file_stamp(file)})
        return True

    def _documents(
        self, brain: Brain, source: Source, scope: set[str] | None = None
    ) -> Sequence[Document]:
        """The source's documents: those of files under its folder that its globs take. A file
        added there by hand that the globs leave out (or a hidden one) is not the source's to
        remove. `scope`: only those at or under these paths."""
        root = source.path.rstrip("/") + "/"
        if scope is not None and source.path not in scope and len(scope) <= LOOKUP_PATHS:
            found: dict[int, Document] = {}
            for path in scope:
                at = self.store.find_by_path(brain.id, path)
                under = self.store.documents_under(brain.id, path)
                found.update((d.id, d) for d in [*([at] if at else []), *under])
            candidates: Iterable[Document] = sorted(found.values(), key=lambda d: d.id)
        else:
            candidates = self.store.documents_under(brain.id, source.path)
        return [
            d
            for d in candidates
            if d.source_path is not None
            and d.source_path.startswith(root)
            and (scope is None or in_scope(d.source_path, scope))
            and wanted(d.source_path[len(root) :], source.include, source.exclude)
        ]

    def _check(self, brain: Brain, file: FolderFile, document: Document, out: SourceSync) -> None:
        """A file that has a document: unchanged by its stamp, else by its bytes, else updated."""
        if document.metadata.get("file") == _file_stamp(file):
            out.unchanged += 1
            return
        if file.size == document.size_bytes:
            try:
                data, read = read_whole(file.path)
            except LociError as error:
                out.failed.append(FileFailure(str(file.path), error.message))
                return
            except OSError as error:
                out.failed.append(FileFailure(str(file.path), _unread(error)))
                return
            if sha256_hex(data) == document.content_hash:
                # touched, not changed: remember the new stamp so the next sync is cheap
                self.store.merge_document_metadata(document.id, {"file": _file_stamp(read)})
                out.unchanged += 1
                return
        self._add(brain, file, out)

    def _renamed(
        self, file: FolderFile, gone_by_hash: dict[str, Document], gone_sizes: set[int]
    ) -> Document | None:
        """The gone document whose bytes this new file has, if any (only a file of a size
        some gone file had is read)."""
        if file.size not in gone_sizes or not gone_by_hash:
            return None
        if over_cap(file.path.name, file.size, self.library.settings.max_file_bytes):
            return None
        try:
            digest = sha256_hex(read_whole(file.path)[0])
        except (LociError, OSError):
            return None  # reported when it is added
        return gone_by_hash.get(digest)

    def _add(
        self, brain: Brain, file: FolderFile, out: SourceSync, new_in: Path | None = None
    ) -> None:
        """Add or update `file`'s document. `new_in`: the file is new in this source's folder
        (else it updates the document it has)."""
        try:
            too_large = over_cap(
                clean_name(file.path.name), file.size, self.library.settings.max_file_bytes
            )
            if too_large is not None:  # refused before a huge file is read into memory
                raise too_large
            data, read = read_whole(file.path)
            # The file is known by where it lives: the same path with other bytes updates it.
            added = self.library.add_bytes(
                brain,
                file.path.name,
                data,
                metadata={"file": _file_stamp(read)},
                source_path=str(file.path),
            )
        except LociError as error:
            out.failed.append(FileFailure(str(file.path), error.message))
            return
        except OSError as error:
            out.failed.append(FileFailure(str(file.path), _unread(error)))
            return
        if added.deduped:
            earlier = added.document.source_path
            if (
                new_in is not None
                and earlier is not None
                and _contains(new_in, Path(earlier))
                and not os.path.lexists(earlier)
                and self._move(brain, added.document, file)
            ):
                # The bytes of a file of this folder that is gone: it was renamed or moved,
                # and its deletion is in another batch of the watcher's (or outside the paths
                # looked at): the document follows it.
                out.renamed += 1
                return
            # The same bytes are already a document (of another path): nothing new to index.
            out.unchanged += 1
            return
        out.queued.append(added.document.id)
        if new_in is None:
            out.updated += 1
        else:
            out.added += 1
