"""The manifest of a folder kept in step with the brain: for each document, the file it lives
in and its content hash at the last sync, which the next sync writes each edit against.

A materialized brain keeps it in a hidden file (`MANIFEST`); a vault followed as pages keeps it
in the database (`source_pages`). Where the file's text is not the page's (a plain note became
a page; a folder line was added), the entry also holds the file's own hash (`file`), so an edit
on either side is told apart from the other."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from loci.errors import InvalidInput
from loci.graph.markdown_folder import write_file

MANIFEST = ".loci-brain.json"
MANIFEST_FORMAT = 1


Entry = dict[str, str]  # {"path": …, "hash": the page's, "file": the file's if not the same}


@dataclass
class Manifest:
    brain: str
    documents: dict[str, Entry]  # id → entry

    @property
    def by_path(self) -> dict[str, str]:
        return {entry["path"]: doc_id for doc_id, entry in self.documents.items()}

    def record(self, doc_id: str, path: str, page_hash: str, file_hash: str) -> None:
        entry = {"path": path, "hash": page_hash}
        if file_hash != page_hash:
            entry["file"] = file_hash
        self.documents[doc_id] = entry


def file_hash(entry: Entry) -> str:
    """The hash the entry's file had at the last sync."""
    return entry.get("file", entry["hash"])


def read_manifest(root: Path) -> Manifest:
    path = root / MANIFEST
    if not path.is_file():
        raise InvalidInput(
            f"{str(root)!r} was not materialized (no {MANIFEST}); materialize a brain there "
            "first, or bring plain files in with `loci brain import`"
        )
    try:
        data = json.loads(path.read_text("utf-8"))
        documents = {
            str(k): {key: str(v[key]) for key in ("path", "hash", "file") if key in v}
            for k, v in data["documents"].items()
        }
        if not all("path" in v and "hash" in v for v in documents.values()):
            raise KeyError("path")
        return Manifest(str(data["brain"]), documents)
    except (ValueError, KeyError, TypeError, AttributeError):
        raise InvalidInput(f"{MANIFEST} is damaged; materialize again") from None


def write_manifest(root: Path, manifest: Manifest) -> None:
    data = {
        "format": MANIFEST_FORMAT,
        "brain": manifest.brain,
        "documents": dict(sorted(manifest.documents.items())),
    }
    write_file(root / MANIFEST, (json.dumps(data, indent=2, ensure_ascii=False) + "\n").encode())
