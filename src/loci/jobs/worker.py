"""The ingestion worker: claims jobs with a lease, keeps the lease alive, retries with backoff.

A job whose worker died keeps its `running` status until its lease expires; then any worker may
claim it again. Completion is fenced by (owner, attempt), so a worker that lost its lease cannot
mark a job done behind the back of the worker that took it over.

Jobs are claimed in small batches of one stage (see `loci.store.job_order` for the queue's
order); each job still succeeds or fails on its own. A job that made progress and has more to
do (an index job whose text is written, a big file's embedding after one slice) comes back as
`Advance`: it returns to the queue at its next stage without counting as a failed attempt.
Each kind of job (`index`, `curate`) goes to its own handler (`by_kind`).

A worker that runs until stopped (`run_forever`: `loci serve`, `loci worker`) says it is alive
every few seconds (`Store.beat_worker`), so a `loci add` elsewhere can leave the embedding to it.
It works in two lanes, each a thread with its own claims and leases:

- the main lane takes jobs in queue order, text before vectors; after `vectors_wait_s` of
  reading text in a row it takes a batch of due embedding first, so a stream of new files that
  never ends cannot keep every embedding waiting;
- the quick lane takes only short index jobs (`loci.store.job_order.quick_jobs`: the text of a
  small file, the vectors of a document of few chunks), so a note added while the main lane is
  inside one long text stage (OCR of a 100-page scan, transcription of a long recording: minutes
  that cannot be cut into slices) is searchable within a second, not after it.

Given a `scheduled` runner (`loci.service.scheduled`), `run_forever` keeps a third lane that
runs the scheduled sources (feeds, web pages, ...) as they fall due, each under a lease of
its own, so a slow feed never holds up indexing and indexing never holds up a feed.
"""

from __future__ import annotations

import logging
import os
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

from loci.errors import (
    EmbedderMismatch,
    FetchError,
    InvalidInput,
    LociError,
    NotFound,
    ParseError,
    TranscriptionRefused,
)
from loci.models import Job, JobStage, Settled
from loci.store.base import Store

log = logging.getLogger(__name__)

# Errors that no retry can fix: the bytes or the configuration must change first.
PERMANENT = (
    ParseError,
    InvalidInput,
    EmbedderMismatch,
    FetchError,
    NotFound,
    TranscriptionRefused,
)

# How often a running worker says it is alive, and how long after its last word it counts so.
PRESENCE_EVERY_S = 5.0
PRESENCE_WITHIN_S = 20.0
# After a progress report, work goes on for this many times the report's own cost before the
# next: reports take at most a tenth of a drain's time.
REPORT_SPACING = 9.0


@dataclass(frozen=True)
class Advance:
    """A job's outcome when it made progress and has more to do: back to the queue at `stage`,
    due at once; `cost_s`, the estimated seconds it still needs, sets its place (`job_order`);
    None keeps the place it had."""

    stage: JobStage
    cost_s: float | None = None


Outcome = BaseException | Advance | None
# A batch handler gets the claimed jobs and returns, per job id, None (done), Advance or the error.
BatchHandler = Callable[[Sequence[Job]], Mapping[int, Outcome]]


def by_kind(handlers: Mapping[str, BatchHandler]) -> BatchHandler:
    """One handler for a mixed batch: each kind's jobs go to that kind's handler (a kind with
    none fails for good); a handler that breaks fails only its own jobs."""

    def handle(jobs: Sequence[Job]) -> dict[int, Outcome]:
        outcomes: dict[int, Outcome] = {}
        groups: dict[str, list[Job]] = {}
        for job in jobs:
            groups.setdefault(job.kind, []).append(job)
        for kind, group in groups.items():
            handler = handlers.get(kind)
            if handler is None:
                unknown = InvalidInput(f"no worker handles {kind!r} jobs")
                outcomes |= dict.fromkeys((job.id for job in group), unknown)
                continue
            try:
                outcomes |= handler(group)
            except Exception as error:
                outcomes |= dict.fromkeys((job.id for job in group), error)
        return outcomes

    return handle


@dataclass(frozen=True)
class WorkerSettings:
    lease_s: float = 60.0
    max_attempts: int = 5
    retry_base_s: float = 2.0
    idle_sleep_s: float = 0.5
    batch_size: int = 16
    quick_lane: bool = True  # `run_forever` also runs the quick lane
    # Seconds of text-stage work in a row after which the main lane serves due embedding first.
    vectors_wait_s: float = 5.0
    # How often the sources lane looks for a scheduled source that fell due.
    schedule_poll_s: float = 5.0


def worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:6]}"


