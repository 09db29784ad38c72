"""Folders a brain follows: `Sources`, the service `Loci` holds as `loci.sources`.

A registered folder's files are documents known by their path (`Library.add_file`), so a sync
is a reconcile of the files on disk with the documents whose `source_path` lies under the
folder (`FileReconcile`, `file_reconcile`): a new path is added, changed bytes update the
document in place (same id), a file gone that reappears under a new path — found by its file
system identity, edited or not, or by its bytes — is a rename (the document moves), and a file
gone for good removes its document — or, where the person chose to keep deleted
files, leaves it marked gone (`Document.gone_at`: still found, marked; the file coming back, at
its path or under another name, clears it). Unchanged files cost a stat: the size and mtime
recorded at the last sync (`metadata["file"]`) are compared before anything is read.

A folder that is not there (a drive unplugged, a share not mounted) deletes nothing: the source
is reported unreachable until it is back.

A folder followed as pages (`mode` "pages": an Obsidian-style vault) is synced by `PageSources`
(`source_pages`) instead: its Markdown files are graph pages, kept in step both ways.

`sync_paths` reconciles only some paths of a source (what a watcher saw change, see
`loci.service.watching`) by the same rules; a new file whose identity or bytes are a document
of the source whose file is gone is that document renamed, wherever the two paths fell in the
batches.
Reconciles of one source in this process take turns (a sync over the API while the watcher
works on the same folder).
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loci.confined_paths import NO_FENCE, Fence
from loci.errors import InvalidInput, NotFound
from loci.models import Brain, OnDelete, Source, SourceMode, WatchMode
from loci.service.file_reconcile import FileReconcile
from loci.service.library import Library
from loci.service.source_files import contains, in_scope, source_documents
from loci.service.source_pages import Keep, PageSources
from loci.service.source_roots import not_own_data
from loci.service.sync_report import FileFailure, SourceSync
from loci.store.base import Store

__all__ = ["FileFailure", "SourceSync", "Sources", "SyncReport", "in_scope"]


@dataclass(frozen=True)
class SyncReport:
    sources: list[SourceSync]

    @property
    def ok(self) -> bool:
        return all(s.unreachable is None and not s.failed and not s.conflicts for s in self.sources)


class Sources:
    """Registering folders, and reconciling each with its documents (`sync`). `fence`: Loci's
    own data, never a source nor read by one (`loci.confined_paths`)."""

    def __init__(
        self, store: Store, library: Library, pages: PageSources, fence: Fence = NO_FENCE
    ) -> None:
        self.store = store
        self.library = library
        self.pages = pages
        self.fence = fence
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
        # Stored resolved: a link on the path later is then never the one registered, and is
        # refused when the folder is used (`loci.confined_paths`).
        root = path.expanduser().resolve()
        if not root.is_dir():
            raise InvalidInput(f"{path} is not a folder (a source is a folder to follow)")
        not_own_data(root, self.fence)
        for other in self.store.sources(brain.id):
            if other.scheduled:  # a feed's address is no folder
                continue
            known = Path(other.path)
            if known == root:
                raise InvalidInput(f"{root} is already source #{other.id} of this brain")
            if contains(known, root) or contains(root, known):
                where = "is inside" if contains(known, root) else "holds"
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
            if source.scheduled:  # its documents are those of its origins, not of a folder
                self.store.delete_source(brain.id, source_id)
                if keep_documents:
                    return source, 0
                made = self.store.origins(brain.id, f"source:{source.id}:")
                for document_id in made.values():
                    self.library.remove(brain, document_id)
                return source, len(made)
            if source.mode == "pages":  # its manifest goes with it: the pages are read first
                removed = 0 if keep_documents else self.pages.remove_pages(brain, source)
                self.store.delete_source(brain.id, source_id)
                return source, removed
            self.store.delete_source(brain.id, source_id)
            if keep_documents:
                return source, 0
            documents = source_documents(self.store, brain, source)
            for document in documents:
                self.library.remove(brain, document.id)
            return source, len(documents)

    def sync(self, brain: Brain | None = None) -> SyncReport:
        """Reconcile every folder of `brain` (None: of every brain) once (a scheduled source
        runs in the worker, or by `loci.scheduled.run_now`)."""
        brains: dict[int, Brain] = {}
        results = []
        for source in self.list(brain):
            if source.scheduled:
                continue
            if source.brain_id not in brains:
                brains[source.brain_id] = self.store.get_brain_by_id(source.brain_id)
            result = self._sync_one(brains[source.brain_id], source)
            self.store.record_sync(source.brain_id, source.id, result.as_report())
            results.append(result)
        return SyncReport(results)

    def note_index_failures(self, result: SourceSync) -> None:
        """After the documents a sync queued were indexed: those that failed count among the
        sync's failures (a file Loci took but could not read is the person's to fix, as much
        as one it could not take), and the source's last report says so."""
        if not result.queued:
            return
        documents = self.store.get_documents(result.brain_id, result.queued)
        failed = [d for d in documents if d.status == "failed"]
        for document in failed:
            path = document.source_path or document.name
            result.failed.append(FileFailure.of_document(path, document.id, document.status_reason))
        if failed:
            self.store.record_sync(result.brain_id, result.source_id, result.as_report())

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

    def run(self, brain: Brain, source: Source, paths: Iterable[Path] | None = None) -> SourceRun:
        """A reconcile of `source` (or only of `paths` in it) to be done a slice at a time:
        what a watcher runs, so that a folder's long first sync leaves it time for the other
        folders' changes. The caller records the report."""
        scope = None if paths is None else {str(p) for p in paths}
        return SourceRun(self, brain, source, scope)

    def _sync_one(self, brain: Brain, source: Source, scope: set[str] | None = None) -> SourceSync:
        done = SourceRun(self, brain, source, scope).step(None)
        assert done is not None  # no time limit: it ran to the end
        return done

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


class SourceRun:
    """One reconcile of one source, a slice at a time (`step`). Each slice takes the source's
    turn (`Sources._lock`) and reads the source as registered now: removed between two slices,
    the reconcile ends there ("no longer followed"). A folder of pages is synced in one slice."""

    def __init__(self, sources: Sources, brain: Brain, source: Source, scope: set[str] | None):
        self.sources = sources
        self.brain = brain
        self.source = source
        self.scope = scope
        self._files: FileReconcile | None = None

    def step(self, budget_s: float | None) -> SourceSync | None:
        """Work for about `budget_s` seconds (None: to the end); what the reconcile did once it
        is over, None while there is more to do."""
        sources, source = self.sources, self.source
        with sources._lock(source.id):
            try:  # as registered now: a watcher may hold a source removed a moment ago
                source = sources.store.get_source(self.brain.id, source.id)
            except NotFound:
                return SourceSync(source.id, source.brain_id, source.path, "no longer followed")
            if source.mode == "pages":
                return sources._sync_pages(self.brain, source)
            if self._files is None:
                self._files = FileReconcile(
                    sources.store, sources.library, self.brain, source, self.scope, sources.fence
                )
            return self._files.result if self._files.step(budget_s) else None
