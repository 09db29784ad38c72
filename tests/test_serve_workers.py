"""`loci serve --workers 2` on SQLite: two uvicorn processes share `loci.db`, each with its own
in-memory BM25 index and vector matrix of a brain. What one process writes (or its worker indexes)
the other must find on its next search — it catches up from the chunk log — and the indexes saved
beside the database must agree with the database for the next process that loads them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.cli import run_cli
from tests.support.live_server import free_port
from tests.support.waiting import wait_up

# A document indexed by either process is found by every search, on either, this soon after it
# is ready (catching up happens on the search itself; the margin is for a loaded machine).
CAUGHT_UP_S = 2.0
SEARCHES = 24  # each on a new connection, so the kernel hands them to both processes


def _cpu_ticks(pid: int) -> int:
    """User plus system CPU time of a process, in clock ticks (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def _search(url: str, token: str, query: str) -> list[int]:
    response = httpx.post(
        url + "/api/v1/brains/house/search",
        json={"query": query},
        headers={"Authorization": f"Bearer {token}", "Connection": "close"},
        timeout=30,
    )
    assert response.status_code == 200, response.text
    return [hit["document_id"] for hit in response.json()["hits"]]


def _wait_ready(api: httpx.Client, doc_id: int) -> None:
    deadline = time.monotonic() + 120
    while api.get(f"/brains/house/files/{doc_id}").json()["status"] == "processing":
        assert time.monotonic() < deadline, f"document {doc_id} was never indexed"
        time.sleep(0.1)


def _searches_until(url: str, token: str, query: str, seconds: float) -> list[list[int]]:
    answers: list[list[int]] = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline or len(answers) < SEARCHES:
        answers.append(_search(url, token, query))
    return answers


def test_two_processes_find_what_the_other_wrote(tmp_path: Path) -> None:
    home = tmp_path / "home"
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    log = (tmp_path / "serve.log").open("w+")
    process = subprocess.Popen(
        [sys.executable, "-m", "loci", "serve", "--port", str(port), "--workers", "2"],
        env={**os.environ, "LOCI_HOME": str(home)},
        stdout=subprocess.DEVNULL,
        stderr=log,
        text=True,
    )
    try:
        wait_up(url, process)
        token = (home / "owner-token").read_text().strip()
        with httpx.Client(
            base_url=url + "/api/v1", headers={"Authorization": f"Bearer {token}"}, timeout=30
        ) as api:
            assert api.post("/brains", json={"name": "house"}).status_code == 201
            first = api.post(
                "/brains/house/notes", json={"text": "The fuse box is behind the coat rack."}
            ).json()["document"]["id"]
            _wait_ready(api, first)
            log.seek(0)
            pids = [int(p) for p in re.findall(r"Started server process \[(\d+)\]", log.read())]
            assert len(pids) == 2
            # Both processes load the brain's indexes now, before the next write: stale ones
            # would be what they answer from.
            before = {pid: _cpu_ticks(pid) for pid in pids}
            warm = _searches_until(url, token, "where is the fuse box", 0)
            assert all(found[:1] == [first] for found in warm)
            assert all(_cpu_ticks(pid) > before[pid] for pid in pids), "one process served all"

            second = api.post(
                "/brains/house/notes", json={"text": "The water stopcock is under the sink."}
            ).json()["document"]["id"]
            _wait_ready(api, second)
            answers = _searches_until(url, token, "where is the water stopcock", CAUGHT_UP_S)
            assert all(found[:1] == [second] for found in answers), answers

            assert api.delete(f"/brains/house/notes/{first}").status_code == 204
            gone = _searches_until(url, token, "where is the fuse box", CAUGHT_UP_S)
            assert all(first not in found for found in gone), gone
    finally:
        process.terminate()
        process.wait(timeout=60)
        log.close()

    # A new process loads the saved indexes (or rebuilds them): they agree with the database.
    saved = sorted(p.name for p in (home / "index").iterdir())
    assert saved, "no index was saved beside the database"
    found = run_cli("search", "stopcock fuse box", "--brain", "house", "--json", home=home)
    assert found.returncode == 0, found.stderr
    hits = json.loads(found.stdout)["hits"]
    assert [h["document_id"] for h in hits] == [second]
    assert hits[0]["text_rank"] is not None and hits[0]["vector_rank"] is not None
