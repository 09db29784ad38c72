"""One reconcile of a folder followed as files with its documents: `FileReconcile`, which
`Sources` runs for `loci sync` and for what a watcher saw change.

The documents are known by their path, so for the files found (the whole folder, or only the
paths in `scope`):

    a path with a document, same stamp       unchanged (a stat: size and mtime compared)
    … other stamp, same bytes                unchanged, the new stamp kept
    … other bytes                            the document updated in place (same id)
    a path without a document                a document whose file is gone, moved here —
                                             by its file system identity (moved, and maybe
                                             edited in place), else by its bytes — else added
    a document whose file is gone            moved to a copy of it in the folder, else
                                             removed, or kept marked gone (on_delete keep)

A moved file is found by its identity (device, inode and the inode's generation, see
`loci.ingest.file_identity`) whatever its bytes now, so a note renamed and edited between two
syncs keeps its document; a file whose identity cannot be trusted (a file system without
generations, or a copy) is found by its bytes. In a reconcile of some paths only, the file's
old path may lie outside them (a watcher's batch): the source's documents elsewhere whose
identity is a new file's are looked up, and one whose own path is gone is that file moved.

A file copied within the folder has the same bytes as its original: it is no document of its
own (a brain keeps one document for the same bytes), and the document remembers the copy's path
(`metadata.copies`). When the original goes, the document moves to a copy that still holds
those bytes instead of being removed: the copy would otherwise not be found until the next full
rescan, since a watcher's reconcile of the original's path never looks at the copy.
"""

from __future__ import annotations

import contextlib
import os
import stat
import time
from collections import deque
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from loci import confined_paths
from loci.confined_paths import NO_FENCE, Fence
from loci.errors import LociError, NotFound
from loci.ingest.file_identity import recorded_identity, same_file
from loci.ingest.folder_walk import (
    FolderFile,
    read_whole,
    stat_identity,
    unreachable,
    unreached,
    walk_folder,
    walk_paths,
)
from loci.ingest.size_cap import over_cap
from loci.ingest.sources import clean_name
from loci.models import Brain, Document, Source
from loci.service.adding import AddResult
from loci.service.file_batches import FileBytes, add_files
from loci.service.library import Library
from loci.service.source_files import contains, of_source, source_documents
from loci.service.sync_report import FileFailure, SourceSync
from loci.store.base import Store
from loci.store.blobs import sha256_hex

# Files kept together (`add_files`: one flush of their originals, one transaction): at most
# this many, or this many bytes read.
BATCH_FILES = 64
BATCH_BYTES = 16 * 1024 * 1024


def _unread(error: OSError) -> str:
    """Why a file the walk found could not be read, as a person reads it."""
    if isinstance(error, FileNotFoundError):
        return "deleted or moved away while it was synced; looked at again at the next sync"
    if isinstance(error, confined_paths.Refused):  # a folder on its way swapped for a link
        return f"not read: {error}"
    return f"cannot read: {error.strerror}"


def _unchanged_by_stamp(stamp: dict[str, Any], file: FolderFile) -> bool:
    return stamp.get("size") == file.size and stamp.get("mtime_ns") == file.mtime_ns


Read = tuple[bytes, FolderFile]  # a file's bytes and the stamp of the version read


