"""Scale-out on PostgreSQL in real processes: three workers drain one queue while one of them is
killed, and two API processes serve the same user from one database."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from loci.embed.base import Embedder
from loci.store.postgres import PostgresStore
from loci.store.postgres.connection import connect
from tests.support.live_server import free_port
from tests.support.pg import EmbeddedPostgres
from tests.support.services import make_service
from tests.support.waiting import wait_up

JOBS = 300


@pytest.fixture
def database(postgres_server: EmbeddedPostgres) -> Iterator[str]:
    url = postgres_server.new_database()
    yield url
    postgres_server.drop_database(url)


def _worker(home: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "loci", "worker"],
        env={**os.environ, "LOCI_HOME": str(home), **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


@pytest.mark.attack
def test_three_workers_drain_300_jobs_exactly_once_though_one_is_killed(
    tmp_path: Path, embedder: Embedder, database: str, postgres_server: EmbeddedPostgres
) -> None:
    # Test-only audit, installed by the schema owner: every time a job is marked done.
    with connect(postgres_server.owner_url(database)) as owner:
        owner.execute(
            "CREATE TABLE done_log (job_id bigint, attempts int, owner text);"
            " GRANT INSERT, SELECT ON done_log TO loci_app;"
            " CREATE FUNCTION log_done() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            " INSERT INTO done_log VALUES (old.id, old.attempts, old.lease_owner); RETURN new;"
            " END $$;"
            " CREATE TRIGGER jobs_done AFTER UPDATE OF status ON jobs FOR EACH ROW"
            " WHEN (new.status = 'done' AND old.status <> 'done') EXECUTE FUNCTION log_done();"
        )
    home = tmp_path / "home"
    loci = make_service(home, embedder, database)
    brain = loci.brain("default")
    ids = [
        loci.library.add_note(
            brain, f"Note {i}: the heron number {i} waits in pond {i % 17}."
        ).document.id
        for i in range(JOBS)
    ]
    store = loci.store
    assert isinstance(store, PostgresStore)
    env = {"LOCI_DATABASE_URL": database, "LOCI_JOB_LEASE_S": "3"}
    workers = [_worker(home, env) for _ in range(3)]
    try:
        victim = workers[0]
        deadline = time.monotonic() + 120
        held: list[int] = []
        while time.monotonic() < deadline and not held:
            held = [
                int(r["id"])
                for r in store.db.rows(
                    "SELECT id FROM jobs WHERE status = 'running' AND lease_owner LIKE %s",
                    (f"%:{victim.pid}:%",),
                )
            ]
            time.sleep(0.05)
        assert held, "the first worker never claimed a job"
        victim.send_signal(signal.SIGKILL)
        victim.wait(10)
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and store.pending_jobs() > 0:
            time.sleep(0.5)
        assert store.pending_jobs() == 0
    finally:
        for worker in workers:
            worker.terminate()
        for worker in workers:
            worker.wait(30)

    done = store.db.rows("SELECT job_id, attempts, owner FROM done_log")
    assert len(done) == JOBS and len({r["job_id"] for r in done}) == JOBS  # each exactly once
    by_job = {int(r["job_id"]): r for r in done}
    unfinished = [j for j in held if j in by_job and f":{victim.pid}:" in by_job[j]["owner"]]
    assert not unfinished  # the killed worker finished nothing it held
    assert all(by_job[j]["attempts"] >= 2 for j in held if j in by_job)  # reclaimed, retried
    assert {r["owner"].split(":")[1] for r in done} >= {str(w.pid) for w in workers[1:]}
    for doc in loci.library.documents(brain):
        assert doc.status == "ready" and doc.chunk_count == 1, doc
    chunks = store.db.rows("SELECT document_id, count(*) AS n FROM chunks GROUP BY document_id")
    assert sorted(int(r["document_id"]) for r in chunks) == sorted(ids)
    assert {int(r["n"]) for r in chunks} == {1}  # no duplicate chunks
    stats = store.db.rows("SELECT chunks FROM lexical_stats")
    assert stats == [{"chunks": JOBS}]
    store.close()


def _serve(home: Path, port: int, env: dict[str, str], *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "loci", "serve", "--port", str(port), *extra],
        env={**os.environ, "LOCI_HOME": str(home), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_api_processes_on_one_database_serve_the_same_user(
    tmp_path: Path, database: str
) -> None:
    """Two `loci serve` processes with separate homes (as on two machines) and the blobs in the
    database: what one writes the other reads at once; the worker in one indexes for both."""
    env = {"LOCI_DATABASE_URL": database, "LOCI_BLOBS": "database"}
    ports = [free_port(), free_port()]
    urls = [f"http://127.0.0.1:{p}" for p in ports]
    first = _serve(tmp_path / "one", ports[0], env)  # with a worker
    second = None
    try:
        wait_up(urls[0], first)
        assert first.stdout is not None
        token = first.stdout.readline().strip()
        assert token.startswith("loci_")
        second = _serve(tmp_path / "two", ports[1], env, "--no-worker")
        wait_up(urls[1], second)
        auth = {"Authorization": f"Bearer {token}"}
        one, two = (httpx.Client(base_url=u + "/api/v1", headers=auth, timeout=30) for u in urls)
        with one, two:
            assert two.get("/me").json()["user"] == one.get("/me").json()["user"]
            made = two.post("/brains", json={"name": "shared", "visibility": "restricted"})
            assert made.status_code == 201, made.text
            note = two.post(
                "/brains/shared/notes", json={"text": "The spare key is under the blue pot."}
            )
            assert note.status_code == 201, note.text
            doc_id = note.json()["document"]["id"]
            read = one.get(f"/brains/shared/notes/{doc_id}")  # written on two, read on one
            assert read.status_code == 200 and "blue pot" in read.json()["text"]
            deadline = time.monotonic() + 120
            status = ""
            while time.monotonic() < deadline and status != "ready":
                status = two.get(f"/brains/shared/notes/{doc_id}").json()["document"]["status"]
                time.sleep(0.2)
            assert status == "ready"  # indexed by the worker inside process one
            for api in (one, two):
                hits = api.post("/brains/shared/search", json={"query": "where is the key"})
                assert hits.status_code == 200, hits.text
                assert hits.json()["hits"][0]["document_id"] == doc_id
    finally:
        for process in (first, second):
            if process is not None:
                process.terminate()
                process.wait(30)
    assert not (tmp_path / "one" / "blobs").exists()  # nothing but the database
