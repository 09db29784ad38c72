"""SQL written once for both backends, and what such SQL needs of a backend's connection.

Portable SQL uses SQLite's qmark placeholders (`?`); the PostgreSQL backend turns them into
psycopg's `%s` with `pyformat`. So portable SQL must not hold a `?` of its own (no string
literal with one, no jsonb `?` operator): whatever is backend-specific — FTS5 or tsvector,
locking, RETURNING where only one side has it — stays in that backend's module.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

Row = dict[str, Any]


@functools.cache
def pyformat(sql: str) -> str:
    """`sql` with qmark placeholders in psycopg's style; a literal `%` is doubled to stay one."""
    return sql.replace("%", "%%").replace("?", "%s")


class PortableDatabase(Protocol):
    """The calls portable SQL goes through. `brain` names the brain a statement works in (the
    PostgreSQL row-level security scope); None is the system scope across brains."""

    def query(self, sql: str, params: Sequence[Any] = (), brain: int | None = None) -> list[Row]:
        """Rows of one statement run in a transaction of its own."""
        ...

    def change(self, sql: str, params: Sequence[Any] = (), brain: int | None = None) -> int:
        """Run one writing statement in a transaction of its own; how many rows it changed."""
        ...

    def returning(
        self, sql: str, params: Sequence[Any] = (), brain: int | None = None
    ) -> list[Row]:
        """Run one writing statement in a transaction of its own; the rows of its RETURNING."""
        ...

    def transaction(self, brain: int | None = None) -> AbstractContextManager[Any]:
        """A write transaction; what it yields is the `conn` that `run` takes."""
        ...

    def run(self, conn: Any, sql: str, params: Sequence[Any] = ()) -> list[Row]:
        """One statement inside `transaction`; its rows (none for a write without RETURNING)."""
        ...

    def run_many(self, conn: Any, sql: str, params: Sequence[Sequence[Any]]) -> None:
        """One statement for each parameter tuple, inside `transaction`."""
        ...
