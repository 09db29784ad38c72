"""Folders followed as pages (`loci sources add VAULT --as pages`): an Obsidian-style vault kept
as graph pages, both ways. `Sources.sync` hands such a source here.

A sync is `brain import` kept in step, by the graph's own folder sync (`folder_reconcile`) under
a vault's rules: plain notes become draft pages (wikilinks resolved, again when their targets
appear or are renamed), a brain document in a file is stored as it is (its folder taken from
where it sits if it names none), a new file may take over the page of its id as an import
would, a renamed file keeps its page, and a deleted file's page is removed or kept as the
source says. The manifest (`source_pages`) holds each page's file and both hashes at the last
sync, so an edit made in Loci is written back to its file — at once, by a hook on every graph
commit, or at the next sync — and a file changed on both sides is a conflict: reported in the
sync's result and the source's last report, nothing overwritten. `resolve` settles one by
keeping a side.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from loci import confined_paths
from loci.confined_paths import NO_FENCE, Fence
from loci.errors import InvalidInput, LociError, NotFound, UnsupportedSource
from loci.graph.file_writes import stored_document
from loci.graph.folder_reconcile import FolderReconcile, SyncRules
from loci.graph.markdown_folder import read_markdown, safe_path, write_file
from loci.graph.records import GraphDelete, GraphPut
from loci.graph.service import BrainGraph
from loci.graph.sync_manifest import Manifest
from loci.graph.transfer_results import FileResult, TransferReport
from loci.graph.writer import Change
from loci.ingest.folder_walk import unreachable, wanted
from loci.models import Brain, Source
from loci.store.base import Store
from loci.store.blobs import sha256_hex

log = logging.getLogger(__name__)

Keep = Literal["file", "loci"]
ACTOR_PREFIX = "source:"  # a sync writes as "source:<id>": its own writes are not written back


def actor_of(source: Source) -> str:
    return f"{ACTOR_PREFIX}{source.id}"


@dataclass
class PagesSync:
    """What one sync of a folder followed as pages did, counted by the graph's actions."""

    files: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    refused: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    conflicts: list[tuple[str, str]] = field(default_factory=list)
    queued: list[int] = field(default_factory=list)  # pages' documents to index
    unreachable: str | None = None


