"""Shared test fixtures: a real Loci service on a temporary data directory. Helpers that tests
import (building a service, running the CLI, servers on loopback, files to feed Loci) live in
tests/support/; this file holds only fixtures and pytest hooks.

The real local embedding model is loaded once per test session (it takes about a second) and
shared by every service the tests build.

Storage runs on SQLite unless a test (or module, `pytestmark = pytest.mark.both_backends`) asks for
both backends: then each of its tests that touches storage runs once on SQLite and once on a fresh
PostgreSQL database (one embedded server per session, see tests/support/pg.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.embed.local import LocalEmbedder
from loci.graph.service import BrainGraph
from loci.models import Brain
from loci.service import Loci
from loci.store.base import Store
from tests.support import text_files
from tests.support.live_server import LiveServer
from tests.support.loopback import Loopback, QuietHandler
from tests.support.pg import EmbeddedPostgres
from tests.support.services import BACKENDS, make_service, open_store


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "backend" in metafunc.fixturenames and metafunc.definition.get_closest_marker(
        "both_backends"
    ):
        metafunc.parametrize("backend", BACKENDS, indirect=True)


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return LocalEmbedder()


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[EmbeddedPostgres]:
    server = EmbeddedPostgres()
    yield server
    server.stop()


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    """Which store a test runs on: "sqlite" unless marked `both_backends`."""
    return str(getattr(request, "param", "sqlite"))


@pytest.fixture
def database_url(backend: str, request: pytest.FixtureRequest) -> Iterator[str | None]:
    """A fresh PostgreSQL database for a "postgres" test, None for SQLite."""
    if backend != "postgres":
        yield None
        return
    server: EmbeddedPostgres = request.getfixturevalue("postgres_server")
    url = server.new_database()
    yield url
    server.drop_database(url)


@pytest.fixture
def store(tmp_path: Path, database_url: str | None) -> Iterator[Store]:
    """The bare store of the test's backend."""
    opened = open_store(tmp_path / "home", database_url)
    yield opened
    opened.close()


@pytest.fixture
def loci(
    tmp_path: Path, embedder: Embedder, database_url: str | None, request: pytest.FixtureRequest
) -> Iterator[Loci]:
    """A service on the test's backend. Marked `fetches_loopback`, its fetcher may reach
    127.0.0.1 (the test's own web, mail or file server), and nothing else private."""
    loopback = request.node.get_closest_marker("fetches_loopback") is not None
    service = make_service(
        tmp_path / "home",
        embedder,
        database_url,
        job_retry_base_s=0.01,
        fetch_allowed_networks=["127.0.0.1/32"] if loopback else [],
    )
    yield service
    service.store.close()


@pytest.fixture
def brain(loci: Loci) -> Brain:
    """The `loci` service's default brain, empty (a module wanting a filled one defines its own)."""
    return loci.brain("default")


@pytest.fixture
def graph(loci: Loci) -> BrainGraph:
    return loci.graph


class _Article(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        self.send(200, text_files.html_page())


@pytest.fixture
def page_server() -> Iterator[Loopback]:
    """A web page (tests/support/text_files.py's article, at any path) on 127.0.0.1 that counts who
    connects to it: `page_server.url("/article")`, `page_server.connections`."""
    with Loopback(_Article) as web:
        yield web


@pytest.fixture
def server(loci: Loci) -> Iterator[LiveServer]:
    """A real server (API, web app, worker) on 127.0.0.1 over the `loci` service."""
    live = LiveServer(loci).start()
    yield live
    live.stop()
