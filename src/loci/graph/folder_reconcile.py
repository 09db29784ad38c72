"""One sync of a folder of Markdown with the brain, against the manifest of the last one: what
`loci brain sync` does to a materialized brain, and what a vault followed as pages
(`loci sources add VAULT --as pages`) gets on every `loci sync`.

Each file is compared with its manifest entry (`sync_manifest`), on both sides: the file's hash
then and now, the page's hash then and now.

    file same,    page same      unchanged (a plain note is read again: its links may resolve
                                 to pages that appeared or were renamed since)
    file changed, page same      the file's text goes into the page, written against the hash
    file same,    page changed   written back to the file (`write_back`), else left for later
    file changed, page changed   a conflict: reported, nothing written either way — unless
                                 both now say the same
    file gone                    the page is deleted (or kept: `keep_deleted`), unless it
                                 changed since: a conflict
    page gone, file same         the file goes to the folder's `.trash/` (`write_back`)

A file with no entry is new: a brain document in it is created — or, with `adopt`, written over
the page of its id as `brain import` would (history keeps what it replaced). A plain note
becomes a draft page (`plain_pages`, `plain_pages.py`); a renamed one keeps its page, found by
its unchanged text. Every write is its own validated commit (`file_writes`), so a bad file
fails alone. The folder is read and written confined (`markdown_folder`, `loci.confined_paths`):
never through a link, never into Loci's own data (`fence`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loci.confined_paths import NO_FENCE, Fence
from loci.errors import Conflict, InvalidInput, NotFound
from loci.graph.document import BrainDoc, parse
from loci.graph.file_writes import commit_alone, stored_document, validation_problems
from loci.graph.folder_import import name_resolver, not_from_this_file, placed
from loci.graph.links import PLAIN_LINK, slugify
from loci.graph.markdown_folder import (
    MarkdownFile,
    is_graph_document,
    move_file,
    read_markdown,
    safe_path,
    scan_markdown,
    write_file,
)
from loci.graph.plain_pages import (
    IMPORTED_FROM,
    PlainFile,
    plain_id,
    plain_page,
    same_page,
    split_plain,
)
from loci.graph.records import GraphDelete, GraphDocument, GraphPut
from loci.graph.service import BrainGraph
from loci.graph.sync_manifest import Entry, Manifest, file_hash
from loci.graph.transfer_results import FileResult, TransferReport, duplicate_claim, summarize
from loci.graph.writer import Change
from loci.models import Brain
from loci.store.blobs import sha256_hex

TRASH = ".trash"  # where Obsidian puts deleted notes too; hidden, so never synced


@dataclass(frozen=True)
class SyncRules:
    """How a folder is kept; the defaults are a materialized brain's (`loci brain sync`)."""

    plain_pages: bool = False  # plain Markdown becomes pages (else it is refused)
    adopt: bool = False  # a new file may write over the page of its id, as an import would
    write_back: bool = False  # pages changed in the brain are written to their files
    keep_deleted: bool = False  # a deleted file leaves its page in the brain


@dataclass(frozen=True)
class Candidate:
    """A file on its way into the brain: the page it reads as, and how to write it."""

    path: str
    id: str
    file_hash: str
    converted: bool  # plain Markdown made a page
    notes: str
    problems: tuple[str, ...]
    same_as: Callable[[GraphDocument], bool]  # the stored page already says what the file does
    put: Callable[[GraphDocument | None, str | None], GraphPut]  # (current, expected hash)
    mine: Callable[[GraphDocument], bool]  # the file may take over this page (no entry yet)
    # A plain note with [[links]]: worth reading again when names change — and `same_links`
    # says, without reading the page's YAML, whether they still resolve as the page has them.
    relinks: bool = False
    same_links: Callable[[GraphDocument], bool] = lambda _current: True


def _hash(text: str) -> str:
    return sha256_hex(text.encode("utf-8"))


