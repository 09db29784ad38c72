"""Watched folders (`FolderWatcher`, what `loci serve` and `loci worker` run): real folders,
real file system events (inotify here) and polling, on both backends.

A change reaches the index within seconds; an editor's save through a temporary file, a
`git checkout` and a folder rewritten by a sync client come to one update per changed file;
renames and moves keep the document; a folder registered while running is picked up and one
removed is let go; changes made while no watcher ran are found by the rescan at start; a folder
that goes away deletes nothing and is rescanned when it is back; and only one watcher follows
a folder, whatever number share the database.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

import pytest

from loci.embed.base import Embedder, Vectors
from loci.ingest.file_systems import file_system_type, needs_polling
from loci.models import Brain, Document
from loci.service import Loci
from loci.service.watching import FolderWatcher
from tests.support.folders import (
    FAST,
    by_path,
    documents_when,
    indexing,
    report_of,
    settled,
    watcher,
)
from tests.support.services import make_service, reopen, texts
from tests.support.waiting import eventually

__all__ = ["indexing", "watcher"]  # fixtures (tests/support/folders.py): pytest finds them here

pytestmark = pytest.mark.both_backends

T = TypeVar("T")

LESSON = "# Piano\n\nThe piano lesson is on Tuesday at 5pm with Mrs Okafor.\n"


def ready_documents(loci: Loci, brain: Brain, count: int) -> list[Document] | None:
    """The brain's documents once there are `count` and every one is ready."""
    documents = loci.library.documents(brain)
    ok = len(documents) == count and all(d.status == "ready" for d in documents)
    return documents if ok else None


def in_step(loci: Loci, brain: Brain, folder: Path) -> bool:
    """Whether every file in `folder` is exactly one document with its bytes, and no document
    is left of a file that is gone."""
    on_disk = {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in folder.rglob("*")
        if p.is_file() and not any(part.startswith(".") for part in p.relative_to(folder).parts)
    }
    known = {p: d.content_hash for p, d in by_path(loci, brain).items()}
    return known == on_disk


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    (folder / "music").mkdir(parents=True)
    (folder / "music" / "lesson.md").write_text(LESSON)
    (folder / "bill.txt").write_text("Water bill: 42.10 GBP, due on the third of March.\n")
    return folder.resolve()


def test_a_change_reaches_the_index_within_seconds_and_keeps_the_documents_identity(
    loci: Loci, brain: Brain, vault: Path, watcher: Callable[..., FolderWatcher], indexing: None
) -> None:
    loci.sources.add(brain, vault)
    watching = watcher()
    first = eventually(lambda: documents_when(loci, brain, 2))
    lesson = first[str(vault / "music" / "lesson.md")]

    # An editor's atomic save: the new text goes to a file beside the note, renamed over it.
    beside = vault / "music" / "lesson.md.new"
    beside.write_text(LESSON.replace("Tuesday at 5pm", "Friday at 4pm"))
    started = time.monotonic()
    os.replace(beside, vault / "music" / "lesson.md")
    eventually(lambda: any("Friday at 4pm" in t for t in texts(loci, brain, "piano Friday")))
    assert time.monotonic() - started < 10
    assert not any("5pm" in t for t in texts(loci, brain, "piano lesson 5pm"))
    assert by_path(loci, brain)[str(vault / "music" / "lesson.md")].id == lesson.id

    # A rename into a new folder keeps the document (same id, nothing indexed again).
    bill = first[str(vault / "bill.txt")]
    (vault / "paid").mkdir()
    (vault / "bill.txt").rename(vault / "paid" / "water-bill.txt")
    moved = eventually(lambda: by_path(loci, brain).get(str(vault / "paid" / "water-bill.txt")))
    assert moved.id == bill.id and moved.name == "water-bill.txt"

    # A new note is added, a deleted one removed.
    (vault / "garden.md").write_text("Plant the tulip bulbs before the first frost.\n")
    eventually(lambda: any("tulip" in t for t in texts(loci, brain, "tulip bulbs")))
    (vault / "music" / "lesson.md").unlink()
    eventually(lambda: not texts(loci, brain, "piano lesson"))

    assert eventually(lambda: in_step(loci, brain, vault))
    # One update per change: the save was one update; the temporary file never a document.
    eventually(lambda: watching.totals["removed"] == 1)
    assert {k: watching.totals[k] for k in ("added", "updated", "renamed", "failed")} == {
        "added": 3,
        "updated": 1,
        "renamed": 1,
        "failed": 0,
    }
    (source,) = loci.sources.list(brain)
    assert source.last_report is not None and source.last_report["files"] == 2
    assert loci.sources.watching(brain) == {source.id: "events"}