class FileReconcile:
    """Reconcile `source`'s folder (or only `scope`, paths inside it) with its documents;
    every path of it is reached confined (`confined_paths`), never into `fence`."""

    def __init__(
        self,
        store: Store,
        library: Library,
        brain: Brain,
        source: Source,
        scope: set[str] | None = None,
        fence: Fence = NO_FENCE,
    ) -> None:
        self.store = store
        self.library = library
        self.brain = brain
        self.source = source
        self.scope = scope
        self.fence = fence
        self._reach = confined_paths.Reach(fence)  # the folder of the last file read
        self.root = Path(source.path)
        self.result = SourceSync(source.id, source.brain_id, source.path)
        # Stamps to record for documents whose files did not change (touched, or an identity
        # to note), written together at the end.
        self._stamps: dict[int, dict[str, Any]] = {}
        # Files read and waiting to be kept, with whether each is new at its path.
        self._batch: list[tuple[Read, bool]] = []
        self._batch_bytes = 0
        # What is left to do, once the folder was walked (`_start`): files that have a
        # document to check, files new at their path, and where those may come from.
        self._checks: deque[tuple[FolderFile, Document]] = deque()
        self._new: deque[FolderFile] = deque()
        self._places: _Places | None = None
        # Paths found to hold the same bytes as another file's document, by that document.
        self._copies: dict[int, set[str]] = {}

    def run(self) -> SourceSync:
        """The whole reconcile at once."""
        self.step(None)
        return self.result

    def step(self, budget_s: float | None) -> bool:
        """Reconcile for about `budget_s` seconds (None: to the end); True once it is done.

        A long reconcile (a large folder's first sync) is so done a slice at a time, and its
        caller can see to other folders in between: the folder is walked and its documents
        read in the first slice; each later one reads and keeps files until its time is up
        (the batch read so far kept before it returns); the last lets go of the documents of
        files gone — those that are still gone, since files may come back between slices."""
        try:
            return self._step(budget_s)
        finally:
            self._reach.close()  # no folder is held open between two slices

    def _step(self, budget_s: float | None) -> bool:
        deadline = None if budget_s is None else time.monotonic() + budget_s
        if self._places is None and not self._start():
            return True
        assert self._places is not None
        while self._checks:
            self._check(*self._checks.popleft())
            if deadline is not None and time.monotonic() >= deadline:
                self._flush()
                return False
        while self._new:
            self._place(self._new.popleft(), self._places)
            if deadline is not None and time.monotonic() >= deadline:
                self._flush()
                return False
        self._finish([d for d in self._places.unclaimed() if not self._back(d)])
        return True

    def _start(self) -> bool:
        """Read the documents, walk the folder, sort the files out; False if the folder is
        unreachable (nothing then changes)."""
        result = self.result
        documents = source_documents(self.store, self.brain, self.source, self.scope)
        known = {str(d.source_path): d for d in documents}
        result.unreachable = unreachable(self.root, bool(known), self.fence)
        if result.unreachable is not None:
            return False
        include, exclude = self.source.include, self.source.exclude
        try:
            if self.scope is None:
                files, problems = walk_folder(self.root, include, exclude, self.fence)
            else:
                scope = map(Path, self.scope)
                files, problems = walk_paths(self.root, scope, include, exclude, self.fence)
        except OSError as error:  # gone or swapped since it was looked at: nothing changes
            result.unreachable = unreached(self.root, error)
            return False
        result.files = len(files)
        result.found = [str(f.path) for f in files]
        result.failed.extend(FileFailure(p.path, p.reason) for p in problems)
        on_disk = {str(f.path) for f in files}
        # A document kept as gone whose file is there again is no longer gone.
        back = [d.id for p, d in known.items() if d.gone_at is not None and p in on_disk]
        result.returned = len(self.store.mark_gone(self.brain.id, back, False)) if back else 0
        for file in files:
            document = known.get(str(file.path))
            if document is None:
                self._new.append(file)
            else:
                self._checks.append((file, document))
        gone = {d.id: d for p, d in known.items() if p not in on_disk}
        self._places = _Places(gone, self._elsewhere(list(self._new), known))
        return True

    def _back(self, document: Document) -> bool:
        """Whether a file found gone at the start is a file again (a slice of a long
        reconcile later, or while it ran): it is left to the next look at that path."""
        try:
            info = confined_paths.lstat(Path(str(document.source_path)), self.fence)
        except OSError:
            return False
        return stat.S_ISREG(info.st_mode)

    # files that have a document ---------------------------------------------------------
    def _check(self, file: FolderFile, document: Document) -> None:
        """A file that has a document: unchanged by its stamp, else by its bytes, else updated."""
        out = self.result
        stamp = document.metadata.get("file") or {}
        recorded = recorded_identity(stamp)
        # Another file of the same size and mtime in its place (copied over it): its bytes
        # decide.
        replaced = recorded is not None and (recorded.device, recorded.inode) != (
            file.device,
            file.inode,
        )
        if _unchanged_by_stamp(stamp, file) and not replaced:
            if recorded is None:  # kept before identities were: note it (no read)
                self._note_identity(document, file)
            if document.status == "failed":  # unchanged, and still unread: a failure to fix
                reason = document.status_reason
                out.failed.append(FileFailure.of_document(str(file.path), document.id, reason))
            else:
                out.unchanged += 1
            return
        if file.size == document.size_bytes:
            read = self._read(file)
            if read is None:
                return
            data, stamped = read
            if sha256_hex(data) == document.content_hash:
                # touched, not changed: remember the new stamp so the next sync is cheap
                self._stamps[document.id] = stamped.stamp()
                out.unchanged += 1
                return
            self._add(file, read=read)
            return
        self._add(file)

    def _note_identity(self, document: Document, file: FolderFile) -> None:
        with contextlib.suppress(LociError, OSError):  # else noted at the next sync
            self._stamps[document.id] = stat_identity(file.path, self.fence).stamp()

    # files new at their path ------------------------------------------------------------
    def _elsewhere(self, new: Sequence[FolderFile], known: dict[str, Document]) -> list[Document]:
        """The source's documents outside this reconcile's paths that may be a new file moved:
        those whose recorded identity is a new file's, and whose own file is gone."""
        if self.scope is None or not new:
            return []  # a whole folder's reconcile knows every document of it
        inodes = sorted({f.inode for f in new if f.inode})
        if not inodes:
            return []
        found = self.store.documents_with_inodes(self.brain.id, self.source.path, inodes)
        return [
            d
            for d in found
            if of_source(self.source, d)
            and str(d.source_path) not in known
            and not os.path.lexists(str(d.source_path))
        ]

    def _place(self, file: FolderFile, places: _Places) -> None:
        """A path without a document: a document moved here, else a new one."""
        out = self.result
        candidate = places.by_inode.get((file.device, file.inode))
        maybe_renamed = file.size in places.sizes
        if candidate is None and not maybe_renamed:
            self._add(file, new=True)
            return
        too_large = over_cap(
            clean_name(file.path.name), file.size, self.library.settings.max_file_bytes
        )
        if too_large is not None:
            out.failed.append(FileFailure(str(file.path), too_large.message))
            return
        read = self._read(file)
        if read is None:
            return
        data, stamped = read
        if (
            candidate is not None
            and places.same_file(candidate, stamped)
            and self._move(candidate, read)
        ):
            places.claim(candidate)
            return
        digest = sha256_hex(data)
        moved = places.by_hash.get(digest)
        if moved is not None and self._move(moved, read):
            places.claim(moved)
            return
        self._add(file, read=read, new=True)

    def _move(self, document: Document, read: Read) -> bool:
        """`document`'s file is now the one read (moved or renamed, perhaps edited): the
        document follows it, and takes its bytes if they changed. False if it was removed
        meanwhile."""
        data, stamped = read
        try:
            self.store.move_document(
                self.brain.id, document.id, stamped.path.name, str(stamped.path)
            )
        except NotFound:
            return False
        self.result.renamed += 1
        if sha256_hex(data) == document.content_hash:
            self._stamps[document.id] = stamped.stamp()
        else:  # edited too: the document at its new path gets the new bytes (same id)
            self._add(stamped, read=read)
        return True

    # reading and adding -----------------------------------------------------------------
    def _read(self, file: FolderFile) -> Read | None:
        """The file's bytes, or None with its failure reported."""
        try:
            return read_whole(file.path, reach=self._reach)
        except LociError as error:
            self.result.failed.append(FileFailure(str(file.path), error.message))
        except OSError as error:
            self.result.failed.append(FileFailure(str(file.path), _unread(error)))
        return None

    def _add(self, file: FolderFile, *, read: Read | None = None, new: bool = False) -> None:
        """Add or update `file`'s document, with the next batch. `new`: the path had no
        document in this source (else it updates the document it has)."""
        out = self.result
        too_large = over_cap(
            clean_name(file.path.name), file.size, self.library.settings.max_file_bytes
        )
        if too_large is not None:  # refused before a huge file is read into memory
            out.failed.append(FileFailure(str(file.path), too_large.message))
            return
        if read is None:
            read = self._read(file)
            if read is None:
                return
        self._batch.append((read, new))
        self._batch_bytes += len(read[0])
        if len(self._batch) >= BATCH_FILES or self._batch_bytes >= BATCH_BYTES:
            self._flush()

    def _flush(self) -> None:
        """Keep the batch's files: originals made durable together, rows in one transaction
        (`add_files`); then count what became of each."""
        batch, self._batch, self._batch_bytes = self._batch, [], 0
        if not batch:
            return
        files = [
            FileBytes(stamped.path.name, data, str(stamped.path), {"file": stamped.stamp()})
            for (data, stamped), _ in batch
        ]
        for ((_, stamped), new), outcome in zip(
            batch, add_files(self.library, self.brain, files), strict=True
        ):
            self._added(stamped, new, outcome)

    def _added(self, stamped: FolderFile, new: bool, outcome: AddResult | LociError) -> None:
        out = self.result
        if isinstance(outcome, LociError):
            out.failed.append(FileFailure(str(stamped.path), outcome.message))
            return
        if outcome.deduped:
            earlier = outcome.document.source_path
            if (
                new
                and earlier is not None
                and contains(self.root, Path(earlier))
                and not os.path.lexists(earlier)
            ):
                # The bytes of a file of this folder that is gone: it was renamed or moved,
                # and its deletion is in another batch of the watcher's (or outside the paths
                # looked at): the document follows it.
                try:
                    self.store.move_document(
                        self.brain.id, outcome.document.id, stamped.path.name, str(stamped.path)
                    )
                except NotFound:
                    pass
                else:
                    self._stamps[outcome.document.id] = stamped.stamp()
                    out.renamed += 1
                    return
            # The same bytes are already a document (of another path): nothing new to index,
            # but a copy of a file of this folder is where the document goes if the file goes.
            if (
                earlier is not None
                and earlier != str(stamped.path)
                and contains(self.root, Path(earlier))
            ):
                self._copies.setdefault(outcome.document.id, set()).add(str(stamped.path))
            out.unchanged += 1
            return
        out.queued.append(outcome.document.id)
        if new:
            out.added += 1
        else:
            out.updated += 1

    # documents whose files are gone -----------------------------------------------------
    def _finish(self, gone: Sequence[Document]) -> None:
        self._flush()  # every file kept before a gone document is let go
        out = self.result
        kept: list[int] = []
        for document in gone:
            if self._to_copy(document):
                continue
            if self.source.on_delete == "keep":
                kept.append(document.id)
                continue
            try:
                self.library.remove(self.brain, document.id)
            except NotFound:  # removed meanwhile (`loci rm`, another sync): as good
                continue
            out.removed += 1
        # Kept documents of deleted files are marked gone, once: a later sync changes nothing.
        out.gone = len(self.store.mark_gone(self.brain.id, kept, True)) if kept else 0
        if self._stamps:
            self.store.set_file_stamps(self.brain.id, self._stamps)
        for document_id, paths in self._copies.items():
            with contextlib.suppress(NotFound):  # removed meanwhile: nothing to remember
                self._remember_copies(document_id, paths)

    def _to_copy(self, document: Document) -> bool:
        """Move a document whose file is gone to a copy of that file in the folder, one that
        still holds its bytes and has no document of its own; False if there is none."""
        remembered = [str(p) for p in document.metadata.get("copies") or []]
        if not remembered:
            return False
        try:
            files, _ = walk_paths(
                self.root,
                map(Path, remembered),
                self.source.include,
                self.source.exclude,
                self.fence,
            )
        except OSError:  # the folder gone or swapped meanwhile: no copy to move to
            return False
        for file in files:
            if file.size != document.size_bytes or self.store.find_by_path(
                self.brain.id, str(file.path)
            ):
                continue
            read = self._read(file)
            if read is None or sha256_hex(read[0]) != document.content_hash:
                continue
            if self._move(document, read):
                self._copies.setdefault(document.id, set())  # the copy is its own path now
                return True
        return False

    def _remember_copies(self, document_id: int, found: set[str]) -> None:
        """Add the copies found to those the document remembers, dropping paths that are no
        longer a file, or are the document's own path now."""
        document = self.store.get_document(self.brain.id, document_id)
        paths = {str(p) for p in document.metadata.get("copies") or []} | found
        paths = {p for p in paths if p != document.source_path and os.path.isfile(p)}
        if paths != set(document.metadata.get("copies") or []):
            self.store.merge_document_metadata(document_id, {"copies": sorted(paths)})


