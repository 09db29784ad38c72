"""How far the parsing of one file has come, told by code deep inside the parsers.

A parser that works page by page (PDF text, OCR of scanned pages) calls `report("ocr", n, m)`;
whoever runs the parse decides where that goes with `reporting(...)`, for the current thread (a
context variable), so the parsers take no extra argument and a parse nobody watches costs one
lookup per page. `Throttled` keeps what it passes on to a few a second: the worker writes it
to the document's row (`Document.progress`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from loci.models import Progress, ProgressStage

log = logging.getLogger(__name__)

Report = Callable[[ProgressStage, int, int], None]

_current: ContextVar[Report | None] = ContextVar("loci_progress", default=None)


def report(stage: ProgressStage, done: int, total: int) -> None:
    """Tell whoever watches this parse that `done` of `total` units of `stage` are done."""
    watcher = _current.get()
    if watcher is not None:
        watcher(stage, done, total)


@contextmanager
def reporting(watcher: Report | None) -> Iterator[None]:
    """Send this thread's `report` calls to `watcher` inside the block."""
    token = _current.set(watcher)
    try:
        yield
    finally:
        _current.reset(token)


class Throttled:
    """Passes a report on at most once every `every_s` seconds, the first one `every_s` after
    it was made: a file read in less than that writes nothing, a long one a few times a second.
    The start of OCR is passed on at once (a page takes seconds). A failure to pass it on is
    logged and never stops the parse."""

    def __init__(
        self,
        write: Callable[[Progress], None],
        every_s: float = 0.3,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._write = write
        self._every_s = every_s
        self._clock = clock
        self._last = clock()
        self._stage: ProgressStage | None = None

    def __call__(self, stage: ProgressStage, done: int, total: int) -> None:
        now = self._clock()
        starts_slow_work = stage == "ocr" and self._stage != "ocr"
        if now - self._last < self._every_s and not starts_slow_work:
            return
        self._last, self._stage = now, stage
        try:
            self._write(Progress(stage, done, total))
        except Exception:  # progress is a courtesy: the indexing goes on without it
            log.warning("could not record progress", exc_info=True)
