"""The ingestion worker survives being killed mid-job: the job is leased again, nothing doubles."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from loci.store.sqlite import SqliteStore
from tests import fixtures
from tests.conftest import run_cli


def test_killed_worker_job_is_picked_up_again_without_duplicate_chunks(tmp_path: Path) -> None:
    home = tmp_path / "home"
    doc_path = tmp_path / "long-report.pdf"
    doc_path.write_bytes(fixtures.text_pdf(40))  # ~40 pages: several seconds of embedding
    env = {"LOCI_JOB_LEASE_S": "2"}
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
    store = SqliteStore(home / "loci.db")
    deadline = time.time() + 60
    while time.time() < deadline:
        if store.db.scalar("SELECT count(*) FROM jobs WHERE status = 'running'"):
            break
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the job: the model is loaded and embedding has started
    worker.send_signal(signal.SIGKILL)
    worker.wait(10)

    brain = store.get_brain("default")
    assert store.get_document(brain.id, doc_id).status == "processing"
    assert store.db.scalar("SELECT status FROM jobs WHERE document_id = ?", (doc_id,)) == "running"

    time.sleep(2.2)  # let the dead worker's lease expire
    again = run_cli("worker", "--once", home=home, env=env)
    assert again.returncode == 0, again.stderr

    doc = store.get_document(brain.id, doc_id)
    assert doc.status == "ready"
    indexes = [c.index for c in store.list_chunks(brain.id, doc_id)]
    assert indexes == list(range(doc.chunk_count)) and doc.chunk_count > 10
    assert store.db.scalar("SELECT attempts FROM jobs WHERE document_id = ?", (doc_id,)) == 2
    fts_rows = store.db.scalar("SELECT count(*) FROM chunks_fts")
    assert fts_rows == doc.chunk_count
