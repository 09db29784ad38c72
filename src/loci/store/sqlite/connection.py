"""Opening SQLite the way Loci needs it, through APSW.

APSW bundles a current SQLite with FTS5 and can load extensions (the stdlib `sqlite3` here
cannot). WAL lets readers run beside the one writer; every write transaction starts with
`BEGIN IMMEDIATE` so two processes queue on the busy timeout instead of failing with
"database is locked" when a deferred transaction tries to upgrade its lock.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import apsw

from loci.private_files import create_private_file, make_private_dir, restrict

BUSY_TIMEOUT_MS = 30_000

Row = dict[str, Any]
Params = tuple[Any, ...] | dict[str, Any]


def rows_of(conn: apsw.Connection, sql: str, params: Params = ()) -> list[Row]:
    """The rows of one statement as dicts (none for a statement that returns none)."""
    cursor = conn.execute(sql, params)
    try:
        names = [d[0] for d in cursor.get_description()]
    except apsw.ExecutionCompleteError:
        return []
    return [dict(zip(names, row, strict=True)) for row in cursor]


def open_connection(path: Path) -> apsw.Connection:
    # SQLite would create the file 0644, and gives its WAL and shared-memory files the
    # database's mode: made 0600 first, none of the three is readable by another account.
    make_private_dir(path.parent)
    create_private_file(path)
    for side in ("-wal", "-shm"):
        restrict(path.with_name(path.name + side))
    conn = apsw.Connection(str(path))
    conn.set_busy_timeout(BUSY_TIMEOUT_MS)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn


class Database:
    """One connection per thread onto one database file, plus helpers for rows and writes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._local = threading.local()
        self._all: list[apsw.Connection] = []
        self._lock = threading.Lock()

    @property
    def conn(self) -> apsw.Connection:
        conn: apsw.Connection | None = getattr(self._local, "conn", None)
        if conn is None:
            conn = open_connection(self.path)
            self._local.conn = conn
            with self._lock:
                self._all.append(conn)
        return conn

    def rows(self, sql: str, params: Params = ()) -> list[Row]:
        return rows_of(self.conn, sql, params)

    def row(self, sql: str, params: Params = ()) -> Row | None:
        found = self.rows(sql, params)
        return found[0] if found else None

    def scalar(self, sql: str, params: Params = ()) -> Any:
        for row in self.conn.execute(sql, params):
            return row[0]
        return None

    def execute(self, sql: str, params: Params = ()) -> None:
        self.conn.execute(sql, params)

    @contextmanager
    def write(self) -> Iterator[apsw.Connection]:
        """A write transaction that takes the write lock up front (see module docstring)."""
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            yield conn
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")

    # portable SQL (`loci.store.portable`): SQLite is one file with no row-level security, so
    # the brain a statement works in changes nothing here.
    def query(self, sql: str, params: Sequence[Any] = (), brain: int | None = None) -> list[Row]:
        return rows_of(self.conn, sql, tuple(params))

    def change(self, sql: str, params: Sequence[Any] = (), brain: int | None = None) -> int:
        with self.write() as conn:
            conn.execute(sql, tuple(params))
            return int(conn.changes())

    def returning(
        self, sql: str, params: Sequence[Any] = (), brain: int | None = None
    ) -> list[Row]:
        with self.write() as conn:
            return rows_of(conn, sql, tuple(params))

    def transaction(self, brain: int | None = None) -> AbstractContextManager[apsw.Connection]:
        return self.write()

    @staticmethod
    def run(conn: apsw.Connection, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        return rows_of(conn, sql, tuple(params))

    @staticmethod
    def run_many(conn: apsw.Connection, sql: str, params: Sequence[Sequence[Any]]) -> None:
        conn.executemany(sql, params)

    def close(self) -> None:
        with self._lock:
            for conn in self._all:
                conn.close()
            self._all.clear()
        self._local = threading.local()
