"""The SQLite store's job queue: leases claimed in one transaction, heartbeats, and completion
fenced by owner and attempt, so a worker that lost its lease cannot finish the job.

A mixin of `SqliteStore`.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import Any

from loci.models import Job, JobStage, Settled
from loci.store.job_order import claim_order, queue_order, quick_jobs
from loci.store.sqlite.connection import Database
from loci.store.sqlite.rows import NOW, job_of


class JobQueue:
    db: Database

    def claim_jobs(
        self,
        owner: str,
        lease_s: float,
        limit: int = 1,
        only_documents: Sequence[int] | None = None,
        only_stage: str | None = None,
        quick_only: bool = False,
    ) -> list[Job]:
        now = time.time()
        scope, params = "", []
        if only_documents is not None:
            # One JSON parameter instead of one per id: batches can exceed SQLite's limit.
            scope = " AND document_id IN (SELECT value FROM json_each(?))"
            params = [json.dumps(list(only_documents))]
        if quick_only:
            scope += f" AND {quick_jobs('jobs.')}"
        order = queue_order()
        # A stage's due jobs: queued ones (read in order from `jobs_queued`, up to the batch),
        # and running ones whose lease ran out (a worker that died; few).
        due = (
            # Named: without statistics (no ANALYZE is run) SQLite would range over
            # `jobs_claim` by run_after and sort every due job.
            f"SELECT * FROM (SELECT id, priority FROM jobs INDEXED BY jobs_queued"
            f" WHERE status = 'queued' AND stage = ?"
            f" AND run_after <= ?{scope} ORDER BY {order} LIMIT ?) UNION ALL"
            f" SELECT * FROM (SELECT id, priority FROM jobs WHERE status = 'running'"
            f" AND stage = ? AND lease_expires < ?{scope} ORDER BY {order} LIMIT ?)"
        )
        ids: list[int] = []
        with self.db.write() as conn:
            for stage in claim_order(only_stage):  # the first stage with a due job (job_order)
                ids = [
                    row[0]
                    for row in conn.execute(
                        f"SELECT id FROM ({due}) ORDER BY {order} LIMIT ?",
                        (stage, now, *params, limit, stage, now, *params, limit, limit),
                    )
                ]
                if ids:
                    break
            if not ids:
                return []
            conn.executemany(
                f"UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?,"
                f" lease_expires = ?, updated_at = {NOW} WHERE id = ?",
                [(owner, now + lease_s, job_id) for job_id in ids],
            )
        marks = ",".join("?" * len(ids))
        rows = self.db.rows(f"SELECT * FROM jobs WHERE id IN ({marks})", tuple(ids))
        place = {job_id: n for n, job_id in enumerate(ids)}
        return sorted((job_of(r) for r in rows), key=lambda job: place[job.id])

    def _fenced_update(
        self, job: Job, owner: str, *statements: tuple[str, tuple[Any, ...]]
    ) -> bool:
        """Run `statements` only if `owner` still holds this attempt's lease (the fence)."""
        with self.db.write() as conn:
            held = conn.execute(
                "SELECT 1 FROM jobs WHERE id = ? AND status = 'running' AND lease_owner = ?"
                " AND attempts = ?",
                (job.id, owner, job.attempts),
            ).fetchall()
            if not held:
                return False
            for sql, params in statements:
                conn.execute(sql, params)
            return True

    def heartbeat(self, job: Job, owner: str, lease_s: float) -> bool:
        return self._fenced_update(
            job,
            owner,
            ("UPDATE jobs SET lease_expires = ? WHERE id = ?", (time.time() + lease_s, job.id)),
        )

    def finish_job(self, job: Job, owner: str) -> bool:
        return job.id in self.settle_jobs([(job, None, None)], owner)

    def advance_job(self, job: Job, owner: str, stage: JobStage, cost_s: float | None) -> bool:
        return job.id in self.settle_jobs([(job, stage, cost_s)], owner)

    def settle_jobs(self, settled: Sequence[Settled], owner: str) -> set[int]:
        """Finish or advance the jobs `owner` still holds (the fence of `_fenced_update`), in
        one write transaction for the batch."""
        held: set[int] = set()
        now = time.time()
        with self.db.write() as conn:
            for job, stage, cost_s in settled:
                if not conn.execute(
                    "SELECT 1 FROM jobs WHERE id = ? AND status = 'running' AND lease_owner = ?"
                    " AND attempts = ?",
                    (job.id, owner, job.attempts),
                ).fetchall():
                    continue
                held.add(job.id)
                if stage is None:
                    conn.execute(
                        "UPDATE jobs SET status = 'done', lease_owner = NULL,"
                        f" lease_expires = NULL, updated_at = {NOW} WHERE id = ?",
                        (job.id,),
                    )
                    continue
                conn.execute(
                    "UPDATE jobs SET status = 'queued', stage = ?,"
                    " priority = coalesce(?, priority), attempts = max(attempts - 1, 0),"
                    " run_after = 0, lease_owner = NULL,"
                    f" lease_expires = NULL, updated_at = {NOW} WHERE id = ?",
                    (stage, None if cost_s is None else now + cost_s, job.id),
                )
        return held

    def retry_job(self, job: Job, owner: str, error: str, delay_s: float) -> bool:
        return self._fenced_update(
            job,
            owner,
            (
                f"UPDATE jobs SET status = 'queued', last_error = ?, run_after = ?,"
                f" lease_owner = NULL, lease_expires = NULL, updated_at = {NOW} WHERE id = ?",
                (error, time.time() + delay_s, job.id),
            ),
        )

    def fail_job(self, job: Job, owner: str, error: str, code: str | None = None) -> bool:
        return self._fenced_update(
            job,
            owner,
            (
                f"UPDATE jobs SET status = 'failed', last_error = ?, lease_owner = NULL,"
                f" lease_expires = NULL, updated_at = {NOW} WHERE id = ?",
                (error, job.id),
            ),
            (
                "UPDATE documents SET status = 'failed', status_reason = ?, failure_code = ?,"
                f" progress = NULL, updated_at = {NOW} WHERE id = ?",
                (error, code, job.document_id),
            ),
        )

    def beat_worker(self, name: str, alive: bool) -> None:
        with self.db.write() as conn:
            if alive:
                conn.execute(
                    "INSERT INTO workers(name, seen_at) VALUES (?, ?)"
                    " ON CONFLICT(name) DO UPDATE SET seen_at = excluded.seen_at",
                    (name, time.time()),
                )
            else:
                conn.execute("DELETE FROM workers WHERE name = ?", (name,))

    def live_workers(self, within_s: float) -> int:
        return int(
            self.db.scalar(
                "SELECT count(*) FROM workers WHERE seen_at >= ?", (time.time() - within_s,)
            )
        )

    def pending_jobs(self, brain_id: int | None = None) -> int:
        sql = "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
        if brain_id is None:
            return int(self.db.scalar(sql))
        return int(self.db.scalar(sql + " AND brain_id = ?", (brain_id,)))
