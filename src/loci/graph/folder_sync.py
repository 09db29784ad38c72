"""`loci brain materialize` and `loci brain sync`: the brain as a working directory of Markdown.

`materialize` writes the documents with a hidden manifest holding each one's content hash; `sync`
brings the directory's edits, new files and deletions back through the validated writes, each
against the hash recorded at materialization. A document that changed in the brain meanwhile is a
conflict: reported, and nothing overwritten either way. The sync itself is `folder_reconcile`'s,
which a vault followed as pages (`loci sources add VAULT --as pages`) runs with its own rules.
"""

from __future__ import annotations

from pathlib import Path

from loci.errors import Conflict, InvalidInput
from loci.graph.folder_reconcile import FolderReconcile, SyncRules
from loci.graph.markdown_folder import (
    remove_empty_folders,
    remove_file,
    safe_path,
    scan_markdown,
    write_file,
)
from loci.graph.service import BrainGraph
from loci.graph.sync_manifest import (
    MANIFEST,
    Manifest,
    file_hash,
    read_manifest,
    write_manifest,
)
from loci.graph.transfer_results import FileResult, TransferReport, summarize
from loci.models import Brain
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
                remove_file(safe_path(root, entry["path"]))
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
        recorded = {e["path"]: file_hash(e) for e in manifest.documents.values()}
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
        when materialized; a document that changed in the brain since is a conflict
        (`folder_reconcile`, with a materialized brain's rules)."""
        manifest = read_manifest(root)
        if manifest.brain != brain.name:
            raise InvalidInput(
                f"{str(root)!r} was materialized from brain {manifest.brain!r}, "
                f"not {brain.name!r}; pass --brain {manifest.brain}"
            )
        report = FolderReconcile(self.graph).run(brain, root, manifest, SyncRules(), actor=actor)
        write_manifest(root, manifest)
        return report
