"""The core is composed, not inherited: `Loci` holds services that were given what they use.

What a person (or a surface) relies on: one `Loci` whose services do the work, none of which
calls back up into the object that holds it; and a start that builds nothing it does not need
(the embedding model, a chat client, speech to text are built on first use, once, and shared).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loci.app import service_settings
from loci.config import Settings
from loci.embed.base import Embedder
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.blobs import BlobStore
from tests.support.services import open_store

pytestmark = pytest.mark.both_backends

SERVICES = ("library", "searching", "answers", "reviews", "graph", "curation")


class Built:
    """How often each factory handed to `Loci` was called."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder
        self.calls = {"embedder": 0, "chat": 0, "transcriber": 0}

    def make_embedder(self) -> Embedder:
        self.calls["embedder"] += 1
        return self.embedder

    def make_chat(self) -> Chat | None:
        self.calls["chat"] += 1
        return None

    def make_transcriber(self) -> Transcriber | None:
        self.calls["transcriber"] += 1
        return None


@pytest.fixture
def built(embedder: Embedder) -> Built:
    return Built(embedder)


@pytest.fixture
def core(tmp_path: Path, built: Built, database_url: str | None) -> Iterator[Loci]:
    settings = Settings(home=tmp_path / "home")
    settings.home.mkdir(parents=True)
    loci = Loci(
        store=open_store(settings.home, database_url),
        blobs=BlobStore(settings.blob_dir),
        embedder=built.make_embedder,
        settings=service_settings(settings),
        chat=built.make_chat,
        transcriber=built.make_transcriber,
    )
    yield loci
    loci.store.close()


def test_loci_is_one_class_holding_its_services(core: Loci) -> None:
    assert Loci.__mro__ == (Loci, object)  # no mixins to reach up into it
    for name in SERVICES:
        assert not _refers_to(getattr(core, name), core), f"loci.{name} refers back to Loci"


def test_starting_builds_no_model_and_what_is_built_is_shared(core: Loci, built: Built) -> None:
    brain = core.brain()
    note = core.library.add_note(brain, "The bins go out on Tuesday", title="Bins")
    core.library.documents(brain)
    core.searching.search(brain, SearchRequest("bins", mode="text"))
    assert built.calls == {"embedder": 0, "chat": 0, "transcriber": 0}

    [ready] = core.library.wait_for(brain, [note.document.id])
    assert ready.status == "ready"
    for _ in range(2):
        answer = list(core.answers.ask(brain, "when do the bins go out?"))
        assert answer  # answered from the sources alone: no model is configured
    core.reviews.digest(brain, "7d")
    core.searching.search(brain, SearchRequest("bins"))
    # Each built once, whichever service asked first, and shared by the others.
    assert built.calls == {"embedder": 1, "chat": 1, "transcriber": 1}


def _refers_to(value: Any, target: object, seen: set[int] | None = None, depth: int = 0) -> bool:
    """Whether `target` is reachable from `value` through attributes, bound methods, closures
    and containers, a few levels deep (a service's collaborators and theirs)."""
    seen = set() if seen is None else seen
    if value is target:
        return True
    if id(value) in seen or depth > 4 or isinstance(value, (str, bytes, int, float, type)):
        return False
    seen.add(id(value))
    found: list[Any] = []
    if hasattr(value, "__self__"):  # a bound method, or a functools.cache over one
        found.append(value.__self__)
    for attribute in ("__wrapped__", "__func__"):
        if hasattr(value, attribute):
            found.append(getattr(value, attribute))
    for cell in getattr(value, "__closure__", None) or ():
        found.append(cell.cell_contents)
    if isinstance(value, dict):
        found.extend(value.values())
    elif isinstance(value, (list, tuple, set, frozenset)):
        found.extend(value)
    elif hasattr(value, "__dict__"):
        found.extend(vars(value).values())
    return any(_refers_to(v, target, seen, depth + 1) for v in found)
