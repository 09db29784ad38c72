"""The ingestion worker survives being killed mid-job: the job is leased again, nothing doubles."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loci.models import Brain
from loci.service import Loci
from loci.store.sqlite import SqliteStore
from tests.support import pdf_files
from tests.support.cli import run_cli
from tests.support.services import open_store

pytestmark = pytest.mark.both_backends


def scalar(store: Any, sql: str, *params: Any) -> Any:
    """One value, whichever backend (SQLite takes `?`, PostgreSQL `%s`)."""
    if isinstance(store, SqliteStore):
        return store.db.scalar(sql, params)
    return store.db.scalar(sql.replace("?", "%s"), params)


@pytest.mark.attack
def test_killed_worker_job_is_picked_up_again_without_duplicate_chunks(
    tmp_path: Path, database_url: str | None
) -> None:
    home = tmp_path / "home"
    doc_path = tmp_path / "long-report.pdf"
    doc_path.write_bytes(pdf_files.text_pdf(40))  # ~40 pages: several seconds of embedding
    env = {"LOCI_JOB_LEASE_S": "2"}
    if database_url:
        env["LOCI_DATABASE_URL"] = database_url
    queued = json.loads(
        run_cli("add", str(doc_path), "--no-wait", "--json", home=home, env=env).stdout
    )
    doc_id = queued[0]["document"]["id"]

    worker = subprocess.Popen(
        [sys.executable, "-m", "loci", "worker"],
        env={**os.environ, "LOCI_HOME": str(home), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    store = open_store(home, database_url)
    # Killed inside its embedding: the text stage done, the vectors' stage running. Waited for
    # as a state, not a time: under load the text stage alone may take seconds.
    deadline = time.time() + 120
    embedding = "SELECT count(*) FROM jobs WHERE status = 'running' AND stage = 'vectors'"
    while time.time() < deadline and not scalar(store, embedding):
        time.sleep(0.05)
    assert scalar(store, embedding), "the worker never started embedding"
    worker.send_signal(signal.SIGKILL)
    worker.wait(10)

    brain = store.get_brain("default")
    assert store.get_document(brain.id, doc_id).status == "processing"
    assert scalar(store, "SELECT status FROM jobs WHERE document_id = ?", doc_id) == "running"

    # The dead worker's lease runs out (LOCI_JOB_LEASE_S): only then may another take the job.
    expires = scalar(store, "SELECT lease_expires FROM jobs WHERE document_id = ?", doc_id)
    while time.time() <= expires:
        time.sleep(0.05)
    again = run_cli("worker", "--once", home=home, env=env)
    assert again.returncode == 0, again.stderr

    doc = store.get_document(brain.id, doc_id)
    assert doc.status == "ready"
    indexes = [c.index for c in store.list_chunks(brain.id, doc_id)]
    assert indexes == list(range(doc.chunk_count)) and doc.chunk_count > 10
    assert scalar(store, "SELECT attempts FROM jobs WHERE document_id = ?", doc_id) == 2
    if isinstance(store, SqliteStore):
        assert scalar(store, "SELECT count(*) FROM chunks_fts") == doc.chunk_count
    else:  # each chunk's postings once, and the brain's statistics count each chunk once
        assert scalar(store, "SELECT count(DISTINCT chunk_id) FROM chunk_terms") == doc.chunk_count
        assert scalar(store, "SELECT chunks FROM lexical_stats") == doc.chunk_count
        assert scalar(store, "SELECT count(*) FROM chunk_terms") == scalar(
            store, "SELECT sum(df) FROM term_df"
        )
    store.close()


def test_an_idle_worker_starts_on_a_job_queued_in_its_process_and_stops_when_told(
    loci: Loci, brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`loci serve`'s worker sleeps between polls for other processes' jobs, but a file the
    server itself takes in (an upload, a watched folder's change) wakes it at once: with a
    minute between polls, a note is still indexed, and the worker still stops promptly."""
    idle = threading.Event()
    store_wait: Callable[..., bool] = loci.store.wait_for_jobs  # type: ignore[attr-defined]

    def wait_for_jobs(timeout_s: float, stop: threading.Event | None = None) -> bool:
        # A first short wait sets up what wakes it (PostgreSQL's LISTEN): a job queued after
        # `idle` is set wakes it however soon it comes.
        if store_wait(0.01, stop):
            return True
        idle.set()
        return store_wait(timeout_s, stop)

    monkeypatch.setattr(loci.store, "wait_for_jobs", wait_for_jobs)
    worker = loci.library.worker()
    worker.settings = replace(worker.settings, idle_sleep_s=60.0, quick_lane=False)
    stop = threading.Event()
    thread = threading.Thread(target=worker.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        assert idle.wait(30), "the worker never found the queue empty"  # now it waits a minute
        added = loci.library.add_note(brain, "The shed key hangs behind the back door.")
        deadline = time.monotonic() + 30
        while loci.library.document(brain, added.document.id).status != "ready":
            assert time.monotonic() < deadline, "the worker slept through the new job"
            time.sleep(0.05)
    finally:
        stop.set()
        thread.join(timeout=10)
    assert not thread.is_alive()  # told to stop while waiting for jobs: it did
