"""HTTP server under load: hybrid searches at rising concurrency while uploads are ingested.

    python bench/load.py [--chunks 10000] [--levels 1,2,4,8,16] [--seconds 15] [--workers N]
                         [--keep DIR]

Builds a brain of N synthetic chunks through the store (as bench/search_latency.py does: Zipf
vocabulary for BM25, random unit vectors for the vector leg; the server embeds each query with
the real local model, so both legs run), then starts `python -m loci serve` on 127.0.0.1 in a
subprocess with its own LOCI_HOME and drives it over HTTP:

- one uploader thread posts a new Markdown file to the same brain every `--upload-every` seconds
  for the whole run, so the server's worker parses, chunks and embeds while searches are served
  (and each indexed file changes the brain the searches read);
- at each concurrency level, that many client threads (one httpx client each) send
  `POST /api/v1/brains/bench/search` back to back for `--seconds`, each query made unique.

Reports per level: searches/s, p50/p95/p99 latency, 5xx count, and "database is locked" seen in
responses or the server's log; then the saturation point (the first level whose throughput is
within 10% of the level before it), uploads accepted and indexed, and the server's peak RSS.
"""

from __future__ import annotations

import argparse
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

from loci.app import OWNER_TOKEN_FILE
from loci.embed.local import LocalEmbedder
from loci.eval.metrics import percentile

sys.path.insert(0, str(Path(__file__).resolve().parent))
from search_latency import QUERIES, service, synthetic_brain  # noqa: E402  (a sibling script, not a package)

BRAIN = "bench"
LOCKED = "database is locked"
WORDS = ["boiler", "valve", "budget", "supplier", "sensor", "ferry", "enzyme", "payment", "heating"]


@dataclass
class Level:
    clients: int
    seconds: float
    latencies_ms: list[float] = field(default_factory=list)
    server_errors: int = 0
    other_errors: int = 0
    locked: int = 0

    @property
    def rate(self) -> float:
        return len(self.latencies_ms) / self.seconds


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def build_brain(home: Path, n_chunks: int) -> None:
    loci = service(home, LocalEmbedder())
    synthetic_brain(loci, n_chunks)
    loci.store.close()


def start_server(home: Path, port: int, log: Path, workers: int) -> subprocess.Popen[bytes]:
    env = {**os.environ, "LOCI_HOME": str(home)}
    with log.open("wb") as out:
        process = subprocess.Popen(
            [sys.executable, "-m", "loci", "serve", "--port", str(port), "--workers", str(workers)],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=out,
        )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/api/v1/health").status_code == 200:
                return process
        except httpx.TransportError:
            time.sleep(0.2)
    process.kill()
    raise RuntimeError(f"the server did not start; see {log}")


