"""Connections to PostgreSQL: a psycopg pool, one transaction per unit of work.

Everything runs in explicit transactions on autocommit connections, and nothing is kept in the
session between them — no server-side prepared statements (`prepare_threshold=None`), no
session `SET`s, no temporary tables — so Loci works through a transaction-mode connection pooler
(PgBouncer, Supavisor, Neon's pooler). What a transaction needs it sets with `SET LOCAL` or
`set_config(..., true)`, which ends with the transaction.

Each transaction names the brain it works in (`loci.brain_id`, read by the row-level security
policies), or `*` for the system paths that span brains (the worker claiming jobs, an admin
listing brains).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from typing import Any

import psycopg
from pgvector.psycopg import register_vector
from psycopg.rows import dict_row
from psycopg_pool import ConnectionPool

from loci.store.portable import pyformat

Row = dict[str, Any]
Cursor = psycopg.Cursor[Row]
ALL_BRAINS = "*"


def connect(url: str) -> psycopg.Connection[Row]:
    """One plain connection (migrations, LISTEN), outside the pool."""
    return psycopg.connect(url, autocommit=True, prepare_threshold=None, row_factory=dict_row)


class Database:
    def __init__(self, url: str, *, min_size: int = 1, max_size: int = 8) -> None:
        self.url = url
        self.pool: ConnectionPool[psycopg.Connection[Row]] = ConnectionPool(
            url,
            min_size=min_size,
            max_size=max_size,
            kwargs={"autocommit": True, "prepare_threshold": None, "row_factory": dict_row},
            configure=register_vector,
            open=True,
            name="loci",
        )

    @contextmanager
    def tx(self, brain: int | str = ALL_BRAINS) -> Iterator[Cursor]:
        """A transaction scoped to `brain` (an id, or ALL_BRAINS)."""
        with self.pool.connection() as conn, conn.transaction(), conn.cursor() as cur:
            cur.execute("SELECT set_config('loci.brain_id', %s, true)", (str(brain),))
            yield cur

    def rows(self, sql: str, params: Any = (), brain: int | str = ALL_BRAINS) -> list[Row]:
        with self.tx(brain) as cur:
            cur.execute(sql, params)
            return cur.fetchall() if cur.description else []

    def row(self, sql: str, params: Any = (), brain: int | str = ALL_BRAINS) -> Row | None:
        found = self.rows(sql, params, brain)
        return found[0] if found else None

    def scalar(self, sql: str, params: Any = (), brain: int | str = ALL_BRAINS) -> Any:
        found = self.row(sql, params, brain)
        return next(iter(found.values())) if found else None

    # portable SQL (`loci.store.portable`): qmark placeholders, None for the system scope.
    def query(self, sql: str, params: Sequence[Any] = (), brain: int | None = None) -> list[Row]:
        return self.rows(pyformat(sql), tuple(params), _scope(brain))

    def change(self, sql: str, params: Sequence[Any] = (), brain: int | None = None) -> int:
        with self.tx(_scope(brain)) as cur:
            cur.execute(pyformat(sql), tuple(params))
            return cur.rowcount

    def returning(
        self, sql: str, params: Sequence[Any] = (), brain: int | None = None
    ) -> list[Row]:
        return self.query(sql, params, brain)

    def transaction(self, brain: int | None = None) -> AbstractContextManager[Cursor]:
        return self.tx(_scope(brain))

    @staticmethod
    def run(conn: Cursor, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        conn.execute(pyformat(sql), tuple(params))
        return conn.fetchall() if conn.description else []

    @staticmethod
    def run_many(conn: Cursor, sql: str, params: Sequence[Sequence[Any]]) -> None:
        conn.executemany(pyformat(sql), params)

    def close(self) -> None:
        self.pool.close()


def _scope(brain: int | None) -> int | str:
    return ALL_BRAINS if brain is None else brain
