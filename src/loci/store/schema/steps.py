"""Migration steps after the frozen baseline, each written once for both backends (see
`loci.store.schema`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from loci.store.schema.spec import SQLITE, Dialect
from loci.store.schema.sql import add_column_sql, create_table_sql, index_sql
from loci.store.schema.tables import BY_NAME

# Work SQL alone cannot do: a function of the backend's connection, in the step's transaction.
DataStep = Callable[[Any], None]


@dataclass(frozen=True)
class Step:
    """A migration step after the baseline, written once for both backends. The tables,
    columns and indexes it names are made as the spec (`tables.py`) defines them: a new table
    with its indexes and, on PostgreSQL, its policy. `sqlite` / `postgres` add what one backend
    alone needs, as SQL run after them (an FTS5 table made again, a pgvector index, a policy of
    another shape); `sqlite_data` / `postgres_data` do what SQL alone cannot (rows analysed as
    the application does), last, in the same transaction."""

    why: str
    tables: tuple[str, ...] = ()
    columns: tuple[str, ...] = ()  # "table.column"
    indexes: tuple[str, ...] = ()  # "table.index"
    sqlite: str = ""
    postgres: str = ""
    sqlite_data: DataStep | None = field(default=None, compare=False)
    postgres_data: DataStep | None = field(default=None, compare=False)

    def sql(self, dialect: Dialect) -> str:
        statements: list[str] = []
        for name in self.tables:
            table = BY_NAME[name]
            if table.only in (None, dialect):
                statements += create_table_sql(table, dialect)
        for name in self.columns:
            statements += add_column_sql(name, dialect)
        for name in self.indexes:
            table_name, index_name = name.split(".")
            table = BY_NAME[table_name]
            found = [i for i in table.indexes if i.name == index_name]
            if not found:
                raise KeyError(f"{table_name} has no index {index_name}")
            statements += [index_sql(table, i, dialect) for i in found if i.only in (None, dialect)]
        extra = self.sqlite if dialect == SQLITE else self.postgres
        if extra:
            statements.append(extra.strip().rstrip(";"))
        return ";\n".join(statements) + (";" if statements else "")

    def data(self, dialect: Dialect) -> DataStep | None:
        return self.sqlite_data if dialect == SQLITE else self.postgres_data


# Appended to both backends' migrations after their frozen baseline of 33 steps: the first
# here is migration 34 on both.
STEPS: tuple[Step, ...] = (
    Step(
        why="documents.origin: an imported or synced item's identity where it came from",
        columns=("documents.origin",),
        indexes=("documents.documents_origin",),
    ),
    Step(
        why="sources of other kinds than folders (feeds, web pages), run on a schedule the"
        " worker leases: kind, period, next run, lease, failures, state, options, secret",
        columns=tuple(
            f"sources.{c}"
            for c in (
                "kind",
                "every_s",
                "next_run_at",
                "lease_owner",
                "lease_until",
                "failures",
                "last_error",
                "state",
                "options",
                "secret",
            )
        ),  # fmt: skip
        indexes=("sources.sources_due",),
    ),
)
BASELINE = 33