class _Places:
    """Where a new file may come from: the documents whose files are gone, by identity and by
    bytes, each claimed by one new file at most."""

    def __init__(self, gone: dict[int, Document], elsewhere: Sequence[Document]) -> None:
        self.gone = gone
        candidates = [*gone.values(), *elsewhere]
        self.by_inode: dict[tuple[int, int], Document] = {}
        for document in candidates:
            recorded = recorded_identity(document.metadata.get("file"))
            if recorded is not None:
                self.by_inode[(recorded.device, recorded.inode)] = document
        self.by_hash = {d.content_hash: d for d in gone.values()}
        self.sizes = {d.size_bytes for d in gone.values()}
        self._claimed: set[int] = set()

    @staticmethod
    def same_file(document: Document, read: FolderFile) -> bool:
        recorded = recorded_identity(document.metadata.get("file"))
        return recorded is not None and same_file(recorded, read.identity)

    def claim(self, document: Document) -> None:
        self._claimed.add(document.id)
        self.by_hash.pop(document.content_hash, None)
        recorded = recorded_identity(document.metadata.get("file"))
        if recorded is not None:
            self.by_inode.pop((recorded.device, recorded.inode), None)

    def unclaimed(self) -> list[Document]:
        return [d for i, d in self.gone.items() if i not in self._claimed]