class PageSources:
    """`fence`: Loci's own data, never read by a vault that holds it (`loci.confined_paths`)."""

    def __init__(self, store: Store, graph: BrainGraph, fence: Fence = NO_FENCE) -> None:
        self.store = store
        self.graph = graph
        self.fence = fence
        self._locks: dict[int, threading.Lock] = {}
        self._locks_lock = threading.Lock()
        graph.writer.after_commit.append(self._written_in_loci)

    def sync(self, brain: Brain, source: Source) -> PagesSync:
        result = PagesSync()
        with self._lock(source.id):
            manifest = self._manifest(brain, source)
            root = Path(source.path)
            result.unreachable = unreachable(root, bool(manifest.documents), self.fence)
            if result.unreachable is not None:
                return result
            before = {k: dict(v) for k, v in manifest.documents.items()}
            reconcile = FolderReconcile(self.graph, self.fence)
            try:
                report = reconcile.run(
                    brain,
                    root,
                    manifest,
                    _rules(source),
                    actor=actor_of(source),
                    wanted=lambda path: wanted(path, source.include, source.exclude),
                )
            except (NotFound, UnsupportedSource) as error:  # gone or swapped since the look
                result.unreachable = error.message
                return result
            self._save(brain, source, before, manifest)
        return self._summed(brain, report, reconcile.scanned)

    def remove_pages(self, brain: Brain, source: Source) -> int:
        """Delete the pages of a source about to be no longer followed (each as a sync would:
        not one changed in Loci since, which stays); how many went. The files stay."""
        removed = 0
        for doc_id, entry in self._manifest(brain, source).documents.items():
            current = stored_document(self.graph, brain, doc_id)
            if current is None or current.content_hash != entry["hash"]:
                continue
            delete = GraphDelete(doc_id, entry["hash"], action="source-removed")
            self.graph.writer.commit(brain.id, [delete], actor_of(source))
            removed += 1
        return removed

    def resolve(self, brain: Brain, source: Source, path: str, keep: Keep) -> None:
        """Settle the conflict on `path` by keeping one side, which the next sync then
        carries to the other: the file's text into the page, or the page into the file.
        The side given up is not lost: a page keeps its history, a file goes to `.trash/`."""
        if source.mode != "pages":
            raise InvalidInput(f"source #{source.id} keeps files, not pages: nothing to resolve")
        if keep not in ("file", "loci"):
            raise InvalidInput(f"keep must be file or loci, got {keep!r}")
        with self._lock(source.id):
            manifest = self._manifest(brain, source)
            found = [i for i, e in manifest.documents.items() if e["path"] == path]
            if not found:
                raise NotFound(f"{path} is no page of source #{source.id} (see its last sync)")
            doc_id = found[0]
            before = {k: dict(v) for k, v in manifest.documents.items()}
            entry = manifest.documents[doc_id]
            root = Path(source.path)
            target = safe_path(root, path)
            try:
                confined_paths.lstat(target, self.fence)
            except FileNotFoundError:
                on_disk = None
            except OSError as error:
                raise InvalidInput(f"{path} cannot be reached: {error}") from None
            else:
                on_disk = read_markdown(target, path, self.fence)
            current = stored_document(self.graph, brain, doc_id)
            if on_disk is not None and on_disk.text is None:
                raise InvalidInput(f"{path} cannot be read: {on_disk.error}")
            if keep == "file":
                if current is None:
                    del manifest.documents[doc_id]  # the file is new to the next sync
                else:
                    entry["hash"] = current.content_hash  # as if Loci had not changed it
            elif on_disk is None:
                if current is not None:  # deleted in the folder, changed in Loci: put it back
                    try:
                        write_file(target, current.content.encode("utf-8"), self.fence)
                    except OSError as error:
                        raise InvalidInput(f"{path} cannot be written: {error}") from None
                    manifest.record(doc_id, path, current.content_hash, current.content_hash)
            else:  # as if the file had not changed: Loci's side goes to it, or its deletion
                entry["file"] = sha256_hex((on_disk.text or "").encode("utf-8"))
            self._save(brain, source, before, manifest)

    # writing back what Loci changed ------------------------------------------------------
    def _written_in_loci(self, brain_id: int, changes: Sequence[Change], actor: str) -> None:
        if actor.startswith(ACTOR_PREFIX):
            return  # a sync's own write: its file is where the text came from
        ids = [c.id for c in changes]
        renamed = {
            c.previous_id: c.id for c in changes if isinstance(c, GraphPut) and c.previous_id
        }
        try:
            followed = [s for s in self.store.sources(brain_id) if s.mode == "pages"]
            for source in followed:
                self._write_back(source, ids, renamed)
        except (LociError, OSError) as error:
            # The edit is committed; its file follows at the next sync, which says why not.
            log.warning("writing pages back to their files failed: %s", error)

    def _write_back(self, source: Source, ids: list[str], renamed: dict[str, str]) -> None:
        lock = self._lock(source.id)
        if not lock.acquire(blocking=False):
            return  # a sync of this folder is running: it, or the next, writes the page back
        try:
            brain = self.store.get_brain_by_id(source.brain_id)
            manifest = self._manifest(brain, source)
            tracked = [i for i in (*ids, *renamed) if i in manifest.documents]
            if not tracked:
                return
            before = {k: dict(v) for k, v in manifest.documents.items()}
            for old, new in renamed.items():  # a page given a new id keeps its file
                if old in manifest.documents:
                    manifest.documents[new] = manifest.documents.pop(old)
            root = Path(source.path)
            FolderReconcile(self.graph, self.fence).write_back(brain, root, manifest, ids)
            self._save(brain, source, before, manifest)
        finally:
            lock.release()

    # plumbing ----------------------------------------------------------------------------
    def _lock(self, source_id: int) -> threading.Lock:
        with self._locks_lock:
            return self._locks.setdefault(source_id, threading.Lock())

    def _manifest(self, brain: Brain, source: Source) -> Manifest:
        return Manifest(brain.name, self.store.source_pages(brain.id, source.id))

    def _save(
        self, brain: Brain, source: Source, before: dict[str, dict[str, str]], after: Manifest
    ) -> None:
        changed = {k: v for k, v in after.documents.items() if before.get(k) != v}
        removed = [k for k in before if k not in after.documents]
        if changed or removed:
            self.store.update_source_pages(brain.id, source.id, changed, removed)

    def _summed(self, brain: Brain, report: TransferReport, files: int) -> PagesSync:
        result = PagesSync(files=files)
        result.counts = dict(report.counts)
        for f in report.files:
            if f.action == "refused":
                result.refused.append((f.path, "; ".join(f.problems) or f.message))
            elif f.action == "conflict":
                result.conflicts.append((f.path, f.message or "; ".join(f.problems)))
            elif f.action in ("created", "updated", "renamed") and f.id:
                queued = _document_of(self.graph, brain, f)
                if queued is not None:
                    result.queued.append(queued)
        return result


def _rules(source: Source) -> SyncRules:
    return SyncRules(
        plain_pages=True, adopt=True, write_back=True, keep_deleted=source.on_delete == "keep"
    )


def _document_of(graph: BrainGraph, brain: Brain, f: FileResult) -> int | None:
    """The indexed document of a page a sync wrote, if it is waiting to be indexed."""
    if f.id is None:
        return None
    record = stored_document(graph, brain, f.id)
    if record is None or record.document_id is None:
        return None
    try:
        document = graph.store.get_document(brain.id, record.document_id)
    except NotFound:
        return None
    return document.id if document.status == "processing" else None
