"""The durable job queue on PostgreSQL: many workers on many machines share it.

Claims take due jobs with `FOR UPDATE SKIP LOCKED`, so two workers never wait on or take the same
row; a `running` job whose lease expired is due again (its worker died), which is the reaper.
Times come from the database's clock, not the workers', so machines with skewed clocks agree on
when a lease ends. Every later write is fenced by (owner, attempt): a worker whose lease was taken
over can neither extend it nor settle the job. Enqueueing notifies `loci_jobs` on commit, which
wakes idle workers that listen (see `wait_for_jobs`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from typing import Any

import psycopg

from loci.models import Job, JobStage, Settled
from loci.store.job_order import TEXT_BYTES_PER_S, claim_order, queue_order, quick_jobs
from loci.store.postgres.connection import ALL_BRAINS, Cursor, Database, Row, connect

log = logging.getLogger(__name__)
STOP_CHECK_S = 0.25  # how soon an idle worker listening for jobs sees that it is to stop

CHANNEL = "loci_jobs"
_JOB_FIELDS = (
    "id, brain_id, document_id, kind, status, attempts, last_error, run_after,"
    " lease_owner, lease_expires, stage"
)

_RETURNING = ", ".join(f"jobs.{c.strip()}" for c in _JOB_FIELDS.split(","))


def job_from_row(row: Row) -> Job:
    return Job(**{k: row[k] for k in _JOB_FIELDS.replace(" ", "").split(",")})


def queue_jobs(cur: Cursor, brain_id: int, document_ids: Sequence[int], kind: str) -> None:
    """A fresh job for each document; finished or idle ones go (a running one finishes)."""
    ids = sorted(document_ids)  # jobs are locked by id, as every writer locks them
    cur.execute(
        "DELETE FROM jobs WHERE document_id = ANY(%s) AND status IN ('queued','failed','done')",
        (ids,),
    )
    # Its place in the queue: now plus the text stage's cost, by the file's size (job_order).
    cur.execute(
        "INSERT INTO jobs(brain_id, document_id, kind, priority)"
        " SELECT %s, id, %s, loci_epoch() + size_bytes / %s::float8 FROM documents"
        " WHERE id = ANY(%s) ORDER BY id",
        (brain_id, kind, TEXT_BYTES_PER_S, ids),
    )
    cur.execute("SELECT pg_notify(%s, '')", (CHANNEL,))


def _hold(cur: Cursor, jobs: Sequence[Job], owner: str) -> set[int]:
    """The fence: lock the jobs' documents, then those of the jobs `owner` still holds at this
    attempt, and return their ids. Locks are taken in the order every writer takes them —
    documents, then jobs, each by id — so a settle racing a delete of the document waits
    instead of deadlocking."""
    cur.execute(
        "SELECT 1 FROM documents WHERE id = ANY(%s) ORDER BY id FOR UPDATE",
        (sorted({job.document_id for job in jobs}),),
    )
    cur.execute(
        "SELECT j.id FROM jobs j JOIN unnest(%s::bigint[], %s::int[]) AS x(id, attempts)"
        " ON j.id = x.id AND j.attempts = x.attempts"
        " WHERE j.status = 'running' AND j.lease_owner = %s ORDER BY j.id FOR UPDATE OF j",
        ([job.id for job in jobs], [job.attempts for job in jobs], owner),
    )
    return {int(r["id"]) for r in cur.fetchall()}


class PostgresJobs:
    def __init__(self, db: Database) -> None:
        self.db = db
        self._listener: psycopg.Connection[Row] | None = None
        self._listen_lock = threading.Lock()

    def claim(
        self,
        owner: str,
        lease_s: float,
        limit: int,
        only_documents: Sequence[int] | None,
        only_stage: str | None,
        quick_only: bool,
    ) -> list[Job]:
        scope = "" if only_documents is None else " AND j.document_id = ANY(%(docs)s)"
        if quick_only:
            scope += f" AND {quick_jobs('j.')}"
        order = queue_order("j.")
        # A stage's due jobs: queued ones (read in order from `jobs_queued`, up to the batch),
        # and running ones whose lease ran out (a worker that died; few). Rows another worker
        # holds are skipped.
        due = (
            f"queued AS (SELECT j.id, j.priority FROM jobs j, now WHERE j.status = 'queued'"
            f" AND j.stage = %(stage)s AND j.run_after <= now.t{scope} ORDER BY {order}"
            " LIMIT %(limit)s FOR UPDATE OF j SKIP LOCKED),"
            f" expired AS (SELECT j.id, j.priority FROM jobs j, now WHERE j.status = 'running'"
            f" AND j.stage = %(stage)s AND j.lease_expires < now.t{scope} ORDER BY {order}"
            " LIMIT %(limit)s FOR UPDATE OF j SKIP LOCKED)"
        )
        for stage in claim_order(only_stage):  # the first stage with a due job (job_order)
            with self.db.tx(ALL_BRAINS) as cur:
                cur.execute(
                    f"WITH now AS (SELECT loci_epoch() AS t), {due}, chosen AS (SELECT id FROM"
                    " (SELECT * FROM queued UNION ALL SELECT * FROM expired) AS due"
                    " ORDER BY priority, id LIMIT %(limit)s)"
                    " UPDATE jobs SET status = 'running', attempts = attempts + 1,"
                    " lease_owner = %(owner)s, lease_expires = (SELECT t FROM now) + %(lease)s,"
                    " updated_at = loci_now() FROM chosen WHERE jobs.id = chosen.id"
                    f" RETURNING {_RETURNING}, jobs.priority",
                    {
                        "limit": limit,
                        "owner": owner,
                        "lease": lease_s,
                        "docs": list(only_documents or []),
                        "stage": stage,
                    },
                )
                rows = cur.fetchall()
            if rows:
                rows.sort(key=lambda r: (r["priority"], r["id"]))
                return [job_from_row(r) for r in rows]
        return []

    def _fenced(self, job: Job, owner: str, *statements: tuple[str, tuple[Any, ...]]) -> bool:
        """Run `statements` only if `owner` still holds this attempt's lease (the fence)."""
        with self.db.tx(job.brain_id) as cur:
            if not _hold(cur, [job], owner):
                return False
            for sql, params in statements:
                cur.execute(sql, params)
            return True

    def heartbeat(self, job: Job, owner: str, lease_s: float) -> bool:
        return self._fenced(
            job,
            owner,
            ("UPDATE jobs SET lease_expires = loci_epoch() + %s WHERE id = %s", (lease_s, job.id)),
        )

    def settle(self, settled: Sequence[Settled], owner: str) -> set[int]:
        """Finish or advance the jobs `owner` still holds, in one transaction: the fence
        (`_hold`) and each update once for the whole batch. Returns the ids settled."""
        if not settled:
            return set()
        with self.db.tx(ALL_BRAINS) as cur:
            held = _hold(cur, [job for job, _, _ in settled], owner)
            done = [job.id for job, stage, _ in settled if stage is None and job.id in held]
            moved = [
                (job.id, stage, cost) for job, stage, cost in settled if stage and job.id in held
            ]
            if done:
                cur.execute(
                    "UPDATE jobs SET status = 'done', lease_owner = NULL, lease_expires = NULL,"
                    " updated_at = loci_now() WHERE id = ANY(%s)",
                    (done,),
                )
            if moved:
                cur.execute(
                    "UPDATE jobs SET status = 'queued', stage = x.stage, priority ="
                    " coalesce(loci_epoch() + x.cost, jobs.priority),"
                    " attempts = greatest(attempts - 1, 0), run_after = 0, lease_owner = NULL,"
                    " lease_expires = NULL, updated_at = loci_now()"
                    " FROM unnest(%s::bigint[], %s::text[], %s::float8[]) AS x(id, stage, cost)"
                    " WHERE jobs.id = x.id",
                    tuple(map(list, zip(*moved, strict=True))),
                )
                cur.execute("SELECT pg_notify(%s, '')", (CHANNEL,))
        return held

    def retry(self, job: Job, owner: str, error: str, delay_s: float) -> bool:
        return self._fenced(
            job,
            owner,
            (
                "UPDATE jobs SET status = 'queued', last_error = %s, run_after = loci_epoch() + %s,"
                " lease_owner = NULL, lease_expires = NULL, updated_at = loci_now() WHERE id = %s",
                (error, delay_s, job.id),
            ),
            ("SELECT pg_notify(%s, '')", (CHANNEL,)),
        )

    def fail(self, job: Job, owner: str, error: str, code: str | None) -> bool:
        return self._fenced(
            job,
            owner,
            (
                "UPDATE jobs SET status = 'failed', last_error = %s, lease_owner = NULL,"
                " lease_expires = NULL, updated_at = loci_now() WHERE id = %s",
                (error, job.id),
            ),
            (
                "UPDATE documents SET status = 'failed', status_reason = %s, failure_code = %s,"
                " progress = NULL,"
                " updated_at = loci_now() WHERE id = %s",
                (error, code, job.document_id),
            ),
        )

    def reap(self) -> int:
        """Put jobs whose lease expired back in the queue (claims also take them directly);
        returns how many. Their attempt count stays: the next claim adds one."""
        with self.db.tx(ALL_BRAINS) as cur:
            cur.execute(
                "UPDATE jobs SET status = 'queued', lease_owner = NULL, lease_expires = NULL,"
                " updated_at = loci_now() WHERE status = 'running' AND lease_expires < loci_epoch()"
            )
            return cur.rowcount

    def beat_worker(self, name: str, alive: bool) -> None:
        with self.db.tx(ALL_BRAINS) as cur:
            if alive:
                cur.execute(
                    "INSERT INTO workers(name, seen_at) VALUES (%s, loci_epoch())"
                    " ON CONFLICT (name) DO UPDATE SET seen_at = excluded.seen_at",
                    (name,),
                )
            else:
                cur.execute("DELETE FROM workers WHERE name = %s", (name,))

    def live_workers(self, within_s: float) -> int:
        return int(
            self.db.scalar(
                "SELECT count(*) FROM workers WHERE seen_at >= loci_epoch() - %s",
                (within_s,),
                ALL_BRAINS,
            )
        )

    def pending(self, brain_id: int | None) -> int:
        sql = "SELECT count(*) AS n FROM jobs WHERE status IN ('queued', 'running')"
        if brain_id is None:
            return int(self.db.scalar(sql))
        return int(self.db.scalar(sql + " AND brain_id = %s", (brain_id,), brain_id))

    def list(self, brain_id: int, limit: int) -> list[Job]:
        rows = self.db.rows(
            f"SELECT {_JOB_FIELDS} FROM jobs WHERE brain_id = %s ORDER BY id DESC LIMIT %s",
            (brain_id, limit),
            brain_id,
        )
        return [job_from_row(r) for r in rows]

    def wait(self, timeout_s: float, stop: threading.Event | None = None) -> bool:
        """Block until a job is enqueued (a notification), `stop` is set or `timeout_s`
        passes; True if woken by a job.

        Uses its own direct connection: LISTEN does not survive a transaction-mode pooler, so
        behind one this simply times out and the worker polls as it would anyway. One thread
        listens at a time; others sleep out their wait."""
        stop = stop or threading.Event()
        if not self._listen_lock.acquire(blocking=False):
            stop.wait(timeout_s)
            return False
        deadline = time.monotonic() + timeout_s
        try:
            if self._listener is None or self._listener.closed:
                self._listener = connect(self.db.url)
                self._listener.execute(f"LISTEN {CHANNEL}")
            while not stop.is_set() and (remaining := deadline - time.monotonic()) > 0:
                # In short slices, so a stop request is seen while nothing is queued.
                slice_s = min(remaining, STOP_CHECK_S)
                for _ in self._listener.notifies(timeout=slice_s, stop_after=1):
                    return True
        except psycopg.Error:
            log.warning("listening for new jobs failed; polling instead", exc_info=True)
            self._close_listener()
            stop.wait(max(deadline - time.monotonic(), 0))
        finally:
            self._listen_lock.release()
        return False

    def _close_listener(self) -> None:
        if self._listener is not None:
            self._listener.close()
            self._listener = None

    def close(self) -> None:
        with self._listen_lock:
            self._close_listener()


