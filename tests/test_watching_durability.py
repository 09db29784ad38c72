"""kill -9 of a real `loci worker` (which watches and indexes) in the middle of a folder's first
sync loses nothing: started again, it takes the dead process's folder over at once, finishes
the sync, and every file is exactly one ready document — none doubled, none dropped. And a real
`loci serve --workers 2` watches each folder from one of its processes only."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from loci.store.base import Store
from tests.support.cli import run_cli
from tests.support.live_server import free_port
from tests.support.services import open_store
from tests.support.waiting import eventually

pytestmark = pytest.mark.both_backends

FILES = 200


@contextmanager
def worker(home: Path, env: dict[str, str], log: Path) -> Iterator[subprocess.Popen[bytes]]:
    with log.open("ab") as errors:
        process = subprocess.Popen(
            [sys.executable, "-m", "loci", "worker"],
            env={**os.environ, "LOCI_HOME": str(home), **env},
            stdout=subprocess.DEVNULL,
            stderr=errors,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            process.wait(30)


def documents_of(store: Store, folder: Path) -> list[tuple[str | None, str, str, int]]:
    brain = store.get_brain("default")
    return [
        (d.source_path, d.content_hash, d.status, d.id)
        for d in store.documents_under(brain.id, str(folder))
    ]


@pytest.mark.attack
def test_kill_9_during_a_sync_loses_nothing_and_doubles_nothing(
    tmp_path: Path, database_url: str | None
) -> None:
    folder = (tmp_path / "journal").resolve()
    folder.mkdir()
    for i in range(FILES):
        (folder / f"day-{i:03}.md").write_text(f"# Day {i}\n\nOn day {i} the heron came back.\n")
    home = tmp_path / "home"
    env = {"LOCI_JOB_LEASE_S": "2", "LOCI_SOURCES_WATCH": "events"}
    if database_url:
        env["LOCI_DATABASE_URL"] = database_url
    added = run_cli("sources", "add", str(folder), home=home, env=env)
    assert added.returncode == 0, added.stderr
    store = open_store(home, database_url)
    log = tmp_path / "worker.log"
    try:
        with worker(home, env, log) as first:
            deadline = time.monotonic() + 120
            while len(documents_of(store, folder)) < FILES // 10:
                assert time.monotonic() < deadline and first.poll() is None, log.read_text()
                time.sleep(0.02)
            first.send_signal(signal.SIGKILL)
            first.wait(10)
        at_kill = documents_of(store, folder)
        assert FILES // 10 <= len(at_kill) < FILES  # killed mid-sync

        expected = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir()}
        with worker(home, env, log) as second:
            deadline = time.monotonic() + 180
            while True:
                now = documents_of(store, folder)
                done = len(now) >= FILES and all(status == "ready" for _, _, status, _ in now)
                if done:
                    break
                assert time.monotonic() < deadline and second.poll() is None, log.read_text()
                time.sleep(0.2)
        paths = [path for path, _, _, _ in now]
        assert len(paths) == len(set(paths)) == FILES  # one document a file, none doubled
        assert {path: digest for path, digest, _, _ in now} == expected  # none dropped
        kept = {path: doc_id for path, _, _, doc_id in at_kill}
        assert all(kept[p] == i for p, _, _, i in now if p in kept)  # added before: same id
        brain = store.get_brain("default")
        for _, _, _, doc_id in now:  # each indexed once: its chunks numbered 0, 1, … once
            chunks = [c.index for c in store.list_chunks(brain.id, doc_id)]
            assert chunks == list(range(len(chunks))) and chunks
        (source,) = store.sources(brain.id)
        assert source.last_report is not None
        assert source.last_report["files"] == FILES and source.last_report["failed"] == []
    finally:
        store.close()


def test_loci_serve_with_two_processes_watches_each_folder_once(tmp_path: Path) -> None:
    """SQLite: the lease itself is tested on both backends in test_watching.py; this is the
    wiring of `loci serve --workers 2`, where each process runs a watcher."""
    folder = (tmp_path / "notes").resolve()
    folder.mkdir()
    for name in ("a.md", "b.md"):
        (folder / name).write_text(f"The note {name}.\n")
    home = tmp_path / "home"
    assert run_cli("sources", "add", str(folder), home=home).returncode == 0
    env = {**os.environ, "LOCI_HOME": str(home), "LOCI_SOURCES_WATCH": "events"}
    serve = subprocess.Popen(
        [sys.executable, "-m", "loci", "serve", "--workers", "2", "--port", str(free_port())],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    store = open_store(home, None)
    try:
        brain = store.get_brain("default")
        eventually(lambda: len(documents_of(store, folder)) == 2, timeout=120)
        (lease,) = eventually(lambda: list(store.watch_leases().values()), timeout=30)
        owner_pid = int(lease.owner.rsplit(":", 2)[1])
        assert owner_pid != serve.pid  # one of the server's worker processes, not the manager
        (folder / "c.md").write_text("Written while two processes serve.\n")
        eventually(lambda: len(documents_of(store, folder)) == 3, timeout=30)
        time.sleep(3)  # a second watcher would have added it again by now
        paths = [path for path, _, _, _ in documents_of(store, folder)]
        assert len(paths) == len(set(paths)) == 3
        assert [lease.owner] == [w.owner for w in store.watch_leases().values()]
        assert store.sources(brain.id)[0].last_report["files"] == 3  # type: ignore[index]
    finally:
        serve.send_signal(signal.SIGTERM)
        serve.wait(60)
        leases = store.watch_leases()
        store.close()
    assert leases == {}  # stopping, the server gave the folder up
