"""The ingestion worker survives being killed mid-job: the job is leased again, nothing doubles."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from loci.store.sqlite import SqliteStore
from tests import fixtures
from tests.conftest import open_store, run_cli

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
    doc_path.write_bytes(fixtures.text_pdf(40))  # ~40 pages: several seconds of embedding
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
    deadline = time.time() + 60
    while time.time() < deadline:
        if scalar(store, "SELECT count(*) FROM jobs WHERE status = 'running'"):
            break
        time.sleep(0.05)
    time.sleep(1.0)  # well inside the job: the model is loaded and embedding has started
    worker.send_signal(signal.SIGKILL)
    worker.wait(10)

    brain = store.get_brain("default")
    assert store.get_document(brain.id, doc_id).status == "processing"
    assert scalar(store, "SELECT status FROM jobs WHERE document_id = ?", doc_id) == "running"

    time.sleep(2.2)  # let the dead worker's lease expire
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
