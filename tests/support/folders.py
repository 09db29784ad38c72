"""Folders Loci follows: syncing them and counting what a sync did, watching them (fast
settings, a watcher and the ingestion worker as fixtures), and the documents they became."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loci.embed.base import Embedder
from loci.models import Brain, Document
from loci.service import Loci
from loci.service.sources import SourceSync
from loci.service.watching import FolderWatcher, WatchSettings
from loci.store.base import Store
from tests.support.services import make_service
from tests.support.waiting import eventually

FAST = WatchSettings(
    mode="events",
    debounce_ms=400,
    step_ms=50,
    poll_ms=150,
    refresh_s=0.2,
    lease_s=3.0,
    settle_s=0.3,
)


def by_path(loci: Loci, brain: Brain) -> dict[str, Document]:
    """The brain's file documents by path; fails if a path has two."""
    documents = [d for d in loci.library.documents(brain) if d.source_path]
    paths = [str(d.source_path) for d in documents]
    assert len(paths) == len(set(paths)), f"a path with two documents: {sorted(paths)}"
    return {str(d.source_path): d for d in documents}


def documents_when(loci: Loci, brain: Brain, count: int) -> dict[str, Document] | None:
    """The documents by path once there are `count` of them."""
    documents = by_path(loci, brain)
    return documents if len(documents) == count else None


def report_of(
    loci: Loci, brain: Brain, source_id: int, **unreachable: None
) -> dict[str, Any] | None:
    """The source's last report once it says it is unreachable (or, given `unreachable=None`,
    once it says it is not)."""
    report = loci.sources.get(brain, source_id).last_report or {}
    if ("unreachable" in unreachable) == bool(report.get("unreachable")):
        return None
    return report or None


def settled(watching: FolderWatcher, after_s: float = 0.0, looks: int = 2) -> None:
    """Return once `watching` has looked at its sources `looks` more times since `after_s`
    from now (a held deletion's `settle_s`, say): whatever was due by then has been acted on,
    so a test may assert that nothing more came of it. A fixed sleep would not do: on a busy
    machine it can end before the watcher has run at all."""
    started = time.monotonic()
    counted: list[int] = []

    def looked() -> bool:
        if time.monotonic() - started < after_s:
            return False
        if not counted:
            counted.append(watching.totals["refreshes"])
        return watching.totals["refreshes"] >= counted[0] + looks

    eventually(looked, timeout=60)


@pytest.fixture
def watcher(loci: Loci) -> Iterator[Callable[..., FolderWatcher]]:
    """Start a watcher over the test's service (FAST settings, changed by keywords)."""
    started: list[FolderWatcher] = []

    def start(store: Store | None = None, **changes: object) -> FolderWatcher:
        settings = replace(FAST, **changes)  # type: ignore[arg-type]
        watching = FolderWatcher(loci.sources, store or loci.store, settings).start()
        started.append(watching)
        return watching

    yield start
    for watching in started:
        watching.stop()


@pytest.fixture
def indexing(loci: Loci) -> Iterator[None]:
    """The ingestion worker, in a thread, as `loci serve` runs it."""
    stop = threading.Event()
    thread = threading.Thread(target=loci.library.worker().run_forever, args=(stop,))
    thread.start()
    yield
    stop.set()
    thread.join(30)


RECIPE = "# Soup\n\nLentil soup needs cumin, lemon and two onions.\n"


def sync_counts(result: SourceSync) -> dict[str, int]:
    report = result.as_report()
    return {k: report[k] for k in ("added", "updated", "renamed", "removed", "gone", "unchanged")}


def sync_folders(loci: Loci, brain: Brain) -> SourceSync:
    (result,) = loci.sources.sync(brain).sources
    loci.library.wait_for(brain, result.queued)
    return result


@pytest.fixture
def capped(tmp_path: Path, embedder: Embedder, database_url: str | None) -> Iterator[Loci]:
    service = make_service(tmp_path / "capped", embedder, database_url, max_file_mb=0.01)
    yield service
    service.store.close()


FIRST = "# Piano\n\nThe piano lesson is on Tuesday at 5pm with Mrs Okafor.\n"

SECOND = "# Piano\n\nThe piano lesson is on Friday at 4pm with Mrs Okafor.\n"

THIRD = "# Piano\n\nThe piano lesson moved to Saturday at noon, same teacher.\n"
