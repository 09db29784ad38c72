"""A watcher takes a large folder's first sync a slice at a time: a small folder's change is in
the index while the large folder's first sync is still under way, and the large one still
ends with every file exactly one document. Real folders and file events, both backends."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from loci.models import Brain
from loci.service import Loci
from loci.service.watching import FolderWatcher
from tests.support.folders import by_path, watcher  # noqa: F401
from tests.support.waiting import eventually  # noqa: F401

pytestmark = pytest.mark.both_backends

BIG = 3000


def test_a_small_folders_change_is_indexed_while_a_big_folders_first_sync_runs(
    loci: Loci,
    brain: Brain,
    tmp_path: Path,
    watcher: Callable[..., FolderWatcher],  # noqa: F811
) -> None:
    small = (tmp_path / "small").resolve()
    small.mkdir()
    (small / "todo.md").write_text("Buy milk.\n")
    big = (tmp_path / "big").resolve()
    for i in range(BIG):
        folder = big / f"part-{i % 30:02}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"note-{i:05}.md").write_text(f"# Note {i}\n\nNote {i} of the archive.\n")
    loci.sources.add(brain, small)
    watching = watcher(slice_s=0.05)
    eventually(lambda: str(small / "todo.md") in by_path(loci, brain))

    loci.sources.add(brain, big)  # picked up within a refresh: its first sync starts

    def big_documents() -> int:
        return len(loci.store.documents_under(brain.id, str(big)))

    eventually(big_documents, timeout=60)  # under way
    (small / "call.md").write_text("Call the plumber about the boiler.\n")
    started = time.monotonic()
    eventually(lambda: str(small / "call.md") in by_path(loci, brain), timeout=30)
    waited, done_by_then = time.monotonic() - started, big_documents()
    assert done_by_then < BIG, f"the big folder was done first ({waited:.1f} s)"

    eventually(lambda: big_documents() == BIG, timeout=180)
    on_disk = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in big.rglob("*.md")}
    kept = {d.source_path: d.content_hash for d in loci.store.documents_under(brain.id, str(big))}
    assert kept == on_disk  # every file exactly one document with its bytes
    eventually(lambda: watching.totals["added"] == BIG + 2)
    assert watching.totals["failed"] == watching.totals["removed"] == 0
