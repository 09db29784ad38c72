"""`loci brain materialize` and `loci brain sync`: the brain as a working directory of Markdown.

`materialize` writes the documents with a hidden manifest holding each one's content hash; `sync`
brings the directory's edits, new files and deletions back through the validated writes, each
against the hash recorded at materialization. A document that changed in the brain meanwhile is a
conflict: reported, and nothing overwritten either way.
"""

from __future__ import annotations

from pathlib import Path

from loci.errors import Conflict, InvalidInput, NotFound
from loci.graph.document import BrainDoc, parse
from loci.graph.file_writes import commit_alone, stored_document, validation_problems
from loci.graph.markdown_folder import (
    MarkdownFile,
    is_graph_document,
    remove_empty_folders,
    safe_path,
    scan_markdown,
    write_file,
)
from loci.graph.service import BrainGraph
from loci.graph.sync_manifest import MANIFEST, Manifest, read_manifest, write_manifest
from loci.graph.transfer_results import FileResult, TransferReport, duplicate_claim, summarize
from loci.models import Brain, GraphDelete
from loci.store.blobs import sha256_hex


class FolderSync:
    def __init__(self, graph: BrainGraph) -> None:
        self.graph = graph
        self.store = graph.graph

    def materialize(self, brain: Brain, root: Path, *, force: bool = False) -> TransferReport:
        """Write the brain to `root` with a manifest of each document's hash. `root` must be
        empty or an earlier materialization of this brain with nothing left to sync (`force`
        discards what is left)."""
        manifest_path = root / MANIFEST
        if root.is_dir() and any(root.iterdir()):
            if not manifest_path.is_file():
                raise InvalidInput(
                    f"{str(root)!r} is not empty and holds no materialized brain; "
                    "choose an empty or new directory"
                )
            old = read_manifest(root)
            if old.brain != brain.name:
                raise InvalidInput(
                    f"{str(root)!r} holds brain {old.brain!r}, not {brain.name!r}; "
                    "choose another directory"
                )
            pending = self._unsynced(root, old)
            if pending and not force:
                shown = ", ".join(pending[:5]) + (" …" if len(pending) > 5 else "")
                raise Conflict(
                    f"{len(pending)} file(s) changed since materialize and not synced back "
                    f"({shown}); run `loci brain sync` first, or --force to discard them"
                )
            for entry in old.documents.values():
                safe_path(root, entry["path"]).unlink(missing_ok=True)
        root.mkdir(parents=True, exist_ok=True)
        manifest = Manifest(brain.name, {})
        files = []
        for record in self.store.documents(brain.id):
            rel = f"{record.folder}/{record.id}.md"
            write_file(safe_path(root, rel), record.content.encode("utf-8"))
            manifest.documents[record.id] = {"path": rel, "hash": record.content_hash}
            files.append(FileResult(rel, record.id, "written"))
        write_manifest(root, manifest)
        remove_empty_folders(root)
        return summarize("materialize", brain, files)

    def _unsynced(self, root: Path, manifest: Manifest) -> list[str]:
        recorded = {e["path"]: e["hash"] for e in manifest.documents.values()}
        pending = []
        seen = set()
        for f in scan_markdown(root):
            seen.add(f.path)
            text_hash = sha256_hex(f.text.encode("utf-8")) if f.text is not None else None
            if recorded.get(f.path) != text_hash:
                pending.append(f.path)
        pending += [p for p in recorded if p not in seen]
        return pending

    def sync(self, brain: Brain, root: Path, *, actor: str) -> TransferReport:
        """Bring the directory's edits back. Each file is written against the hash it had
        when materialized; a document that changed in the brain since is a conflict."""
        manifest = read_manifest(root)
        if manifest.brain != brain.name:
            raise InvalidInput(
                f"{str(root)!r} was materialized from brain {manifest.brain!r}, "
                f"not {brain.name!r}; pass --brain {manifest.brain}"
            )
        by_path = manifest.by_path
        results: list[FileResult] = []
        claims: dict[str, list[tuple[MarkdownFile, BrainDoc]]] = {}
        present: set[str] = set()  # ids whose file is there, even if it cannot be read now
        for f in scan_markdown(root):
            if f.path in by_path:
                present.add(by_path[f.path])
            if f.text is None:
                results.append(FileResult(f.path, None, "refused", problems=(f.error or "",)))
                continue
            if not is_graph_document(f.text):
                reason = (
                    "frontmatter: no id and kind, so not a brain document; plain Markdown "
                    "comes in with `loci brain import`"
                )
                results.append(FileResult(f.path, None, "refused", problems=(reason,)))
                continue
            try:
                doc = parse(f.text)
            except InvalidInput as error:
                results.append(FileResult(f.path, None, "refused", problems=(error.message,)))
                continue
            claims.setdefault(doc.id, []).append((f, doc))
        for doc_id, claimed in claims.items():
            present.add(doc_id)
            if len(claimed) > 1:
                paths = [f.path for f, _ in claimed]
                for f, _ in claimed:
                    others = ", ".join(p for p in paths if p != f.path)
                    results.append(duplicate_claim(f.path, doc_id, others))
                continue
            f, doc = claimed[0]
            results.append(self._sync_file(brain, manifest, f, doc, actor))
        for doc_id, entry in list(manifest.documents.items()):
            if doc_id not in present:
                results.append(self._sync_delete(brain, manifest, doc_id, entry, actor))
        write_manifest(root, manifest)
        return summarize("sync", brain, results)

    def _sync_file(
        self, brain: Brain, manifest: Manifest, f: MarkdownFile, doc: BrainDoc, actor: str
    ) -> FileResult:
        assert f.text is not None
        text_hash = sha256_hex(f.text.encode("utf-8"))
        entry = manifest.documents.get(doc.id)
        if entry is not None and entry["hash"] == text_hash:
            entry["path"] = f.path
            return FileResult(f.path, doc.id, "unchanged")
        problems = validation_problems(doc)
        if problems:
            return FileResult(f.path, doc.id, "refused", problems=problems)
        current = stored_document(self.graph, brain, doc.id)
        if current is not None and current.content_hash == text_hash:
            manifest.documents[doc.id] = {"path": f.path, "hash": text_hash}
            return FileResult(f.path, doc.id, "unchanged", message="the brain already has it")
        if entry is None and current is not None:
            return FileResult(
                f.path, doc.id, "conflict",
                message=f"a document {doc.id!r} was created in the brain after materialize; "
                "nothing was written — pick another id, or materialize again and redo the edit",
            )  # fmt: skip
        if entry is not None and (current is None or current.content_hash != entry["hash"]):
            return FileResult(f.path, doc.id, "conflict", message=_changed_in_brain(doc.id))
        expected = entry["hash"] if entry else None
        failure = commit_alone(
            self.graph,
            brain,
            lambda: self.graph.writer.put_text(f.text or "", expected_hash=expected, action="sync"),
            actor,
        )
        if failure:
            # The brain moved between the read above and the write: still a conflict.
            action = "conflict" if isinstance(failure, Conflict | NotFound) else "refused"
            return FileResult(f.path, doc.id, action, problems=(failure.message,))
        manifest.documents[doc.id] = {"path": f.path, "hash": text_hash}
        return FileResult(f.path, doc.id, "updated" if entry else "created")

    def _sync_delete(
        self, brain: Brain, manifest: Manifest, doc_id: str, entry: dict[str, str], actor: str
    ) -> FileResult:
        current = stored_document(self.graph, brain, doc_id)
        if current is None:
            del manifest.documents[doc_id]
            return FileResult(entry["path"], doc_id, "deleted", message="already gone")
        if current.content_hash != entry["hash"]:
            return FileResult(entry["path"], doc_id, "conflict", message=_changed_in_brain(doc_id))
        failure = commit_alone(
            self.graph,
            brain,
            lambda: GraphDelete(doc_id, entry["hash"], action="sync-delete"),
            actor,
        )
        if failure:
            return FileResult(entry["path"], doc_id, "conflict", problems=(failure.message,))
        del manifest.documents[doc_id]
        return FileResult(entry["path"], doc_id, "deleted", message="its last version is kept")


def _changed_in_brain(doc_id: str) -> str:
    return (
        f"{doc_id} changed in the brain since it was materialized; nothing was written either "
        f"way — see `loci brain history {doc_id}`, then materialize again (--force) and redo "
        "the edit"
    )