def test_a_git_checkout_of_many_files_comes_to_one_update_per_changed_file(
    loci: Loci, brain: Brain, tmp_path: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    repo = (tmp_path / "repo").resolve()
    (repo / "notes").mkdir(parents=True)

    def git(*args: str) -> None:
        subprocess.run(
            ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args],
            cwd=repo,
            check=True,
            capture_output=True,
        )

    count = 200  # (each new file costs a durable blob write: ~10 ms on this disk)
    for i in range(count):
        (repo / "notes" / f"n{i:04}.md").write_text(f"# Note {i}\n\nVersion one of note {i}.\n")
    git("init", "-q", "-b", "main")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    git("checkout", "-q", "-b", "two")
    for i in range(0, count, 2):  # half the notes edited
        (repo / "notes" / f"n{i:04}.md").write_text(f"# Note {i}\n\nVersion two of note {i}.\n")
    for i in range(1, 41, 2):  # twenty moved to another folder
        (repo / "archive").mkdir(exist_ok=True)
        (repo / "notes" / f"n{i:04}.md").rename(repo / "archive" / f"n{i:04}.md")
    git("add", "-A")
    git("commit", "-q", "-m", "two")
    git("checkout", "-q", "main")

    loci.sources.add(brain, repo)
    watching = watcher()
    eventually(lambda: watching.totals["added"] == count, timeout=120)
    ids = {p: d.id for p, d in by_path(loci, brain).items()}

    git("checkout", "-q", "two")
    eventually(lambda: in_step(loci, brain, repo), timeout=120)
    eventually(lambda: watching.totals["renamed"] == 20)
    settled(watching, after_s=FAST.settle_s)  # nothing more comes of it
    totals = watching.totals
    assert (totals["updated"], totals["renamed"], totals["added"]) == (count // 2, 20, count)
    assert totals["removed"] == totals["failed"] == 0
    after = by_path(loci, brain)
    assert all(after[p.replace("/notes/", "/archive/")].id == i for p, i in ids.items()
               if p.replace("/notes/", "/archive/") in after and "/notes/" in p)  # fmt: skip
    assert sorted(d.id for d in after.values()) == sorted(ids.values())  # nothing new, none lost


def test_a_folder_rewritten_by_a_sync_client_is_one_update_per_changed_file(
    loci: Loci, brain: Brain, vault: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    notes = [vault / f"day{i}.md" for i in range(30)]
    for i, note in enumerate(notes):
        note.write_text(f"Day {i}: nothing happened.\n")
    loci.sources.add(brain, vault)
    watching = watcher()
    eventually(lambda: watching.totals["added"] == 32)
    # The client writes every file again through a temporary file (hidden, as sync clients
    # name them), a third with new bytes and the rest as they were, then touches them all.
    for i, note in enumerate(notes):
        temporary = vault / f".syncthing.{note.name}.tmp"
        temporary.write_bytes(
            f"Day {i}: it rained.\n".encode() if i % 3 == 0 else note.read_bytes()
        )
        os.replace(temporary, note)
    for note in notes:
        os.utime(note)
    eventually(lambda: in_step(loci, brain, vault))
    settled(watching, after_s=FAST.settle_s)
    assert watching.totals["updated"] == 10 and watching.totals["added"] == 32
    assert watching.totals["removed"] == watching.totals["failed"] == 0


def test_folders_registered_or_removed_while_watching_are_picked_up_or_let_go(
    loci: Loci, brain: Brain, vault: Path, tmp_path: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    watching = watcher()
    settled(watching)  # it has looked at the sources: none yet
    source = loci.sources.add(brain, vault)
    eventually(lambda: len(by_path(loci, brain)) == 2)
    assert loci.sources.watching(brain) == {source.id: "events"}

    loci.sources.remove(brain, source.id, keep_documents=False)
    # Written before the watcher has looked at the sources again: not added all the same.
    (vault / "later.md").write_text("Written after the folder was let go.\n")
    eventually(lambda: not loci.sources.watching(brain))
    (vault / "bill.txt").write_text("Changed after the folder was let go.\n")
    settled(watching, after_s=FAST.settle_s)
    assert by_path(loci, brain) == {}
    assert watching.totals["added"] == 2


def test_changes_made_while_no_watcher_ran_are_found_at_start(
    loci: Loci, brain: Brain, vault: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    loci.sources.add(brain, vault)
    first = watcher()
    eventually(lambda: len(by_path(loci, brain)) == 2)
    first.stop()
    assert not loci.sources.watching(brain)  # a watcher that stops gives its folders up

    (vault / "bill.txt").write_text("Water bill: 40.00 GBP.\n")
    (vault / "music" / "lesson.md").rename(vault / "lesson.md")
    (vault / "new.md").write_text("A note written while Loci was down.\n")
    second = watcher()
    eventually(lambda: in_step(loci, brain, vault))
    counts = ("updated", "renamed", "added", "removed")
    eventually(lambda: [second.totals[k] for k in counts] == [1, 1, 1, 0])


def test_a_folder_that_goes_away_deletes_nothing_and_is_rescanned_when_back(
    loci: Loci, brain: Brain, vault: Path, tmp_path: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    source = loci.sources.add(brain, vault)
    watcher()
    eventually(lambda: len(by_path(loci, brain)) == 2)
    kept = sorted(d.id for d in by_path(loci, brain).values())

    away = tmp_path / "unplugged"
    vault.rename(away)  # the drive unplugged
    report = eventually(lambda: report_of(loci, brain, source.id))
    assert "not there" in report["unreachable"] and report["files"] == 2
    assert sorted(d.id for d in by_path(loci, brain).values()) == kept

    (away / "bill.txt").write_text("Changed on another machine.\n")
    away.rename(vault)  # plugged in again
    eventually(lambda: in_step(loci, brain, vault))
    back = eventually(lambda: report_of(loci, brain, source.id, unreachable=None))
    assert back["files"] == 2 and back["updated"] == 1
    assert sorted(d.id for d in by_path(loci, brain).values()) == kept

    (vault / "after.md").write_text("Watched again.\n")
    eventually(lambda: str(vault / "after.md") in by_path(loci, brain))


def test_a_polled_folder_follows_changes_too(
    loci: Loci, brain: Brain, vault: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    source = loci.sources.add(brain, vault)
    watching = watcher(mode="poll")
    eventually(lambda: len(by_path(loci, brain)) == 2)
    assert loci.sources.watching(brain) == {source.id: "poll"}
    (vault / "bill.txt").write_text("Water bill: 40.00 GBP.\n")
    (vault / "music" / "lesson.md").rename(vault / "lesson.md")
    (vault / "new.md").write_text("Seen by polling.\n")
    eventually(lambda: in_step(loci, brain, vault))
    counts = ("updated", "renamed", "added", "removed")
    eventually(lambda: [watching.totals[k] for k in counts] == [1, 1, 3, 0])


def test_one_watcher_follows_a_folder_however_many_share_the_database(
    loci: Loci, brain: Brain, vault: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    source = loci.sources.add(brain, vault)
    other = reopen(loci.store)  # a second process's connection
    try:
        first = watcher()
        eventually(lambda: loci.sources.watching(brain))
        second = watcher(store=other)  # stopped at the end by the fixture too: no harm
        settled(second)  # it has seen the folder, and that it is taken
        (lease,) = loci.store.watch_leases().values()
        assert lease.owner == first.name
        (vault / "a.md").write_text("Seen once.\n")
        eventually(lambda: str(vault / "a.md") in by_path(loci, brain))
        settled(first, after_s=FAST.settle_s)
        settled(second)
        assert (first.totals["added"], second.totals["added"]) == (3, 0)

        first.stop()  # it gives the folder up: the other takes it over, and rescans
        eventually(lambda: loci.store.watch_leases().get(source.id, lease).owner == second.name)
        (vault / "b.md").write_text("Seen by the second watcher.\n")
        eventually(lambda: str(vault / "b.md") in by_path(loci, brain))
        eventually(lambda: second.totals["added"] == 1)
        assert second.totals["rescans"] >= 1 and first.totals["added"] == 3
        second.stop()  # before its connection closes
        assert loci.store.watch_leases() == {}
    finally:
        other.close()


def test_the_lease_of_a_killed_watcher_on_this_machine_is_taken_over_at_once(
    loci: Loci, brain: Brain, vault: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    source = loci.sources.add(brain, vault)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    dead = f"{os.uname().nodename}:{gone.stdout.strip()}:dead00"
    assert loci.store.claim_watch(brain.id, source.id, dead, "events", lease_s=600)
    watching = watcher()
    eventually(lambda: loci.store.watch_leases()[source.id].owner == watching.name, timeout=5)
    eventually(lambda: len(by_path(loci, brain)) == 2)
    watching.stop()

    elsewhere = "another-host:1:abcdef"  # a holder on another machine is waited for
    assert loci.store.claim_watch(brain.id, source.id, elsewhere, "events", lease_s=600)
    third = watcher()
    settled(third)  # it has seen the lease, and left it to its holder
    assert loci.store.watch_leases()[source.id].owner == elsewhere
    assert third.totals["rescans"] == 0


def test_the_mount_table_says_which_folders_are_polled(tmp_path: Path) -> None:
    table = tmp_path / "mountinfo"
    table.write_text(
        "22 1 0:21 / / rw - ext4 /dev/sda1 rw\n"
        "30 22 0:40 / /mnt/nas rw - nfs4 nas:/share rw\n"
        "31 22 0:41 / /home/me/Remote\\040Drive rw - fuse.sshfs me@host: rw\n"
        "32 22 8:17 / /media/usb rw - fuseblk /dev/sdb1 rw\n"
        "33 22 0:42 / /mnt/c rw - 9p drvfs rw\n"
    )
    cases = {
        "/home/me/notes": ("ext4", False),
        "/mnt/nas/team": ("nfs4", True),
        "/home/me/Remote Drive/x": ("fuse.sshfs", True),
        "/media/usb/docs": ("fuseblk", False),
        "/mnt/c/Users/me": ("9p", True),
        "/mnt/nasty": ("ext4", False),  # not under /mnt/nas
    }
    for path, (kind, polled) in cases.items():
        assert file_system_type(Path(path), table) == kind, path
        assert needs_polling(Path(path), table) is polled, path
    assert file_system_type(Path("/x"), tmp_path / "none") is None
    assert needs_polling(Path("/x"), tmp_path / "none") is False


def test_removing_a_watched_folder_whole_removes_its_documents_after_it_settles(
    loci: Loci, brain: Brain, vault: Path, watcher: Callable[..., FolderWatcher]
) -> None:
    (vault / "music" / "scales.md").write_text("Practise the scales daily.\n")
    loci.sources.add(brain, vault)
    watcher()
    eventually(lambda: len(by_path(loci, brain)) == 3)
    shutil.rmtree(vault / "music")
    eventually(lambda: set(by_path(loci, brain)) == {str(vault / "bill.txt")})


class CountingEmbedder:
    """The session's real embedder, counting the texts it is asked for."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.texts: list[str] = []
        self.model_id, self.dimensions = inner.model_id, inner.dimensions
        self.max_tokens, self.count_tokens = inner.max_tokens, inner.count_tokens
        self.words_in_pieces = inner.words_in_pieces

    def embed(self, texts: Sequence[str]) -> Vectors:
        self.texts.extend(texts)
        return self.inner.embed(texts)


def test_an_edited_notes_unchanged_passages_keep_their_vectors(
    tmp_path: Path, embedder: Embedder, database_url: str | None
) -> None:
    counting = CountingEmbedder(embedder)
    loci = make_service(tmp_path / "counted", counting, database_url)
    brain = loci.brain()
    folder = (tmp_path / "notes").resolve()
    folder.mkdir()
    sections = {
        "Boiler": "The boiler is serviced every October by the firm on Mill Lane.",
        "Garden": "The tulip bulbs go in before the first frost, in the bed by the wall.",
        "Car": "The car's insurance renews in May; the documents are in the blue folder.",
    }

    def write() -> None:
        text = "\n\n".join(f"## {head}\n\n{body}" for head, body in sections.items())
        (folder / "house.md").write_text(f"# House\n\n{text}\n")

    write()
    loci.sources.add(brain, folder)
    watching = FolderWatcher(loci.sources, loci.store, FAST).start()
    stop = threading.Event()
    worker = threading.Thread(target=loci.library.worker().run_forever, args=(stop,))
    worker.start()
    try:
        (note,) = eventually(lambda: ready_documents(loci, brain, 1))
        before = {c.text for c in loci.store.list_chunks(brain.id, note.id)}
        assert len(before) >= 3 and len(counting.texts) == len(before)

        sections["Garden"] = "The tulip bulbs went in on Sunday; the bed by the wall is full."
        write()
        eventually(lambda: any("Sunday" in t for t in texts(loci, brain, "tulip bulbs Sunday")))
        # Found by its words first; its new passage's vector follows (ready again then).
        eventually(lambda: ready_documents(loci, brain, 1))
        after = {c.text for c in loci.store.list_chunks(brain.id, note.id)}
        changed = after - before
        assert len(changed) == 1 and "Sunday" in next(iter(changed))
        (asked,) = counting.texts[len(before) :]  # only the changed passage was embedded
        assert asked.endswith(next(iter(changed)))
        assert by_path(loci, brain)[str(folder / "house.md")].id == note.id
    finally:
        watching.stop()
        stop.set()
        worker.join(30)
        loci.store.close()
