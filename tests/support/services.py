"""A real Loci service, or its bare store, on a data directory: on SQLite, or on a PostgreSQL
database of the session's embedded server (tests/support/pg.py) when given its URL."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loci.app import build_reranker, build_transcriber, secret_box, service_settings
from loci.config import Settings
from loci.embed.base import Embedder
from loci.models import Brain, NewDocument
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.base import Store
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore
from tests.support.live_server import LiveServer
from tests.support.pg import EmbeddedPostgres

BACKENDS = ("sqlite", "postgres")


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


def make_service(
    home: Path,
    embedder: Embedder,
    database_url: str | None = None,
    **overrides: Any,
) -> Loci:
    """A service over `home` with `embedder` as its configured model; `overrides` are
    settings, except `models`: what builds the other local models a brain may be made with,
    by name (`Callable[[str], Embedder]`)."""
    models: Callable[[str], Embedder] | None = overrides.pop("models", None)
    settings = Settings(home=home, **overrides)
    home.mkdir(parents=True, exist_ok=True)
    return Loci(
        models=models,
        secrets=lambda: secret_box(settings),
        store=open_store(home, database_url),
        blobs=BlobStore(settings.blob_dir),
        embedder=lambda: embedder,
        # The identity of the model given, whatever the settings name (a scripted remote one).
        settings=replace(service_settings(settings), embed_model_id=embedder.model_id),
        reranker=build_reranker(settings),
        transcriber=lambda: build_transcriber(settings),
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


def file_row(name: str, size: int) -> NewDocument:
    """A file's row of `size` bytes with a hash of its own, as the queue sees it."""
    return NewDocument(
        kind="file",
        name=name,
        title=None,
        source_url=None,
        mime_type="application/pdf",
        size_bytes=size,
        content_hash=name.encode().hex().ljust(64, "0"),
    )


def texts(loci: Loci, brain: Brain, query: str) -> list[str]:
    """The passages a search of the brain by its words alone (ten at most) finds."""
    hits = loci.searching.search(brain, SearchRequest(query, mode="text", limit=10))
    return [h.text for h in hits]
