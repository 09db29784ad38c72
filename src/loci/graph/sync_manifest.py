"""The hidden manifest of a materialized brain: for each document, the file it was written to
and its content hash then, which `sync` writes each edit against."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from loci.errors import InvalidInput
from loci.graph.markdown_folder import write_file

MANIFEST = ".loci-brain.json"
MANIFEST_FORMAT = 1


@dataclass
class Manifest:
    brain: str
    documents: dict[str, dict[str, str]]  # id → {"path": …, "hash": …}

    @property
    def by_path(self) -> dict[str, str]:
        return {entry["path"]: doc_id for doc_id, entry in self.documents.items()}


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
            str(k): {"path": str(v["path"]), "hash": str(v["hash"])}
            for k, v in data["documents"].items()
        }
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
