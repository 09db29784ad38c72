"""Restoring a version of a followed folder's file writes the restored bytes to the file too, so
the folder and Loci agree and the file's next edit builds on the restore; a file changed since
Loci last read it is a conflict that names it, and nothing is restored or written. Real files,
on both backends; the command says where it wrote."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from loci.errors import Conflict
from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.folders import FIRST, SECOND, THIRD, sync_folders
from tests.support.services import texts

pytestmark = pytest.mark.both_backends


@pytest.fixture
def lesson(loci: Loci, brain: Brain, tmp_path: Path) -> Path:
    """A followed folder's note, synced at FIRST then at SECOND: version 1 and current 2."""
    folder = (tmp_path / "notes").resolve()
    folder.mkdir()
    path = folder / "lesson.md"
    path.write_text(FIRST)
    path.chmod(0o640)
    (folder / "other.md").write_text("Another note.\n")
    loci.sources.add(brain, folder)
    sync_folders(loci, brain)
    path.write_text(SECOND)
    assert sync_folders(loci, brain).updated == 1
    return path


def test_a_restored_version_is_written_to_its_file_and_the_folder_agrees(
    loci: Loci, brain: Brain, lesson: Path
) -> None:
    document = loci.store.find_by_path(brain.id, str(lesson))
    assert document is not None
    restored = loci.versions.restore(brain, document.id, 1)
    assert restored.changed and restored.written_to == str(lesson)
    assert lesson.read_text() == FIRST  # the folder has the restored bytes
    assert stat.S_IMODE(os.stat(lesson).st_mode) == 0o640  # and the file its permissions
    assert not [p for p in lesson.parent.iterdir() if p.name.startswith(".")]  # no leftovers
    loci.library.wait_for(brain, [document.id])
    assert any("Tuesday" in t for t in texts(loci, brain, "piano Tuesday"))

    again = sync_folders(loci, brain)  # nothing to do: Loci and the folder agree
    assert (again.updated, again.unchanged) == (0, 2)
    listed = loci.versions.list(brain, document.id)
    assert listed.current == 3 and [v.number for v in listed.versions] == [2, 1]

    lesson.write_text(THIRD)  # the next edit builds on the restore: a version more, not a loss
    assert sync_folders(loci, brain).updated == 1
    listed = loci.versions.list(brain, document.id)
    assert listed.current == 4
    assert loci.versions.content(brain, document.id, 3)[1] == FIRST.encode()


def test_restoring_over_a_file_changed_since_it_was_read_is_a_conflict_and_changes_nothing(
    loci: Loci, brain: Brain, lesson: Path
) -> None:
    document = loci.store.find_by_path(brain.id, str(lesson))
    assert document is not None
    lesson.write_text(THIRD)  # edited, not synced yet
    with pytest.raises(Conflict) as refused:
        loci.versions.restore(brain, document.id, 1)
    assert str(lesson) in refused.value.message
    assert "changed since Loci last read it" in refused.value.message
    assert lesson.read_text() == THIRD  # the edit is not lost
    now = loci.library.document(brain, document.id)
    assert now.content_hash == document.content_hash
    assert [v.number for v in loci.versions.list(brain, document.id).versions] == [1]

    lesson.unlink()  # gone since the last sync: nothing to write over either
    with pytest.raises(Conflict, match="is not there"):
        loci.versions.restore(brain, document.id, 1)


def test_the_restore_command_says_it_wrote_the_file(
    loci: Loci, brain: Brain, lesson: Path, tmp_path: Path, database_url: str | None
) -> None:
    document = loci.store.find_by_path(brain.id, str(lesson))
    assert document is not None
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    done = run_cli("versions", "restore", str(document.id), "1", home=tmp_path / "home", env=env)
    assert done.returncode == 0, done.stderr
    assert f"wrote it to {lesson}" in " ".join(done.stdout.split())
    assert lesson.read_text() == FIRST

    lesson.write_text(THIRD)
    refused = run_cli("versions", "restore", str(document.id), "2", home=tmp_path / "home", env=env)
    assert refused.returncode != 0 and "changed since Loci last read it" in refused.stderr


def test_a_kept_document_whose_file_was_deleted_is_restored_in_loci_only(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    folder = (tmp_path / "kept").resolve()
    folder.mkdir()
    path = folder / "lesson.md"
    path.write_text(FIRST)
    (folder / "other.md").write_text("Another note.\n")
    loci.sources.add(brain, folder, on_delete="keep")
    sync_folders(loci, brain)
    path.write_text(SECOND)
    sync_folders(loci, brain)
    path.unlink()
    assert sync_folders(loci, brain).gone == 1
    document = loci.store.find_by_path(brain.id, str(path))
    assert document is not None and document.gone_at is not None
    restored = loci.versions.restore(brain, document.id, 1)
    assert restored.changed and restored.written_to is None
    assert not path.exists()  # a file the person deleted is not brought back
    assert loci.library.document(brain, document.id).gone_at is not None
