"""Every command that queues indexing waits the same way (`loci.cli.waiting`): by default until
its documents are found by their words when a worker runs on the database (which writes their
vectors), else until they are fully indexed; `--wait` until fully indexed, `--no-wait` not at
all."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support import text_files
from tests.support.cli import run_cli
from tests.support.services import open_store

pytestmark = pytest.mark.both_backends


def test_sync_reprocess_and_reindex_leave_the_vectors_to_a_running_worker(
    tmp_path: Path, database_url: str | None
) -> None:
    home = tmp_path / "home"
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}

    def cli(*args: str) -> str:
        done = run_cli(*args, home=home, env=env)
        assert done.returncode == 0, done.stderr
        return done.stdout

    folder = tmp_path / "kiln"
    folder.mkdir()
    pieces = ("the celadon crawled near the foot", "the tenmoku ran thin on the rim")
    for n, piece in enumerate(pieces):
        body = f"{text_files.prose(300, seed=n)}\n\nAfter firing {n}, {piece}."
        (folder / f"firing-{n}.md").write_text(f"# Firing {n}\n\n{body}\n")
    cli("sources", "add", str(folder))
    store = open_store(home, database_url)
    try:
        store.beat_worker("serve@test", True)  # what a running `loci serve` says every 5 s
        synced = run_cli("sync", home=home, env=env)
        assert synced.returncode == 0 and "vectors pending" in synced.stderr
        brain = store.get_brain("default")
        docs = sorted(store.list_documents(brain.id), key=lambda d: d.name)
        assert [(d.status, d.vectors_pending) for d in docs] == [("processing", True)] * 2
        status = json.loads(cli("status", "--json"))["stats"]
        assert (status["vectors_pending"], status["queue_by_stage"]) == (2, {"vectors": 2})
        shown = cli("status")
        assert "2 processing (2 searchable by words, vectors pending)" in shown
        assert "2 queued, 0 running, 0 failed (by stage: text 0; vectors 2)" in shown
        found = json.loads(cli("search", "tenmoku rim", "--mode", "text", "--json", "--limit", "1"))
        assert found["hits"][0]["document_id"] == docs[1].id

        first = str(docs[0].id)
        [again] = json.loads(cli("reprocess", first, "--json"))
        assert (again["status"], again["vectors_pending"]) == ("processing", True)
        [again] = json.loads(cli("reprocess", first, "--wait", "--json"))
        assert (again["status"], again["vectors_pending"]) == ("ready", False)

        # The first file's passages have their vectors now (kept by their hash): it is ready
        # as soon as its text is read again; the second waits for the worker.
        assert "reindexed 2 documents: 1 ready, 1 searchable by words (vectors pending)" in cli(
            "reindex"
        )
        queued = json.loads(cli("reindex", "--no-wait", "--json"))["documents"]
        assert [(d["status"], d["chunk_count"] > 0) for d in queued] == [("processing", True)] * 2
        assert not any(d["vectors_pending"] for d in queued)

        store.beat_worker("serve@test", False)  # no worker: the command embeds itself
        assert "reindexed 2 documents: 2 ready" in cli("reindex")
    finally:
        store.close()
