"""Who runs a scheduled source: the worker that holds its lease. Two workers (two processes'
stores on one database) asking at once never both get it, a run caught in the middle keeps
the others out, a lease whose worker died runs out and another worker takes the source, a
worker that lost its lease records nothing, and a running worker (`Worker.run_forever`, as in
`loci serve` and `loci worker`) runs a source that falls due. On both backends."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import pytest

from loci.errors import Conflict
from loci.models import Brain
from loci.service import Loci
from loci.store.base import Store
from tests.support.feeds import FeedSite, rss
from tests.support.services import reopen
from tests.support.waiting import eventually

pytestmark = [pytest.mark.both_backends, pytest.mark.fetches_loopback]

HOUR = 3600.0
ENTRY = ("bees", "Bees", "<p>" + "Bees need water near the hive in summer. " * 40 + "</p>")


@pytest.fixture
def site() -> Iterator[FeedSite]:
    with FeedSite() as served:
        served.put("/feed.xml", rss([ENTRY]))
        yield served


def test_of_workers_asking_at_once_one_gets_a_due_source(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR)
    stores: list[Store] = [reopen(loci.store) for _ in range(4)]
    try:
        start = threading.Barrier(len(stores))

        def claim(i: int) -> int | None:
            start.wait()
            claimed = stores[i].claim_source_run(f"worker-{i}", 60.0)
            return None if claimed is None else claimed.id

        with ThreadPoolExecutor(len(stores)) as pool:
            got = list(pool.map(claim, range(len(stores))))
        assert sorted(got, key=str) == [source.id, None, None, None]
    finally:
        for store in stores:
            store.close()


def test_a_source_being_run_is_run_by_no_other_worker(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR, kind="feed")
    release = site.hold("/feed.xml")
    other = reopen(loci.store)
    try:
        with ThreadPoolExecutor(1) as pool:
            first = pool.submit(loci.scheduled.run_due, "worker-a")
            assert site.arrived["/feed.xml"].wait(20)  # worker a is inside its run
            assert other.claim_source_run("worker-b", 60.0) is None
            with pytest.raises(Conflict, match="being run by worker-a"):
                loci.scheduled.run_now(brain, source.id, "worker-b")
            release.set()
            result = first.result(timeout=30)
        assert result is not None and result.added == 1
        assert site.count("/feed.xml") == 1  # one run, one request
        shown = loci.sources.get(brain, source.id)
        assert shown.lease_owner is None and shown.last_sync_at is not None
    finally:
        other.close()


def test_a_lease_that_ran_out_is_taken_over_and_its_holder_records_nothing(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR)
    dead = loci.store.claim_source_run("died-mid-run", 0.2)  # then killed: never finishes
    assert dead is not None and loci.scheduled.run_due("worker-b") is None  # held

    result = eventually(lambda: loci.scheduled.run_due("worker-b"))  # once it ran out
    assert result.added == 1
    report = {"files": 0}
    late = loci.store.finish_source_run(dead, "died-mid-run", report, error="x", retry_in_s=1)
    assert late is False  # the worker that lost its lease records nothing
    shown = loci.sources.get(brain, source.id)
    assert shown.last_error is None and shown.failures == 0
    assert shown.last_report is not None and shown.last_report["added"] == 1


def test_a_running_worker_runs_a_source_as_it_falls_due(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR, kind="feed")
    worker = loci.worker("test-worker")
    stop = threading.Event()
    thread = threading.Thread(target=worker.run_forever, args=(stop,), daemon=True)
    thread.start()
    try:
        ran = eventually(lambda: loci.sources.get(brain, source.id).last_sync_at)
        assert ran
        (document,) = eventually(lambda: loci.library.documents(brain))
        ready = eventually(lambda: loci.library.document(brain, document.id).status == "ready")
        assert ready
        shown = loci.sources.get(brain, source.id)
        assert shown.last_report is not None and shown.last_report["added"] == 1
        assert shown.next_run_at is not None
        assert shown.next_run_at > loci.store.source_clock() + HOUR - 60
    finally:
        stop.set()
        thread.join(30)
    assert site.count("/feed.xml") == 1  # not due again: run once
