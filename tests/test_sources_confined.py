"""A followed folder is confined when it is used, not only when it is registered, and Loci's own
data is never a source (docs/security.md, "Folders on the server").

A folder registered inside the allowed roots, then swapped for a symbolic link to a folder
outside them — the folder itself or one inside it — is refused by the sync (over the API and
the CLI), by the watcher and by a version's restore, with the reason in the report: nothing of
the other folder is read, nothing is written there, nothing is deleted from the brain. A vault
followed as pages writes nothing through a swapped folder either. The data directory, a folder
inside it and (over the API) a folder holding it are refused when registered, over the API and
the CLI; one registered before that rule is refused at every sync; and a folder holding it,
followed from the CLI — or holding it under another name, bind-mounted — never has anything
inside it read. Real folders, a real server on
127.0.0.1, both backends.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from loci.errors import LociError
from loci.models import Brain
from loci.service import Loci
from loci.service.watching import FolderWatcher
from tests.support.cli import run_cli
from tests.support.folders import FIRST, SECOND, by_path, report_of, sync_folders, watcher  # noqa: F401
from tests.support.live_server import LiveServer
from tests.support.services import texts
from tests.support.waiting import eventually  # noqa: F401

pytestmark = [pytest.mark.both_backends, pytest.mark.attack]

LESSON = "# Piano\n\nThe piano lesson is on Tuesday at 5pm with Mrs Okafor.\n"
DIARY = "# Diary\n\nThe safe code is 4512.\n"


def _swap_for_link(folder: Path, target: Path) -> Path:
    """Put a link to `target` where `folder` was (as someone who may write beside it can);
    the folder itself is moved aside, beside `target` (out of the followed folder)."""
    aside = target.parent / f"{folder.name}.aside"
    folder.rename(aside)
    folder.symlink_to(target, target_is_directory=True)
    return aside


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    """(an allowed root holding a folder of notes, a private folder outside it)."""
    allowed = (tmp_path / "shared").resolve()
    (allowed / "notes").mkdir(parents=True)
    (allowed / "notes" / "piano.md").write_text(LESSON)
    outside = (tmp_path / "private").resolve()
    outside.mkdir()
    (outside / "diary.md").write_text(DIARY)
    return allowed, outside


@pytest.fixture
def server(loci: Loci, tmp_path: Path) -> Iterator[LiveServer]:
    """A server whose allowed roots are the whole test folder, the data directory with them
    (the misconfiguration of the review): the API must refuse what it must not follow."""
    live = LiveServer(loci, sources_allowed_roots=(tmp_path.resolve(),)).start()
    yield live
    live.stop()


def _home(loci: Loci) -> Path:
    return Path(loci.blobs.root).parent


def test_a_folder_swapped_for_a_link_out_of_the_roots_is_refused_at_sync(
    brain: Brain,
    server: LiveServer,
    places: tuple[Path, Path],
    tmp_path: Path,
    database_url: str | None,
) -> None:
    allowed, outside = places
    notes = allowed / "notes"
    with server.client() as api:
        added = api.post("/brains/default/folders", json={"path": str(notes)})
        assert added.status_code == 201, added.text
        assert api.post("/brains/default/sync").json()["ok"] is True
        (piano,) = api.get("/brains/default/files").json()

        _swap_for_link(notes, outside)  # registered, checked, then swapped
        synced = api.post("/brains/default/sync")
        assert synced.status_code == 200, synced.text
        report = synced.json()
        (source,) = report["sources"]
        assert report["ok"] is False and "symbolic link" in (source["unreachable"] or "")
        assert source["added"] == source["removed"] == 0
        files = api.get("/brains/default/files").json()
        assert [f["id"] for f in files] == [piano["id"]]  # nothing read, nothing deleted
        hits = api.post("/brains/default/search", json={"query": "safe code", "mode": "text"})
        assert hits.json()["hits"] == []

    env = {"LOCI_DATABASE_URL": database_url} if database_url else None
    listed = run_cli("sources", "list", "--json", home=tmp_path / "home", env=env)
    assert listed.returncode == 0, listed.stderr
    (row,) = json.loads(listed.stdout)
    assert "symbolic link" in row["unreachable"]
    cli_sync = run_cli("sync", "--json", home=tmp_path / "home", env=env)
    assert cli_sync.returncode != 0
    (synced_row,) = json.loads(cli_sync.stdout)["sources"]
    assert "symbolic link" in synced_row["unreachable"]


def test_a_subfolder_swapped_for_a_link_during_a_sync_is_not_read(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    folder = (tmp_path / "notes").resolve()
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text(LESSON)
    (folder / "sub" / "b.md").write_text("# B\n\nBread needs flour, water and salt.\n")
    outside = (tmp_path / "private").resolve()
    outside.mkdir()
    (outside / "b.md").write_text(DIARY)
    source = loci.sources.add(brain, folder)

    # A watcher's reconcile runs a slice at a time: the folder is walked in the first, its
    # files read in the next ones. `sub` is swapped for a link in between.
    run = loci.sources.run(brain, source)
    assert run.step(0) is None  # walked; a.md read
    _swap_for_link(folder / "sub", outside)
    result = run.step(None)
    assert result is not None
    assert [f.path for f in result.failed] == [str(folder / "sub" / "b.md")]
    assert "symbolic link" in result.failed[0].reason
    loci.library.wait_for(brain, result.queued)
    assert not texts(loci, brain, "safe code")
    assert [d.name for d in loci.library.documents(brain)] == ["a.md"]


def test_a_watched_folder_swapped_for_a_link_is_refused_and_nothing_is_deleted(
    loci: Loci,
    brain: Brain,
    places: tuple[Path, Path],
    watcher: Callable[..., FolderWatcher],  # noqa: F811
) -> None:
    allowed, outside = places
    notes = allowed / "notes"
    source = loci.sources.add(brain, notes)
    watcher()
    eventually(lambda: len(by_path(loci, brain)) == 1)
    kept = [d.id for d in by_path(loci, brain).values()]

    _swap_for_link(notes, outside)
    report = eventually(lambda: report_of(loci, brain, source.id))
    assert "symbolic link" in report["unreachable"]
    (outside / "more.md").write_text("# More\n\nThe alarm code is 9981.\n")  # an event there
    assert [d.id for d in by_path(loci, brain).values()] == kept
    assert not texts(loci, brain, "safe code") and not texts(loci, brain, "alarm code")


@pytest.mark.parametrize("swapped", ["folder", "subfolder"])
def test_a_restore_does_not_write_through_a_folder_swapped_for_a_link(
    loci: Loci, brain: Brain, tmp_path: Path, swapped: str
) -> None:
    folder = (tmp_path / "notes").resolve()
    (folder / "sub").mkdir(parents=True)
    lesson = folder / "sub" / "lesson.md"
    lesson.write_text(FIRST)
    loci.sources.add(brain, folder)
    sync_folders(loci, brain)
    lesson.write_text(SECOND)
    assert sync_folders(loci, brain).updated == 1
    document = loci.store.find_by_path(brain.id, str(lesson))
    assert document is not None

    # Someone who may write beside the folder points it at a file they want overwritten,
    # one that holds the current bytes, so the restore's check passes.
    outside = (tmp_path / "victim").resolve()
    (outside / "sub").mkdir(parents=True)
    (outside / "sub" / "lesson.md").write_text(SECOND)
    if swapped == "folder":
        _swap_for_link(folder, outside)
    else:
        _swap_for_link(folder / "sub", outside / "sub")

    with pytest.raises(LociError, match="symbolic link"):
        loci.versions.restore(brain, document.id, 1)
    assert (outside / "sub" / "lesson.md").read_text() == SECOND  # nothing written there
    assert loci.store.get_document(brain.id, document.id).content_hash == document.content_hash


def test_a_vault_followed_as_pages_writes_nothing_through_a_folder_swapped_for_a_link(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    vault = (tmp_path / "vault").resolve()
    (vault / "people").mkdir(parents=True)
    ben = "---\nid: ben\nkind: page\ntype: person\ntitle: Ben\n---\n\nBen bakes sourdough.\n"
    (vault / "people" / "ben.md").write_text(ben)
    loci.sources.add(brain, vault, mode="pages")
    assert sync_folders(loci, brain).added == 1
    outside = (tmp_path / "victim").resolve()
    outside.mkdir()
    (outside / "ben.md").write_text(ben)  # the bytes Loci expects, so a write-back would go
    _swap_for_link(vault / "people", outside)

    # An edit made in Loci is written back to its file at once — not through the link.
    loci.graph.append_timeline(brain, "ben", "Opened a bakery.", actor="agent", at="2026-05-01")
    assert (outside / "ben.md").read_text() == ben
    synced = sync_folders(loci, brain)
    assert (outside / "ben.md").read_text() == ben
    assert synced.written == 0

    _swap_for_link(vault, outside)  # the vault itself
    refused = sync_folders(loci, brain)
    assert refused.unreachable and "symbolic link" in refused.unreachable
    assert (outside / "ben.md").read_text() == ben
    assert "Opened a bakery." in loci.graph.get(brain, "ben").content  # nothing deleted


def test_the_data_directory_is_refused_over_the_api(
    loci: Loci, brain: Brain, server: LiveServer, tmp_path: Path
) -> None:
    home = _home(loci)
    (home / "owner-token").write_text("loci_not-a-real-token\n")
    with server.client() as api:
        for path, why in [
            (home, "Loci's data directory"),
            (home / "blobs", "Loci's data directory"),
            (tmp_path, "holds Loci's data directory"),  # a folder around it, over the API
        ]:
            path.mkdir(exist_ok=True)
            refused = api.post("/brains/default/folders", json={"path": str(path)})
            assert refused.status_code == 403, (path, refused.text)
            assert why in refused.json()["message"], refused.text
        assert api.get("/brains/default/folders").json() == []


def test_the_data_directory_is_refused_over_the_cli(
    loci: Loci, brain: Brain, tmp_path: Path, database_url: str | None
) -> None:
    home = _home(loci)
    env = {"LOCI_DATABASE_URL": database_url} if database_url else None
    for path in (home, home / "blobs"):
        path.mkdir(exist_ok=True)
        done = run_cli("sources", "add", str(path), home=home, env=env)
        assert done.returncode != 0, done.stdout
        assert "Loci's data directory" in done.stderr, done.stderr
    assert loci.sources.list(brain) == []


def test_a_data_directory_registered_before_the_rule_is_refused_at_every_sync(
    loci: Loci, brain: Brain
) -> None:
    home = _home(loci)
    (home / "owner-token").write_text("loci_not-a-real-token\n")
    # As an older version let an admin register it (straight into the store, as it was).
    loci.store.create_source(brain.id, str(home), [], [], "remove", "files")
    result = sync_folders(loci, brain)
    assert result.unreachable and "Loci's own data" in result.unreachable
    assert loci.library.documents(brain) == []


def test_a_folder_holding_the_data_directory_never_reads_inside_it(
    loci: Loci, brain: Brain, tmp_path: Path, database_url: str | None
) -> None:
    home = _home(loci)
    (home / "owner-token").write_text("loci_not-a-real-token\n")
    (tmp_path / "note.md").write_text(LESSON)
    env = {"LOCI_DATABASE_URL": database_url} if database_url else None
    added = run_cli("sources", "add", str(tmp_path), home=home, env=env)
    assert added.returncode == 0, added.stderr  # the machine's owner may follow it, from the CLI
    synced = run_cli("sync", "--json", home=home, env=env)
    (row,) = json.loads(synced.stdout)["sources"]
    assert row["unreachable"] is None, row
    assert [d.name for d in loci.library.documents(brain)] == ["note.md"]
    assert not any(str(home) in f["path"] for f in row["failed"])


def test_the_data_directory_mounted_inside_a_followed_folder_is_never_read(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    """Known by device and inode, not by name: the data directory bind-mounted into a followed
    folder, under another name (binding a folder takes root: skipped elsewhere)."""
    home = _home(loci)
    (home / "owner-token").write_text("loci_not-a-real-token\n")
    folder = (tmp_path / "notes").resolve()
    (folder / "mirror").mkdir(parents=True)
    (folder / "note.md").write_text(LESSON)
    loci.sources.add(brain, folder)
    if shutil.which("mount") is None or os.geteuid() != 0:
        pytest.skip("binding a folder takes root and mount(8)")
    bound = subprocess.run(["mount", "--bind", str(home), str(folder / "mirror")], check=False)
    if bound.returncode != 0:
        pytest.skip("this system lets no folder be bound here")
    try:
        assert (folder / "mirror" / "owner-token").is_file()
        result = sync_folders(loci, brain)
        assert result.unreachable is None and not result.failed
        assert [d.name for d in loci.library.documents(brain)] == ["note.md"]
    finally:
        subprocess.run(["umount", str(folder / "mirror")], check=True)
