"""The bad cases of a followed folder, on real files: each fails alone, reported with its reason
on its path, while everything else syncs — in a one-shot sync and while watching.

Permission denied needs a process that permission bits stop. Tests here may run as root, whom
`chmod 000` does not stop (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH); so the commands run in a
subprocess that drops those two capabilities from its bounding set before it starts (root
without them is held to the mode bits like anyone). Run as another user, the subprocess is
that user as it is.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from loci.errors import UnsupportedSource
from loci.ingest.folder_walk import read_whole, walk_folder, walk_paths
from loci.models import Brain
from loci.service import Loci
from loci.service.watching import FolderWatcher
from tests.support.cli import run_cli
from tests.support.folders import FAST, by_path, capped, documents_when
from tests.support.services import open_store
from tests.support.waiting import eventually

CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH, PR_CAPBSET_DROP = 1, 2, 24
__all__ = ["capped"]  # the fixture: a service whose file cap is 10 KB


def _held_to_mode_bits() -> None:
    """In the child before it starts: root loses what lets it read any file."""
    if os.geteuid() != 0:
        return
    libc = ctypes.CDLL(None, use_errno=True)
    for capability in (CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH):
        if libc.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_CAPBSET_DROP)")


def _failures(report: dict[str, Any]) -> dict[str, str]:
    return {Path(f["path"]).name: f["reason"] for f in report["failed"]}


def test_a_file_that_changes_while_it_is_read_is_read_again_and_one_that_keeps_changing_fails(
    tmp_path: Path,
) -> None:
    growing = tmp_path / "log.txt"
    growing.write_bytes(b"x" * 2_000_000)
    opened = os.fdopen

    def appended_while_read(descriptor: int, mode: str) -> Any:
        """The file as a sync client writing it shows it: each read of it sees it grow (a
        real write, between the read's first look at the file and its last)."""
        handle = opened(descriptor, mode)
        read = handle.read

        def read_and_grow() -> bytes:
            data = read()
            with growing.open("ab") as writer:
                writer.write(b"more\n")
            return bytes(data)

        handle.read = read_and_grow  # type: ignore[assignment]
        return handle

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("loci.ingest.folder_walk.os.fdopen", appended_while_read)
        with pytest.raises(UnsupportedSource, match="kept changing while it was read"):
            read_whole(growing)
    assert growing.stat().st_size == 2_000_000 + 3 * len(b"more\n")  # read three times
    data, stamp = read_whole(growing)  # quiet now: one whole version, with its own stamp
    assert len(data) == stamp.size == growing.stat().st_size and data.endswith(b"more\n")

    # Something else put in the file's place since the walk is refused, not followed or
    # waited on: a link to a file outside, a FIFO that nobody writes to.
    outside = tmp_path / "outside.txt"
    outside.write_text("not the folder's")
    linked = tmp_path / "linked.txt"
    linked.symlink_to(outside)
    with pytest.raises(OSError):
        read_whole(linked)
    fifo = tmp_path / "pipe.md"
    os.mkfifo(fifo)
    with pytest.raises(UnsupportedSource, match="no longer a regular file"):
        read_whole(fifo)


@pytest.mark.both_backends
def test_files_deleted_or_rewritten_while_a_sync_runs_fail_alone_or_are_taken_as_they_are_now(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    folder = (tmp_path / "notes").resolve()
    folder.mkdir()
    # Enough notes for several of the sync's batches: y and z are read in a later one than
    # the first documents written.
    for i in range(200):
        (folder / f"n{i:03}.md").write_text(f"Note {i}.\n")
    (folder / "y.md").write_text("The first words of y.\n")
    (folder / "z.md").write_text("The words of z.\n")
    source = loci.sources.add(brain, folder)
    real_read = read_whole
    changed: list[str] = []

    def read_during_changes(path: Path, *args: Any, **kwargs: Any) -> Any:
        """The first read of the sync (after its walk listed y and z) is when z is deleted and
        y rewritten: two files that change on disk while the sync runs, at a known point."""
        if not changed:
            changed.append(path.name)
            (folder / "z.md").unlink()
            (folder / "y.md").write_text("The last words of y, written during the sync.\n")
        return real_read(path, *args, **kwargs)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("loci.service.file_reconcile.read_whole", read_during_changes)
        results = [loci.sources.sync(brain)]
    assert changed and changed[0] not in ("y.md", "z.md")
    (result,) = results[0].sources
    assert [(Path(f.path).name, f.reason) for f in result.failed] == [
        ("z.md", "deleted or moved away while it was synced; looked at again at the next sync")
    ]
    documents = by_path(loci, brain)
    assert len(documents) == 201 and result.added == 201
    y = documents[str(folder / "y.md")]
    assert loci.blobs.get(y.content_hash) == (folder / "y.md").read_bytes()
    second = loci.sources.sync(brain).sources[0]
    assert second.failed == [] and second.unchanged == 201  # y's stamp is its new version's
    assert loci.sources.get(brain, source.id).last_report["failed"] == []  # type: ignore[index]


@pytest.mark.both_backends
def test_bad_files_in_a_watched_folder_fail_alone_and_are_taken_once_they_are_fixed(
    capped: Loci, tmp_path: Path
) -> None:
    brain = capped.brain("default")
    folder = (tmp_path / "vault").resolve()
    (folder / "sub").mkdir(parents=True)
    (folder / "a.md").write_text("A small note.\n")
    (folder / "scan.txt").write_text("x" * 20_000)  # over the 10 KB cap
    (folder / "sub" / "loop").symlink_to(folder, target_is_directory=True)  # a link loop
    (folder / "sub" / "self.md").symlink_to(folder / "sub" / "self.md")  # a link to itself
    os.mkfifo(folder / "pipe.md")  # a named pipe nobody writes to: never waited on
    source = capped.sources.add(brain, folder)
    watcher = FolderWatcher(capped.sources, capped.store, FAST).start()
    try:

        def report() -> dict[str, Any]:
            return capped.sources.get(brain, source.id).last_report or {}

        eventually(lambda: documents_when(capped, brain, 1))
        first = eventually(lambda: report() if _failures(report()) else None)
        assert list(_failures(first)) == ["scan.txt"] and "limit is" in first["failed"][0]["reason"]
        assert first["files"] == 2  # a.md and scan.txt: links and the pipe are not files

        # While watching: a second file over the cap fails alone, the first is fixed.
        (folder / "sub" / "big.md").write_text("y" * 30_000)
        (folder / "b.md").write_text("Another small note.\n")
        eventually(lambda: sorted(_failures(report())) == ["big.md", "scan.txt"] or None)
        (folder / "scan.txt").write_text("A scan that is small now.\n")
        os.mkfifo(folder / "sub" / "another-pipe.txt")
        fixed = eventually(lambda: report() if list(_failures(report())) == ["big.md"] else None)
        assert fixed["files"] == 4 and fixed["unreachable"] is None
        names = {d.name for d in eventually(lambda: documents_when(capped, brain, 3)).values()}
        assert names == {"a.md", "b.md", "scan.txt"}
    finally:
        watcher.stop()


def test_permission_denied_fails_alone_in_a_sync_and_while_watching(tmp_path: Path) -> None:
    """SQLite only: what is tested is reading the folder, the same on either backend."""
    folder = (tmp_path / "shared").resolve()
    (folder / "private").mkdir(parents=True)
    (folder / "open.md").write_text("Anyone may read this note.\n")
    (folder / "locked.md").write_text("Nobody may read this one.\n")
    (folder / "private" / "diary.md").write_text("Nor this one.\n")
    (folder / "locked.md").chmod(0)
    (folder / "private").chmod(0)
    home = tmp_path / "home"
    env = {**os.environ, "LOCI_HOME": str(home), "LOCI_SOURCES_WATCH": "events"}
    assert run_cli("sources", "add", str(folder), home=home).returncode == 0
    try:
        synced = subprocess.run(
            [sys.executable, "-m", "loci", "sync", "--json", "--no-wait"],
            env=env, capture_output=True, text=True, timeout=120,
            preexec_fn=_held_to_mode_bits,
        )  # fmt: skip
        assert synced.returncode == 4, synced.stderr  # 4: done, with files that need you
        (row,) = json.loads(synced.stdout)["sources"]
        assert (row["added"], row["files"]) == (1, 2)
        reasons = {Path(f["path"]).name: f["reason"] for f in row["failed"]}
        assert reasons == {
            "locked.md": "cannot read: Permission denied",
            "private": "cannot list: Permission denied",
        }

        # While a worker watches: a new locked file fails alone, a new open one is added.
        worker = subprocess.Popen(
            [sys.executable, "-m", "loci", "worker"], env=env, preexec_fn=_held_to_mode_bits,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        )  # fmt: skip
        store = open_store(home, None)
        try:
            brain = store.get_brain("default")
            (synced_once,) = store.sources(brain.id)  # as `loci sync` left it
            eventually(lambda: store.watch_leases(), timeout=60)
            eventually(  # the worker's first rescan done: what comes next is an event
                lambda: store.sources(brain.id)[0].last_sync_at != synced_once.last_sync_at,
                timeout=60,
            )
            (folder / "also-locked.md").write_text("Locked too.\n")
            (folder / "also-locked.md").chmod(0)
            (folder / "later.md").write_text("Readable, added while watching.\n")

            def report() -> dict[str, Any] | None:
                (source,) = store.sources(brain.id)
                failed = _failures(source.last_report or {"failed": []})
                return source.last_report if "also-locked.md" in failed else None

            last = eventually(report, timeout=30)
            assert set(_failures(last)) == {"locked.md", "private", "also-locked.md"}
            names = {d.name for d in store.documents_under(brain.id, str(folder))}
            assert names == {"open.md", "later.md"}
        finally:
            worker.send_signal(signal.SIGTERM)
            worker.wait(30)
            store.close()
    finally:
        (folder / "private").chmod(0o755)


def test_temporary_and_lock_files_and_paths_through_links_are_not_the_folders_files(
    tmp_path: Path,
) -> None:
    root = (tmp_path / "docs").resolve()
    (root / "notes").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("Outside the folder.\n")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    kept = ["report.docx", "notes/plan.md"]
    passing = ["~$report.docx", "notes/plan.md~", "notes/#plan.md#", "notes/x.tmp", "dl.part",
               "notes/.plan.md.swp", "big.iso.crdownload"]  # fmt: skip
    for name in kept + passing:
        (root / name).write_text("x")
    files, problems = walk_folder(root)
    assert sorted(f.path.relative_to(root).as_posix() for f in files) == sorted(kept)
    # What a watcher that follows links might report: a path through the link is not ours.
    seen = [root / "linked" / "secret.md", root / "linked", root / "notes", root / "dl.part"]
    files, problems = walk_paths(root, seen)
    assert [f.path.relative_to(root).as_posix() for f in files] == ["notes/plan.md"]
    assert problems == []
