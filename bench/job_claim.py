"""What a worker pays to claim its next batch while a large folder's first sync has queued
every file (docs/benchmarks-journal.md, "Claiming a batch from a long queue").

    python bench/job_claim.py [--queued 2000,100000] [--rounds 30] [--database-url URL]

For each queue length: a fresh brain of that many documents, each with its queued index job
(written in one statement, no files), then `--rounds` claims of a batch of 16 by the main lane
and by the quick lane (`Store.claim_jobs`, `quick_only`), each claim left running so the next
one takes the following jobs. Prints the median milliseconds of a claim.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from loci.store.portable import PortableDatabase
from loci.store.postgres.store import PostgresStore
from loci.store.sqlite.store import SqliteStore

BATCH = 16


def open_store(home: Path, database_url: str | None) -> SqliteStore | PostgresStore:
    if database_url:
        return PostgresStore(database_url, pool_size=2)
    return SqliteStore(home / "loci.db")


def fill(store: SqliteStore | PostgresStore, brain: str, queued: int) -> None:
    """`queued` documents of the brain, each with an index job queued now, in id order; the
    jobs of the queue lengths measured before are gone."""
    brain_id = store.ensure_brain(brain).id
    db: PortableDatabase = store.portable
    with db.transaction(brain_id) as conn:
        db.run(conn, "DELETE FROM jobs")
        db.run(
            conn,
            "WITH RECURSIVE g(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM g"
            " WHERE x < CAST(? AS INTEGER)) INSERT INTO documents(brain_id, kind, name,"
            " content_hash, size_bytes, status)"
            " SELECT ?, 'file', 'note-' || x || '.md', ? || x, 1000, 'processing' FROM g",
            (queued, brain_id, f"{brain}-"),
        )
        db.run(
            conn,
            "INSERT INTO jobs(brain_id, document_id, kind, priority)"
            " SELECT brain_id, id, 'index', ? + id * 0.001 FROM documents WHERE brain_id = ?",
            (time.time(), brain_id),
        )


def claim_ms(store: SqliteStore | PostgresStore, rounds: int, quick_only: bool) -> float:
    times = []
    for _ in range(rounds):
        started = time.perf_counter()
        claimed = store.claim_jobs("bench", 600, BATCH, quick_only=quick_only)
        times.append(time.perf_counter() - started)
        assert len(claimed) == BATCH, "the queue ran dry: fewer queued jobs than rounds"
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--queued", default="2000,100000", help="queue lengths, comma-separated")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--database-url", default=None, help="PostgreSQL (default: SQLite)")
    args = parser.parse_args()
    store = open_store(Path(tempfile.mkdtemp(prefix="loci-claim-bench-")), args.database_url)
    backend = "PostgreSQL" if args.database_url else "SQLite"
    try:
        for queued in (int(n) for n in args.queued.split(",")):
            fill(store, f"queue-{queued}", queued)
            main_lane = claim_ms(store, args.rounds, quick_only=False)
            quick_lane = claim_ms(store, args.rounds, quick_only=True)
            print(
                f"{backend}, {queued} jobs queued: a claim of {BATCH} takes"
                f" {main_lane:.2f} ms (main lane), {quick_lane:.2f} ms (quick lane), median"
                f" of {args.rounds}"
            )
    finally:
        store.close()


if __name__ == "__main__":
    main()