class JobQueue:
    """The store's job calls, answered by its `PostgresJobs`. A mixin of `PostgresStore`."""

    jobs: PostgresJobs

    def claim_jobs(
        self,
        owner: str,
        lease_s: float,
        limit: int = 1,
        only_documents: Sequence[int] | None = None,
        only_stage: str | None = None,
        quick_only: bool = False,
    ) -> list[Job]:
        return self.jobs.claim(owner, lease_s, limit, only_documents, only_stage, quick_only)

    def heartbeat(self, job: Job, owner: str, lease_s: float) -> bool:
        return self.jobs.heartbeat(job, owner, lease_s)

    def finish_job(self, job: Job, owner: str) -> bool:
        return job.id in self.jobs.settle([(job, None, None)], owner)

    def advance_job(self, job: Job, owner: str, stage: JobStage, cost_s: float | None) -> bool:
        return job.id in self.jobs.settle([(job, stage, cost_s)], owner)

    def settle_jobs(self, settled: Sequence[Settled], owner: str) -> set[int]:
        return self.jobs.settle(settled, owner)

    def retry_job(self, job: Job, owner: str, error: str, delay_s: float) -> bool:
        return self.jobs.retry(job, owner, error, delay_s)

    def fail_job(self, job: Job, owner: str, error: str, code: str | None = None) -> bool:
        return self.jobs.fail(job, owner, error, code)

    def beat_worker(self, name: str, alive: bool) -> None:
        self.jobs.beat_worker(name, alive)

    def live_workers(self, within_s: float) -> int:
        return self.jobs.live_workers(within_s)

    def pending_jobs(self, brain_id: int | None = None) -> int:
        return self.jobs.pending(brain_id)

    def list_jobs(self, brain_id: int, limit: int = 100) -> list[Job]:
        return self.jobs.list(brain_id, limit)

    def wait_for_jobs(self, timeout_s: float, stop: threading.Event | None = None) -> bool:
        """Sleep until a job is enqueued anywhere, `stop` is set or `timeout_s` passes
        (LISTEN/NOTIFY)."""
        return self.jobs.wait(timeout_s, stop)
