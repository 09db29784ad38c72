"""A file renamed or moved keeps its document, found by its file system identity whatever its
bytes (edited in place on the way) — in a one-shot sync and while watching — and a new file
that the file system gave a deleted file's inode number is not taken for it.

Real renames on the test's file system; the inode-reuse case relies on ext4 handing a freed
inode number out again at once (it does here), told apart by the inode's generation.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from loci.ingest.file_identity import recorded_identity
from loci.ingest.folder_walk import read_whole
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.watching import FolderWatcher
from tests.support.folders import (  # noqa: F401
    FAST,
    RECIPE,
    by_path,
    indexing,
    settled,
    sync_counts,
    sync_folders,
    watcher,
)
from tests.support.services import texts  # noqa: F401
from tests.support.waiting import eventually  # noqa: F401

pytestmark = pytest.mark.both_backends

NOTE = "# Boiler\n\nThe boiler is serviced every October by the firm on Mill Lane.\n"


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    root = (tmp_path / "notes").resolve()
    (root / "house").mkdir(parents=True)
    (root / "boiler.md").write_text(NOTE)
    (root / "soup.md").write_text(RECIPE)
    return root


def _append(path: Path, text: str) -> None:
    """An edit in place, as Obsidian or `echo >>` make it: the same file, not a new one."""
    with path.open("a") as handle:
        handle.write(text)


def test_a_file_renamed_and_edited_between_two_syncs_keeps_its_document(
    loci: Loci, brain: Brain, folder: Path
) -> None:
    loci.sources.add(brain, folder)
    sync_folders(loci, brain)
    before = {d.name: d for d in loci.library.documents(brain)}
    stamp = before["boiler.md"].metadata["file"]
    assert recorded_identity(stamp) == read_whole(folder / "boiler.md")[1].identity

    moved = folder / "house" / "boiler-service.md"
    (folder / "boiler.md").rename(moved)
    _append(moved, "\nNext visit: the third week of October; the engineer is Sam.\n")
    result = sync_folders(loci, brain)
    assert sync_counts(result) == {
        "added": 0, "updated": 1, "renamed": 1, "removed": 0, "gone": 0, "unchanged": 1
    }  # fmt: skip
    after = {d.name: d for d in loci.library.documents(brain)}
    assert set(after) == {"boiler-service.md", "soup.md"}
    document = after["boiler-service.md"]
    assert document.id == before["boiler.md"].id and document.source_path == str(moved)
    assert any("engineer is Sam" in t for t in texts(loci, brain, "engineer Sam"))
    assert [v.number for v in loci.versions.list(brain, document.id).versions] == [1]
    assert sync_counts(sync_folders(loci, brain))["unchanged"] == 2  # and in step since

    # A stamp kept before identities were recorded gets one at the next sync, without a read.
    old = {k: v for k, v in document.metadata["file"].items() if k in ("size", "mtime_ns")}
    loci.store.set_file_stamps(brain.id, {document.id: old})
    assert sync_counts(sync_folders(loci, brain))["unchanged"] == 2
    noted = loci.library.document(brain, document.id).metadata["file"]
    assert recorded_identity(noted) == read_whole(moved)[1].identity


def test_a_new_file_given_a_deleted_files_inode_number_is_a_new_document(
    loci: Loci, brain: Brain, folder: Path
) -> None:
    loci.sources.add(brain, folder)
    sync_folders(loci, brain)
    soup = next(d for d in loci.library.documents(brain) if d.name == "soup.md")
    inode = os.stat(folder / "soup.md").st_ino
    (folder / "soup.md").unlink()
    written = folder / "gutters.md"
    written.write_text("# Gutters\n\nClear the gutters of leaves in November.\n")
    reused = os.stat(written).st_ino == inode  # ext4: yes, at once

    result = sync_folders(loci, brain)
    assert (result.added, result.removed, result.renamed) == (1, 1, 0), f"reused: {reused}"
    documents = {d.name: d for d in loci.library.documents(brain)}
    assert set(documents) == {"boiler.md", "gutters.md"}
    assert documents["gutters.md"].id != soup.id


def test_a_watched_file_renamed_and_edited_keeps_its_document(
    loci: Loci,
    brain: Brain,
    folder: Path,
    watcher: Callable[..., FolderWatcher],  # noqa: F811
) -> None:
    loci.sources.add(brain, folder)
    watching = watcher()
    boiler = eventually(lambda: by_path(loci, brain).get(str(folder / "boiler.md")))

    moved = folder / "house" / "boiler.md"
    (folder / "boiler.md").rename(moved)  # the two halves in one burst, the bytes changed
    _append(moved, "\nThe engineer's name is Sam.\n")
    found = eventually(lambda: by_path(loci, brain).get(str(moved)))
    assert found.id == boiler.id
    settled(watching, after_s=FAST.settle_s)  # the old path's deletion, held, changes nothing
    assert set(by_path(loci, brain)) == {str(moved), str(folder / "soup.md")}
    assert (watching.totals["renamed"], watching.totals["removed"]) == (1, 0)
    assert watching.totals["added"] == 2  # the first sync's two files only


def test_a_file_moved_out_and_back_in_later_keeps_its_kept_document(
    loci: Loci,
    brain: Brain,
    folder: Path,
    tmp_path: Path,
    watcher: Callable[..., FolderWatcher],  # noqa: F811
    indexing: None,  # noqa: F811
) -> None:
    loci.sources.add(brain, folder, on_delete="keep")
    watching = watcher()
    soup = eventually(lambda: by_path(loci, brain).get(str(folder / "soup.md")))

    outside = tmp_path / "desktop.md"
    shutil.move(folder / "soup.md", outside)  # out of the folder: the deletion alone
    eventually(lambda: loci.library.document(brain, soup.id).gone_at)
    _append(outside, "\nAdd a bay leaf.\n")  # edited elsewhere, then moved back under a new name
    back = folder / "house" / "lentil-soup.md"
    shutil.move(outside, back)
    eventually(lambda: str(back) in by_path(loci, brain))
    document = loci.library.document(brain, soup.id)
    assert document.source_path == str(back) and document.gone_at is None
    eventually(lambda: any("bay leaf" in t for t in texts(loci, brain, "bay leaf")))
    assert watching.totals["gone"] == 1 and watching.totals["renamed"] == 1


def test_a_copy_takes_over_the_document_when_its_original_is_deleted(
    loci: Loci,
    brain: Brain,
    folder: Path,
    watcher: Callable[..., FolderWatcher],  # noqa: F811
    indexing: None,  # noqa: F811
) -> None:
    """A copy has the same bytes as its original, so it is no document of its own; deleting
    the original later (in another of the watcher's batches, which never looks at the copy)
    leaves the document at the copy instead of removing what the copy still says."""
    loci.sources.add(brain, folder)
    watching = watcher()
    boiler = eventually(lambda: by_path(loci, brain).get(str(folder / "boiler.md")))

    copy = folder / "house" / "boiler (copy).md"
    shutil.copy(folder / "boiler.md", copy)
    remembered = eventually(lambda: loci.library.document(brain, boiler.id).metadata.get("copies"))
    assert remembered == [str(copy)]
    assert str(copy) not in by_path(loci, brain)  # the same bytes: one document

    (folder / "boiler.md").unlink()
    moved = eventually(lambda: by_path(loci, brain).get(str(copy)))
    assert moved.id == boiler.id and moved.name == "boiler (copy).md"
    # It no longer remembers its own path as a copy.
    eventually(lambda: not loci.library.document(brain, boiler.id).metadata.get("copies"))
    hits = loci.searching.search(brain, SearchRequest("Mill Lane boiler", mode="text", limit=3))
    assert hits and hits[0].citation.document_id == boiler.id
    assert watching.totals["removed"] == 0
