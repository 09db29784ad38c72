"""The ingestion worker: claims jobs with a lease, keeps the lease alive, retries with backoff.

A job whose worker died keeps its `running` status until its lease expires; then any worker may
claim it again. Completion is fenced by (owner, attempt), so a worker that lost its lease cannot
mark a job done behind the back of the worker that took it over.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from loci.errors import EmbedderMismatch, FetchError, InvalidInput, LociError, NotFound, ParseError
from loci.models import Job
from loci.store.base import Store

log = logging.getLogger(__name__)

# Errors that no retry can fix: the bytes or the configuration must change first.
PERMANENT = (ParseError, InvalidInput, EmbedderMismatch, FetchError, NotFound)


@dataclass(frozen=True)
class WorkerSettings:
    lease_s: float = 60.0
    max_attempts: int = 5
    retry_base_s: float = 2.0
    idle_sleep_s: float = 0.5


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class _Heartbeat:
    """Extends a job's lease from a side thread while the main thread works on it."""

    def __init__(self, store: Store, job: Job, owner: str, lease_s: float) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(store, job, owner, lease_s), daemon=True
        )

    def _run(self, store: Store, job: Job, owner: str, lease_s: float) -> None:
        while not self._stop.wait(lease_s / 3):
            try:
                if not store.heartbeat(job, owner, lease_s):
                    return
            except Exception:  # a missed beat is survivable; the next one may land
                log.warning("heartbeat for job %s failed", job.id, exc_info=True)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class Worker:
    def __init__(
        self,
        store: Store,
        handle: Callable[[Job], None],
        settings: WorkerSettings,
        name: str | None = None,
    ) -> None:
        self.store = store
        self.handle = handle
        self.settings = settings
        self.name = name or worker_name()

    def run_one(self, only_documents: Sequence[int] | None = None) -> Job | None:
        """Claim and process one job; returns it, or None when nothing was claimable."""
        job = self.store.claim_job(self.name, self.settings.lease_s, only_documents)
        if job is None:
            return None
        try:
            with _Heartbeat(self.store, job, self.name, self.settings.lease_s):
                self.handle(job)
        except PERMANENT as error:
            log.info("job %s failed: %s", job.id, error)
            self.store.fail_job(job, self.name, error.message)
        except Exception as error:  # anything else may be transient: retry with backoff
            reason = (
                error.message
                if isinstance(error, LociError)
                else f"{type(error).__name__}: {error}"
            )
            if job.attempts >= self.settings.max_attempts:
                log.warning("job %s gave up after %d attempts: %s", job.id, job.attempts, reason)
                self.store.fail_job(job, self.name, f"{reason} (after {job.attempts} attempts)")
            else:
                delay = self.settings.retry_base_s * 2 ** (job.attempts - 1)
                delay *= 0.5 + random.random()
                log.warning(
                    "job %s attempt %d failed, retry in %.1fs: %s",
                    job.id,
                    job.attempts,
                    delay,
                    reason,
                )
                self.store.retry_job(job, self.name, reason, delay)
        else:
            if not self.store.finish_job(job, self.name):
                log.warning("job %s finished after its lease was taken over", job.id)
        return job

    def run_forever(self, stop: threading.Event | None = None) -> None:
        stop = stop or threading.Event()
        while not stop.is_set():
            if self.run_one() is None:
                stop.wait(self.settings.idle_sleep_s)

    def drain(
        self,
        only_documents: Sequence[int],
        is_settled: Callable[[], bool],
        on_progress: Callable[[], None] | None = None,
        poll_s: float = 0.2,
    ) -> None:
        """Work on the given documents' jobs until all of them are ready or failed."""
        while not is_settled():
            job = self.run_one(only_documents)
            if on_progress is not None:
                on_progress()
            if job is None:
                time.sleep(poll_s)  # another worker holds the lease, or a retry is waiting