class FolderReconcile:
    def __init__(self, graph: BrainGraph, fence: Fence = NO_FENCE) -> None:
        self.graph = graph
        self.store = graph.graph
        self.fence = fence
        self.scanned = 0  # Markdown files the last run found in the folder

    def run(
        self,
        brain: Brain,
        root: Path,
        manifest: Manifest,
        rules: SyncRules,
        *,
        actor: str,
        wanted: Callable[[str], bool] | None = None,
    ) -> TransferReport:
        """Bring the folder and the brain in step; `manifest` is updated in place. `wanted`
        picks the files (by path in the folder) that take part; the others count as gone."""
        scanned = scan_markdown(root, self.fence)
        files = [f for f in scanned if wanted is None or wanted(f.path)]
        self.scanned = len(files)
        by_path = manifest.by_path
        results: dict[str, FileResult] = {}
        present: set[str] = set()  # ids whose file is there, even if it cannot be read now
        graph_files: list[tuple[MarkdownFile, MarkdownFile, BrainDoc]] = []  # as read, placed
        plain: list[PlainFile] = []
        for f in files:
            if f.path in by_path:
                present.add(by_path[f.path])
            if f.text is None:
                results[f.path] = FileResult(f.path, None, "refused", problems=(f.error or "",))
                continue
            try:
                if is_graph_document(f.text):
                    shown = placed(f)
                    graph_files.append((f, shown, parse(shown.text or "")))
                elif rules.plain_pages:
                    plain.append(split_plain(f))
                else:
                    reason = (
                        "frontmatter: no id and kind, so not a brain document; plain Markdown "
                        "comes in with `loci brain import`"
                    )
                    results[f.path] = FileResult(f.path, None, "refused", problems=(reason,))
            except InvalidInput as error:
                results[f.path] = FileResult(f.path, None, "refused", problems=(error.message,))
        claimed = self._claim_graph_ids(graph_files, results, present)
        self._claim_plain_ids(plain, manifest, {f.path for f in files}, claimed, results, present)
        gone = [i for i in manifest.documents if i not in present]
        resolve = name_resolver(
            self.store,
            brain,
            [(shown, doc) for f, shown, doc in graph_files if f.path not in results],
            [item for item in plain if item.file.path not in results],
            forget=() if rules.keep_deleted else gone,
        )
        candidates = [self._graph_candidate(f, shown, doc) for f, shown, doc in graph_files]
        candidates += [self._plain_candidate(item, resolve) for item in plain]
        for candidate in candidates:
            if candidate.path not in results:
                results[candidate.path] = self._sync(brain, root, manifest, candidate, rules, actor)
        done = [results[f.path] for f in files]
        for doc_id in gone:
            done.append(self._deleted(brain, manifest, doc_id, rules, actor))
        return summarize("sync", brain, done)

    def write_back(
        self, brain: Brain, root: Path, manifest: Manifest, ids: Sequence[str]
    ) -> list[FileResult]:
        """Pages of `ids` changed in the brain, written to their files at once (a vault kept as
        pages, after an edit in Loci) — only where the file is as the last sync left it; the
        rest waits for the next sync, which reports a conflict."""
        done = []
        for doc_id in ids:
            entry = manifest.documents.get(doc_id)
            if entry is None:
                continue
            current = stored_document(self.graph, brain, doc_id)
            if current is not None and current.content_hash == entry["hash"]:
                continue
            result = self._write_back(brain, root, manifest, doc_id, current)
            if result is not None:
                done.append(result)
        return done

    # ids ---------------------------------------------------------------------------------
    @staticmethod
    def _claim_graph_ids(
        graph_files: list[tuple[MarkdownFile, MarkdownFile, BrainDoc]],
        results: dict[str, FileResult],
        present: set[str],
    ) -> dict[str, str]:
        """id → the one file that names it; files that name the same id are refused, and the
        page of that id is left as it is."""
        claims: dict[str, list[str]] = {}
        for f, _, doc in graph_files:
            claims.setdefault(doc.id, []).append(f.path)
        for doc_id, paths in claims.items():
            present.add(doc_id)
            if len(paths) > 1:
                for path in paths:
                    others = ", ".join(p for p in paths if p != path)
                    results[path] = duplicate_claim(path, doc_id, others)
        return {doc_id: paths[0] for doc_id, paths in claims.items() if len(paths) == 1}

    @staticmethod
    def _claim_plain_ids(
        plain: list[PlainFile],
        manifest: Manifest,
        paths: set[str],
        claimed: dict[str, str],
        results: dict[str, FileResult],
        present: set[str],
    ) -> None:
        """A plain note keeps the page its path had; a new one whose text a vanished file had
        is that file renamed and keeps its page; any other takes its name's slug."""
        by_path = manifest.by_path
        vanished = {
            file_hash(entry): doc_id
            for doc_id, entry in manifest.documents.items()
            if entry["path"] not in paths and doc_id not in present
        }
        fresh = []
        for item in plain:
            known = by_path.get(item.file.path)
            if known is None:
                known = vanished.pop(_hash(item.file.text or ""), None)
            if known is None or known in claimed:
                fresh.append(item)
                continue
            item.id = known
            claimed[known] = item.file.path
            present.add(known)
        for item in fresh:
            item.id = plain_id(item, claimed)
            if not item.id:
                results[item.file.path] = duplicate_claim(item.file.path, slugify(item.stem), "")
                continue
            claimed[item.id] = item.file.path
            present.add(item.id)

    # candidates ----------------------------------------------------------------------------
    def _graph_candidate(self, f: MarkdownFile, shown: MarkdownFile, doc: BrainDoc) -> Candidate:
        text = shown.text or ""
        notes = "line endings normalized" if f.normalized else ""
        return Candidate(
            path=f.path,
            id=doc.id,
            file_hash=_hash(f.text or ""),
            converted=f.normalized,
            notes=notes,
            problems=validation_problems(doc),
            same_as=lambda current: current.content == text,
            put=lambda _current, expected: self.graph.writer.put_text(
                text, expected_hash=expected, action="sync"
            ),
            mine=lambda _current: True,
        )

    def _plain_candidate(
        self, item: PlainFile, resolve: Callable[[str], tuple[str, str] | None]
    ) -> Candidate:
        doc, notes = plain_page(item, resolve)
        path = item.file.path

        def put(current: GraphDocument | None, expected: str | None) -> GraphPut:
            kept = doc.with_changes(created=parse(current.content).created) if current else doc
            return self.graph.writer.put(kept, expected_hash=expected, action="sync")

        return Candidate(
            path=path,
            id=item.id,
            file_hash=_hash(item.file.text or ""),
            converted=True,
            notes=notes,
            problems=validation_problems(doc),
            same_as=lambda current: same_page(parse(current.content), doc),
            put=put,
            mine=lambda current: parse(current.content).extra.get(IMPORTED_FROM) == path,
            relinks=PLAIN_LINK.search(item.body) is not None,
            # The page was made from this same text, so only its links can differ; its truth
            # stands in the stored Markdown as rendered.
            same_links=lambda current: doc.truth.strip("\n") in current.content,
        )

    # one file ------------------------------------------------------------------------------
    def _sync(
        self,
        brain: Brain,
        root: Path,
        manifest: Manifest,
        c: Candidate,
        rules: SyncRules,
        actor: str,
    ) -> FileResult:
        entry = manifest.documents.get(c.id)
        current = stored_document(self.graph, brain, c.id)
        moved = entry is not None and entry["path"] != c.path

        def result(action: str, message: str = "", problems: tuple[str, ...] = ()) -> FileResult:
            notes = "; ".join(n for n in (c.notes, message) if n)
            return FileResult(c.path, c.id, action, c.converted, problems, notes)

        if entry is not None and file_hash(entry) == c.file_hash:  # the file is as it was
            if current is None or current.content_hash != entry["hash"]:  # the page is not
                entry["path"] = c.path
                if not rules.write_back:
                    return result("unchanged")
                written = self._write_back(brain, root, manifest, c.id, current)
                return written or result("unchanged")
            if c.same_as(current) if moved else (not c.relinks or c.same_links(current)):
                entry["path"] = c.path
                return result("renamed" if moved else "unchanged")
            # The same text reads as another page now: moved to another folder, or its links
            # name pages that appeared or were renamed since.
            why = "" if moved else "its links resolved again"
            return self._commit(brain, manifest, c, current, current.content_hash, actor) or (
                result("renamed" if moved else "updated", why)
            )
        if c.problems:
            return result("refused", problems=c.problems)
        if current is not None and c.same_as(current):
            manifest.record(c.id, c.path, current.content_hash, c.file_hash)
            return result("unchanged", "the brain already has it")
        expected: str | None = None
        if entry is None and current is not None:
            if not rules.adopt:
                return result(
                    "conflict",
                    f"a document {c.id!r} was created in the brain after materialize; nothing"
                    " was written — pick another id, or materialize again and redo the edit",
                )
            if not c.mine(current):
                return result("refused", problems=(not_from_this_file(c.id),))
            expected = current.content_hash
        elif entry is not None:
            if current is None or current.content_hash != entry["hash"]:
                return result("conflict", _changed_on_both_sides(c.id, rules))
            expected = entry["hash"]
        failure = self._commit(brain, manifest, c, current, expected, actor)
        if failure is not None:
            return failure
        if current is None:
            return result("created")
        kept = "the version it replaced is kept in history" if entry is None else ""
        return result("updated", kept)

    def _commit(
        self,
        brain: Brain,
        manifest: Manifest,
        c: Candidate,
        current: GraphDocument | None,
        expected: str | None,
        actor: str,
    ) -> FileResult | None:
        """Write the file's page against `expected` and record it; the refusal, or None."""
        written: list[GraphPut] = []

        def change() -> Change:
            written.append(c.put(current, expected))
            return written[0]

        failure = commit_alone(self.graph, brain, change, actor)
        if failure is not None:
            # The brain moved between the read and the write: still a conflict.
            action = "conflict" if isinstance(failure, Conflict | NotFound) else "refused"
            return FileResult(c.path, c.id, action, c.converted, (failure.message,))
        manifest.record(c.id, c.path, written[0].content_hash, c.file_hash)
        return None

    def _deleted(
        self, brain: Brain, manifest: Manifest, doc_id: str, rules: SyncRules, actor: str
    ) -> FileResult:
        """The file of `doc_id` is gone: so goes its page (or it stays: `keep_deleted`)."""
        entry = manifest.documents[doc_id]
        path = entry["path"]
        current = stored_document(self.graph, brain, doc_id)
        if current is None:
            del manifest.documents[doc_id]
            return FileResult(path, doc_id, "deleted", message="already gone")
        if current.content_hash != entry["hash"]:
            return FileResult(path, doc_id, "conflict", message=_deleted_but_changed(doc_id, rules))
        if rules.keep_deleted:
            del manifest.documents[doc_id]
            return FileResult(path, doc_id, "gone", message="its file was deleted; the page stays")
        failure = commit_alone(
            self.graph,
            brain,
            lambda: GraphDelete(doc_id, entry["hash"], action="sync-delete"),
            actor,
        )
        if failure:
            return FileResult(path, doc_id, "conflict", problems=(failure.message,))
        del manifest.documents[doc_id]
        return FileResult(path, doc_id, "deleted", message="its last version is kept")

    def _write_back(
        self,
        brain: Brain,
        root: Path,
        manifest: Manifest,
        doc_id: str,
        current: GraphDocument | None,
    ) -> FileResult | None:
        """The page as the brain has it now into its file (None: the file changed since it
        was read, is not there, or cannot be reached now; the next sync tells)."""
        entry: Entry = manifest.documents[doc_id]
        path = entry["path"]
        target = safe_path(root, path)
        on_disk = read_markdown(target, path, self.fence)
        if on_disk.text is None or _hash(on_disk.text) != file_hash(entry):
            return None
        try:
            if current is None:
                # Into the folder's `.trash/`, under its path there, as Obsidian does with a
                # note deleted in it.
                move_file(target, safe_path(root, f"{TRASH}/{path}"), self.fence)
            else:
                write_file(target, current.content.encode("utf-8"), self.fence)
        except OSError:  # a folder on the way swapped for a link, or gone, since the read
            return None
        if current is None:
            del manifest.documents[doc_id]
            return FileResult(
                path, doc_id, "deleted", message=f"deleted in Loci; the file is in {TRASH}/ now"
            )
        manifest.record(doc_id, path, current.content_hash, current.content_hash)
        return FileResult(path, doc_id, "written", message="changed in Loci; written to the file")


def _changed_on_both_sides(doc_id: str, rules: SyncRules) -> str:
    if not rules.write_back:
        return (
            f"{doc_id} changed in the brain since it was materialized; nothing was written either "
            f"way — see `loci brain history {doc_id}`, then materialize again (--force) and redo "
            "the edit"
        )
    return (
        f"{doc_id} changed both in Loci and in its file since the last sync; nothing was written"
        f" either way — make the file say what you want kept (`loci brain get {doc_id}` shows"
        " Loci's text), and the next sync takes it"
    )


def _deleted_but_changed(doc_id: str, rules: SyncRules) -> str:
    if not rules.write_back:
        return _changed_on_both_sides(doc_id, rules)
    return (
        f"the file of {doc_id} was deleted, but the page changed in Loci since the last sync;"
        f" nothing was deleted — put the file back, or delete the page"
        f" (`loci brain delete {doc_id} --confirm`)"
    )