def peak_rss_mb(pid: int) -> float:
    """Peak resident memory of the server: its process and, with --workers, its children."""
    total = 0.0
    children = Path(f"/proc/{pid}/task/{pid}/children")
    pids = [pid, *(int(c) for c in children.read_text().split())] if children.exists() else [pid]
    for one in pids:
        for line in Path(f"/proc/{one}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                total += int(line.split()[1]) / 1024
    return total


def uploader(base: str, token: str, every: float, stop: threading.Event, ids: list[int]) -> None:
    rng = random.Random(11)
    headers = {"Authorization": f"Bearer {token}"}
    with httpx.Client(base_url=base, headers=headers, timeout=60) as api:
        n = 0
        while not stop.wait(every if n else 0):
            n += 1
            sections = [
                f"## Part {s}\n\n" + " ".join(rng.choice(WORDS) for _ in range(180))
                for s in range(4)
            ]
            body = f"# Upload {n} {time.time_ns()}\n\n" + "\n\n".join(sections) + "\n"
            response = api.post(
                f"/brains/{BRAIN}/files", files={"files": (f"upload-{n}.md", body.encode())}
            )
            if response.status_code == 202:
                ids.append(response.json()["results"][0]["document"]["id"])
            else:
                print(f"upload {n}: {response.status_code} {response.text[:200]}", flush=True)


def search_client(base: str, token: str, level: Level, until: float, seed: int) -> None:
    rng = random.Random(seed)
    headers = {"Authorization": f"Bearer {token}"}
    results: list[float] = []
    with httpx.Client(base_url=base, headers=headers, timeout=60) as api:
        while time.monotonic() < until:
            query = f"{rng.choice(QUERIES)} {rng.choice(WORDS)} {rng.randrange(10**6)}"
            start = time.perf_counter()
            response = api.post(f"/brains/{BRAIN}/search", json={"query": query, "limit": 10})
            elapsed = (time.perf_counter() - start) * 1000
            if LOCKED in response.text:
                level.locked += 1
            if response.status_code >= 500:
                level.server_errors += 1
            elif response.status_code != 200:
                level.other_errors += 1
            else:
                results.append(elapsed)
    level.latencies_ms.extend(results)  # list.extend is atomic under the GIL


def run_level(base: str, token: str, clients: int, seconds: float) -> Level:
    level = Level(clients, seconds)
    until = time.monotonic() + seconds
    threads = [
        threading.Thread(target=search_client, args=(base, token, level, until, i))
        for i in range(clients)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return level


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--levels", default="1,2,4,8,16")
    parser.add_argument("--seconds", type=float, default=15.0, help="per concurrency level")
    parser.add_argument("--upload-every", type=float, default=1.0, help="seconds between uploads")
    parser.add_argument("--keep", type=Path, help="reuse/keep the data directory here")
    parser.add_argument("--workers", type=int, default=1, help="server processes (loci serve)")
    args = parser.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="loci-load-"))
    build_brain(home, args.chunks)

    port = free_port()
    log = home / "server.log"
    server = start_server(home, port, log, args.workers)
    base = f"http://127.0.0.1:{port}/api/v1"
    token = (home / OWNER_TOKEN_FILE).read_text().strip()
    stop = threading.Event()
    uploaded: list[int] = []
    upload_thread = threading.Thread(
        target=uploader, args=(base, token, args.upload_every, stop, uploaded)
    )
    try:
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as api:
            api.post(f"/brains/{BRAIN}/search", json={"query": "warm up"})  # model and caches
        upload_thread.start()
        levels = []
        print(
            f"{'clients':>7} {'search/s':>9} {'p50 ms':>7} {'p95 ms':>7} {'p99 ms':>7}"
            f" {'5xx':>4} {'locked':>6} {'other':>5}",
            flush=True,
        )
        for clients in (int(c) for c in args.levels.split(",")):
            level = run_level(base, token, clients, args.seconds)
            levels.append(level)
            times = sorted(level.latencies_ms) or [float("nan")]
            print(
                f"{clients:>7} {level.rate:>9.1f} {statistics.median(times):>7.0f}"
                f" {percentile(times, 95):>7.0f} {percentile(times, 99):>7.0f}"
                f" {level.server_errors:>4} {level.locked:>6} {level.other_errors:>5}",
                flush=True,
            )
        stop.set()
        upload_thread.join()
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {token}"}) as api:
            docs = {d["id"]: d["status"] for d in api.get(f"/brains/{BRAIN}/files").json()}
        statuses = [docs.get(i, "missing") for i in uploaded]
        rss = peak_rss_mb(server.pid)
    finally:
        stop.set()
        server.send_signal(signal.SIGINT)
        try:
            server.wait(timeout=60)
        except subprocess.TimeoutExpired:
            server.kill()

    saturation = next(
        (b.clients for a, b in zip(levels, levels[1:], strict=False) if b.rate < a.rate * 1.1),
        None,
    )
    log_locked = log.read_text(errors="replace").count(LOCKED)
    print(
        f"saturation: {f'{saturation} clients' if saturation else 'not reached'};"
        f" uploads: {len(uploaded)} accepted, {statuses.count('ready')} indexed,"
        f" {statuses.count('processing')} still queued, {statuses.count('failed')} failed;"
        f" server log: {log_locked} '{LOCKED}'; server peak RSS {rss:.0f} MB"
    )


if __name__ == "__main__":
    main()
