"""Ingest throughput on PostgreSQL with 1 and 2 `loci worker`s (docs/benchmarks-journal.md).

    python bench/pg_ingest.py --admin-url postgresql://postgres@/postgres?host=… \
        --corpus ../shared/datasets/scifact/corpus.jsonl --docs 600

For each worker count: a fresh database, the first N SciFact abstracts queued as notes, then W
worker processes (the shipped local model, LOCI_EMBED_THREADS=0) drain the queue; the time from
their start to an empty queue (model loading included) gives documents and chunks per second.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

from loci.app import build_service
from loci.config import Settings


def database_url(admin_url: str, name: str) -> str:
    return urlunsplit(urlsplit(admin_url)._replace(path=f"/{name}"))


def run(admin_url: str, corpus: Path, docs: int, workers: int) -> tuple[float, int]:
    name = f"loci_ingest_{workers}"
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name}")
        conn.execute(f"CREATE DATABASE {name}")
    url = database_url(admin_url, name)
    home = Path(tempfile.mkdtemp(prefix="loci-ingest-"))
    loci = build_service(Settings(home=home, database_url=url, blobs="database"))
    brain = loci.brain("bench")
    with corpus.open() as handle:
        for _, line in zip(range(docs), handle, strict=False):
            entry = json.loads(line)
            loci.library.add_note(brain, entry["text"], title=entry.get("title") or None)
    env = {**os.environ, "LOCI_HOME": str(home), "LOCI_DATABASE_URL": url, "LOCI_BLOBS": "database"}
    started = time.perf_counter()
    procs = [
        subprocess.Popen([sys.executable, "-m", "loci", "worker"], env=env) for _ in range(workers)
    ]
    try:
        while loci.store.pending_jobs() > 0:
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
    finally:
        for p in procs:
            p.terminate()
        for p in procs:
            p.wait(30)
    chunks = loci.store.stats(brain.id).chunks
    loci.store.close()
    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE {name} WITH (FORCE)")
    return elapsed, chunks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--admin-url", required=True, help="a superuser URL (creates databases)")
    parser.add_argument("--corpus", type=Path, required=True, help="a BEIR corpus.jsonl")
    parser.add_argument("--docs", type=int, default=600)
    args = parser.parse_args()
    for workers in (1, 2):
        elapsed, chunks = run(args.admin_url, args.corpus, args.docs, workers)
        print(
            f"{workers} worker(s): {args.docs} docs, {chunks} chunks in {elapsed:.1f} s —"
            f" {args.docs / elapsed:.1f} docs/s, {chunks / elapsed:.1f} chunks/s",
            flush=True,
        )


if __name__ == "__main__":
    main()
