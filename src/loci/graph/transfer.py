"""A brain's graph in and out of folders of Markdown: import, export, materialize and sync.

- `import_folder` (`folder_import`) reads a folder (an Obsidian vault, or an earlier export):
  brain documents are stored byte for byte, any other Markdown file becomes a draft `note` page
  (`plain_pages`).
- `export` writes every document to `folder/id.md` exactly as stored.
- `materialize` and `sync` (`folder_sync`) round-trip a working directory, each edit written
  against the hash recorded at materialization (`sync_manifest`), so a document that changed in
  the brain meanwhile is a conflict and nothing is overwritten either way.

Each file is its own write, so a bad file fails alone and is reported with what to fix
(`file_writes`, `transfer_results`). The folder a person names is resolved first — a link on
its path is what they mean — and nothing inside it is followed (`markdown_folder`).
"""

from __future__ import annotations

from pathlib import Path

from loci.graph.folder_import import FolderImport
from loci.graph.folder_sync import FolderSync
from loci.graph.markdown_folder import safe_path, write_file
from loci.graph.service import BrainGraph
from loci.graph.transfer_results import FileResult, TransferReport, summarize
from loci.models import Brain


class GraphTransfer:
    def __init__(self, graph: BrainGraph) -> None:
        self.graph = graph
        self.store = graph.graph

    def import_folder(self, brain: Brain, root: Path, *, actor: str) -> TransferReport:
        """A folder's Markdown into the brain (`folder_import`)."""
        return FolderImport(self.graph).run(brain, root.resolve(), actor=actor)

    def export(self, brain: Brain, root: Path) -> TransferReport:
        """Every document (merged and archived too) at `folder/id.md`, exactly as stored."""
        root = root.resolve()
        root.mkdir(parents=True, exist_ok=True)
        files = []
        for record in self.store.documents(brain.id):
            rel = f"{record.folder}/{record.id}.md"
            target = safe_path(root, rel)
            data = record.content.encode("utf-8")
            if target.is_file() and target.read_bytes() == data:
                files.append(FileResult(rel, record.id, "unchanged"))
                continue
            write_file(target, data)
            files.append(FileResult(rel, record.id, "written"))
        return summarize("export", brain, files)

    def materialize(self, brain: Brain, root: Path, *, force: bool = False) -> TransferReport:
        """The brain into a working directory to edit (`folder_sync`)."""
        return FolderSync(self.graph).materialize(brain, root.resolve(), force=force)

    def sync(self, brain: Brain, root: Path, *, actor: str) -> TransferReport:
        """The working directory's edits back into the brain (`folder_sync`)."""
        return FolderSync(self.graph).sync(brain, root.resolve(), actor=actor)
