"""Shared test fixtures: a real Loci service on a temporary data directory.

The real local embedding model is loaded once per test session (it takes about a second) and
shared by every service the tests build.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.app import service_settings
from loci.config import Settings
from loci.embed.base import Embedder
from loci.embed.local import LocalEmbedder
from loci.service import Loci
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore
from tests.live_server import LiveServer


@pytest.fixture(scope="session")
def embedder() -> Embedder:
    return LocalEmbedder()


def make_service(home: Path, embedder: Embedder, **overrides: object) -> Loci:
    settings = Settings(home=home, **overrides)  # type: ignore[arg-type]
    home.mkdir(parents=True, exist_ok=True)
    return Loci(
        store=SqliteStore(settings.database_path),
        blobs=BlobStore(settings.blob_dir),
        embedder=lambda: embedder,
        settings=service_settings(settings),
        database_path=settings.database_path,
    )


@pytest.fixture
def loci(tmp_path: Path, embedder: Embedder) -> Iterator[Loci]:
    service = make_service(tmp_path / "home", embedder, job_retry_base_s=0.01)
    yield service
    service.store.close()


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
