"""Shared test fixtures: a real Loci service on a temporary data directory.

The real local embedding model is loaded once per test session (it takes about a second) and
shared by every service the tests build.

Storage runs on SQLite unless a test (or module, `pytestmark = pytest.mark.both_backends`) asks for
both backends: then each of its tests that touches storage runs once on SQLite and once on a fresh
PostgreSQL database (one embedded server per session, see tests/pg.py).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from loci.app import build_reranker, build_transcriber, service_settings
from loci.config import Settings
from loci.embed.base import Embedder
from loci.embed.local import LocalEmbedder
from loci.graph.service import BrainGraph
from loci.models import Brain
from loci.service import Loci
from loci.store.base import Store
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore
from tests import fixtures
from tests.live_server import LiveServer
from tests.loopback import Loopback, QuietHandler
from tests.pg import EmbeddedPostgres

BACKENDS = ("sqlite", "postgres")


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


def open_store(home: Path, database_url: str | None) -> Store:
    if database_url:
        from loci.store.postgres import PostgresStore

        return PostgresStore(database_url, pool_size=4)
    home.mkdir(parents=True, exist_ok=True)
    return SqliteStore(home / "loci.db")


def reopen(store: Store) -> Store:
    """Another store on the same database, as a second process would open it."""
    if isinstance(store, SqliteStore):
        return SqliteStore(store.db.path)
    from loci.store.postgres import PostgresStore

    assert isinstance(store, PostgresStore)
    return PostgresStore(store.db.url, pool_size=2)


@pytest.fixture
def store(tmp_path: Path, database_url: str | None) -> Iterator[Store]:
    """The bare store of the test's backend."""
    opened = open_store(tmp_path / "home", database_url)
    yield opened
    opened.close()


def make_service(
    home: Path, embedder: Embedder, database_url: str | None = None, **overrides: object
) -> Loci:
    settings = Settings(home=home, **overrides)  # type: ignore[arg-type]
    home.mkdir(parents=True, exist_ok=True)
    return Loci(
        store=open_store(home, database_url),
        blobs=BlobStore(settings.blob_dir),
        embedder=lambda: embedder,
        settings=service_settings(settings),
        reranker=build_reranker(settings),
        transcriber=lambda: build_transcriber(settings),
    )


@pytest.fixture
def loci(tmp_path: Path, embedder: Embedder, database_url: str | None) -> Iterator[Loci]:
    service = make_service(tmp_path / "home", embedder, database_url, job_retry_base_s=0.01)
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
        self.send(200, fixtures.html_page())


@pytest.fixture
def page_server() -> Iterator[Loopback]:
    """A web page (tests/fixtures.py's article, at any path) on 127.0.0.1 that counts who
    connects to it: `page_server.url("/article")`, `page_server.connections`."""
    with Loopback(_Article) as web:
        yield web


@pytest.fixture
def server(loci: Loci) -> Iterator[LiveServer]:
    """A real server (API, web app, worker) on 127.0.0.1 over the `loci` service."""
    live = LiveServer(loci).start()
    yield live
    live.stop()


def run_cli(
    *args: str,
    home: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run a `loci` command in this process (Typer's runner) against the data directory `home`:
    the same app, arguments, environment, stdin, stdout, stderr and exit code as the real command,
    without paying a new interpreter and a model load per call. Commands that serve (`serve`,
    `mcp` over stdio) and the end-to-end tests of the installed command use `run_cli_process`."""
    from typer.testing import CliRunner

    from loci.cli.context import service
    from loci.cli.main import app

    full_env = {"LOCI_HOME": str(home), **(env or {})}
    service.cache_clear()
    try:
        result = CliRunner().invoke(app, list(args), input=stdin, env=full_env)
    finally:
        _close_cli_service()
    stderr = result.stderr
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        # What the real process would print before exiting 1: the traceback.
        import traceback

        stderr += "".join(traceback.format_exception(result.exception))
    return subprocess.CompletedProcess(
        ["loci", *args], result.exit_code, stdout=result.stdout, stderr=stderr
    )


def _close_cli_service() -> None:
    from loci.cli.context import service

    if service.cache_info().currsize:
        service().store.close()
    service.cache_clear()


def run_cli_process(
    *args: str,
    home: Path,
    env: dict[str, str] | None = None,
    stdin: str | None = None,
    timeout: float = 300,
) -> subprocess.CompletedProcess[str]:
    """Run the real `loci` command in a subprocess against the data directory `home`."""
    full_env = {**os.environ, "LOCI_HOME": str(home), **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "loci", *args],
        capture_output=True,
        text=True,
        env=full_env,
        input=stdin,
        timeout=timeout,
    )


@contextmanager
def served_world(
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Embedder,
    request: pytest.FixtureRequest,
    name: str,
    **server_options: Any,
) -> Iterator[tuple[Loci, LiveServer]]:
    """A live server over a fresh service on the backend a `params=BACKENDS` fixture was given,
    for a module's worth of tests (`server_options`: LiveServer's); everything is closed and
    dropped afterwards."""
    home = tmp_path_factory.mktemp(name) / "home"
    postgres: EmbeddedPostgres | None = None
    url = None
    if request.param == "postgres":
        postgres = request.getfixturevalue("postgres_server")
        url = postgres.new_database()
    loci = make_service(home, embedder, url, job_retry_base_s=0.01)
    server = LiveServer(loci, **server_options).start()
    try:
        yield loci, server
    finally:
        server.stop()
        loci.store.close()
        if postgres is not None and url is not None:
            postgres.drop_database(url)