class _Heartbeat:
    """Extends the jobs' leases from a side thread while the main thread works on them."""

    def __init__(self, store: Store, jobs: Sequence[Job], owner: str, lease_s: float) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(
            target=self._run, args=(store, list(jobs), owner, lease_s), daemon=True
        )

    def _run(self, store: Store, jobs: list[Job], owner: str, lease_s: float) -> None:
        while not self._stop.wait(lease_s / 3):
            for job in jobs:
                try:
                    store.heartbeat(job, owner, lease_s)
                except Exception:  # a missed beat is survivable; the next one may land
                    log.warning("heartbeat for job %s failed", job.id, exc_info=True)

    def __enter__(self) -> _Heartbeat:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


class _Presence:
    """Says the worker is alive every `PRESENCE_EVERY_S` from a side thread (a job may hold the
    main thread for minutes), and that it stopped when the block ends."""

    def __init__(self, store: Store, name: str) -> None:
        self._store = store
        self._name = name
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="loci-presence", daemon=True)

    def _beat(self, alive: bool) -> None:
        try:
            self._store.beat_worker(self._name, alive)
        except Exception:  # the queue works without it; `loci add` then embeds itself
            log.warning("could not record worker %s as alive", self._name, exc_info=True)

    def _run(self) -> None:
        while not self._stop.wait(PRESENCE_EVERY_S):
            self._beat(True)

    def __enter__(self) -> _Presence:
        self._beat(True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._beat(False)


def describe(error: BaseException) -> str:
    return error.message if isinstance(error, LociError) else f"{type(error).__name__}: {error}"


class Worker:
    def __init__(
        self,
        store: Store,
        handle: BatchHandler,
        settings: WorkerSettings,
        name: str | None = None,
        scheduled: Callable[[str], object] | None = None,
    ) -> None:
        """`scheduled(owner)` runs the scheduled source due first, if any; it returns None
        when none was due."""
        self.store = store
        self.handle = handle
        self.settings = settings
        self.name = name or worker_name()
        self.scheduled = scheduled
        self._text_s = 0.0  # seconds of text-stage batches in a row (the main lane's turns)

    def run_batch(
        self,
        only_documents: Sequence[int] | None = None,
        only_stage: JobStage | None = None,
        quick_only: bool = False,
    ) -> int:
        """Claim and process up to `batch_size` jobs; returns how many were claimed."""
        return len(self._run(only_documents, only_stage, quick_only))

    def _run(
        self,
        only_documents: Sequence[int] | None = None,
        only_stage: JobStage | None = None,
        quick_only: bool = False,
    ) -> list[Job]:
        jobs = self.store.claim_jobs(
            self.name,
            self.settings.lease_s,
            self.settings.batch_size,
            only_documents,
            only_stage,
            quick_only,
        )
        if not jobs:
            return []
        try:
            with _Heartbeat(self.store, jobs, self.name, self.settings.lease_s):
                outcomes = self.handle(jobs)
        except Exception as error:  # the handler itself broke: every job gets the error
            outcomes = dict.fromkeys((job.id for job in jobs), error)
        self._settle(jobs, outcomes)
        return jobs

    def step(self) -> int:
        """One turn of the main lane: a batch in queue order (text first), except that after
        `vectors_wait_s` of text-stage batches in a row a batch of due embedding goes first, so
        embedding gets at least a slice (`LOCI_EMBED_SLICE_S`) every few seconds however many
        new files keep coming. Returns how many jobs were claimed."""
        if self._text_s >= self.settings.vectors_wait_s:
            self._text_s = 0.0
            if embedded := self._run(only_stage="vectors"):
                return len(embedded)
        started = time.monotonic()
        jobs = self._run()
        if jobs and all(job.stage == "text" for job in jobs):
            self._text_s += time.monotonic() - started
        else:  # embedding ran, or nothing was due: no embedding is waiting on text now
            self._text_s = 0.0
        return len(jobs)

    def _settle(self, jobs: Sequence[Job], outcomes: Mapping[int, Outcome]) -> None:
        """Done and advanced jobs in one store write (on PostgreSQL a transaction per job cost
        as much as a small file's text stage); failures one by one."""
        settled: list[Settled] = []
        for job in jobs:
            outcome = outcomes.get(job.id)
            if outcome is None:
                settled.append((job, None, None))
            elif isinstance(outcome, Advance):
                settled.append((job, outcome.stage, outcome.cost_s))
            else:
                self._failed(job, outcome)
        held = self.store.settle_jobs(settled, self.name)
        for job, stage, _ in settled:
            if job.id not in held:
                moved = "finished" if stage is None else "moved on"
                log.warning("job %s %s after its lease was taken over", job.id, moved)

    def _failed(self, job: Job, error: BaseException) -> None:
        reason = describe(error)
        code = error.code if isinstance(error, LociError) else None
        if isinstance(error, PERMANENT):
            log.info("job %s failed: %s", job.id, reason)
            self.store.fail_job(job, self.name, reason, code)
        elif job.attempts >= self.settings.max_attempts:
            log.warning("job %s gave up after %d attempts: %s", job.id, job.attempts, reason)
            # Not a permanent error: whatever its code, trying again later may work.
            self.store.fail_job(job, self.name, f"{reason} (after {job.attempts} attempts)")
        else:  # anything else may be transient: retry with exponential backoff and jitter
            delay = self.settings.retry_base_s * 2 ** (job.attempts - 1) * (0.5 + random.random())
            log.warning(
                "job %s attempt %d failed, retry in %.1fs: %s", job.id, job.attempts, delay, reason
            )
            self.store.retry_job(job, self.name, reason, delay)

    def run_forever(self, stop: threading.Event | None = None) -> None:
        """The main lane in this thread and, unless turned off, the quick lane beside it, until
        `stop` is set; both finish the batch they hold first."""
        stop = stop or threading.Event()
        ended = threading.Event()  # the main lane ended (stopped, or broke): so does the other
        quick = None
        if self.settings.quick_lane:
            lane = Worker(self.store, self.handle, self.settings, f"{self.name}/quick")
            quick = threading.Thread(
                target=lane._quick_lane,
                args=(stop, ended),
                name="loci-worker-quick",
                daemon=True,
            )
        sources = None
        if self.scheduled is not None:
            sources = threading.Thread(
                target=self._sources_lane,
                args=(stop, ended),
                name="loci-worker-sources",
                daemon=True,
            )
        with _Presence(self.store, self.name):
            for thread in (quick, sources):
                if thread is not None:
                    thread.start()
            try:
                while not stop.is_set():
                    if self.step() == 0:
                        self._idle(stop)
            finally:
                ended.set()
                for thread in (quick, sources):
                    if thread is not None:
                        thread.join()

    def run_scheduled(self) -> bool:
        """Run the scheduled source due first, if any (as this worker); whether one ran."""
        if self.scheduled is None:
            return False
        return self.scheduled(f"{self.name}/sources") is not None

    def _sources_lane(self, stop: threading.Event, ended: threading.Event) -> None:
        while not (stop.is_set() or ended.is_set()):
            try:
                ran = self.run_scheduled()
            except Exception:  # the store is unwell: the main lane says so too
                log.warning("the sources lane could not run a source", exc_info=True)
                ran = False
            if not ran:
                stop.wait(self.settings.schedule_poll_s)

    def _quick_lane(self, stop: threading.Event, ended: threading.Event) -> None:
        while not (stop.is_set() or ended.is_set()):
            try:
                claimed = self.run_batch(quick_only=True)
            except Exception:  # the main lane meets the same trouble and reports it too
                log.warning("the quick lane could not claim jobs", exc_info=True)
                stop.wait(5 * self.settings.idle_sleep_s)
                continue
            if claimed == 0:
                self._idle(stop)

    def _idle(self, stop: threading.Event) -> None:
        # A store that can signal new jobs (PostgreSQL's LISTEN/NOTIFY; SQLite for the jobs
        # its own process queues) wakes an idle lane at once; the wait stays short so a stop
        # request, a retry falling due or another process's job is seen soon.
        wait_for_jobs = getattr(self.store, "wait_for_jobs", None)
        if wait_for_jobs is not None:
            wait_for_jobs(self.settings.idle_sleep_s, stop)
        else:
            stop.wait(self.settings.idle_sleep_s)

    def drain(
        self,
        only_documents: Sequence[int],
        is_settled: Callable[[], bool],
        on_progress: Callable[[], None] | None = None,
        poll_s: float = 0.2,
        progress_every_s: float = 0.25,
        only_stage: JobStage | None = None,
    ) -> None:
        """Work on the given documents' jobs (of `only_stage`, if given) until `is_settled`.

        Settlement is checked only when no job is claimable (it reads every document), and
        progress is reported at most every `progress_every_s` and in at most a tenth of the time
        (a report reads every document too), so large batches stay linear and the reports do
        not crowd out the work.
        """
        last_report, report_cost = 0.0, 0.0
        while True:
            claimed = self.run_batch(only_documents, only_stage)
            now = time.monotonic()
            if on_progress is not None and now - last_report >= max(
                progress_every_s, REPORT_SPACING * report_cost
            ):
                on_progress()
                last_report = time.monotonic()
                report_cost = last_report - now
            if claimed == 0:
                if is_settled():
                    break
                time.sleep(poll_s)  # another worker holds the lease, or a retry is waiting
        if on_progress is not None:
            on_progress()
