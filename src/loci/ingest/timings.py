"""Where indexing time goes: seconds spent parsing, chunking, embedding and writing.

The indexer adds to one `IndexTimings` (a clock read before and after each step, nothing more)
per batch of jobs; the handler adds each batch's to the one it keeps for its life (`add`, under
its lock: a worker's two lanes and an MCP request may index at once), which the ingest bench
reads to break an import's time down.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Literal

Step = Literal["parse", "chunk", "embed", "write"]
STEPS: tuple[Step, ...] = ("parse", "chunk", "embed", "write")


@dataclass
class IndexTimings:
    seconds: dict[Step, float] = field(default_factory=lambda: dict.fromkeys(STEPS, 0.0))
    embedded: int = 0  # chunks the embedder was given

    @contextmanager
    def timed(self, step: Step) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            self.seconds[step] += time.perf_counter() - started

    def add(self, other: IndexTimings) -> None:
        for step, seconds in other.seconds.items():
            self.seconds[step] += seconds
        self.embedded += other.embedded

    def reset(self) -> None:
        self.seconds = dict.fromkeys(STEPS, 0.0)
        self.embedded = 0
