"""The vocabulary of the schema spec (`loci.store.schema`): a column's logical type and what
it is on each backend, columns, keys, indexes, tables and which backend has them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Dialect = Literal["sqlite", "postgres"]
SQLITE: Dialect = "sqlite"
POSTGRES: Dialect = "postgres"
DIALECTS: tuple[Dialect, ...] = (SQLITE, POSTGRES)


@dataclass(frozen=True)
class Kind:
    """A column's logical type and what it is on each backend."""

    name: str
    sqlite: str
    postgres: str
    # The element type of a PostgreSQL array of it, for `unnest(%s::type[])` (`kept_chunks`).
    postgres_array: str = ""


KEY = Kind("key", "INTEGER", "bigint", "bigint")  # the table's own id, handed out by the database
INT = Kind("int", "INTEGER", "integer", "int")
BIGINT = Kind("bigint", "INTEGER", "bigint", "bigint")  # also every reference to a KEY
REAL = Kind("real", "REAL", "double precision", "float8")
FLOAT4 = Kind("float4", "REAL", "real", "float4")
TEXT = Kind("text", "TEXT", "text", "text")
JSON = Kind("json", "TEXT", "jsonb")  # SQLite keeps the JSON text
JSON_ORDERED = Kind("json_ordered", "TEXT", "json")  # json, not jsonb: keeps the keys' order
BOOL = Kind("bool", "INTEGER", "boolean")  # 0/1 on SQLite
BYTES = Kind("bytes", "BLOB", "bytea")
VECTOR = Kind("vector", "", "vector")  # pgvector; its dimensions vary by brain


class Now:
    """The default of a time column: the current UTC time as ISO-8601 text (milliseconds, Z),
    the same on both backends."""

    def __repr__(self) -> str:
        return "NOW"


NOW = Now()
Default = str | int | float | bool | Now | None


@dataclass(frozen=True)
class Column:
    name: str
    kind: Kind
    nullable: bool = True
    default: Default = None
    # "table.column" it points at; `on_delete` says what deleting that row does to this one.
    references: str = ""
    on_delete: Literal["CASCADE", "SET NULL"] = "CASCADE"
    unique: bool = False
    # Unique whatever the letters' case: SQLite's UNIQUE COLLATE NOCASE, PostgreSQL's unique
    # index on lower(column) named "<table>_<column>".
    unique_nocase: bool = False
    check: str = ""  # a CHECK on this column alone
    only: Dialect | None = None


@dataclass(frozen=True)
class ForeignKey:
    """A key of several columns pointing at another table's (single-column ones are
    `Column.references`)."""

    columns: tuple[str, ...]
    table: str
    to: tuple[str, ...]
    on_delete: Literal["CASCADE", "SET NULL"] = "CASCADE"


@dataclass(frozen=True)
class Index:
    name: str
    columns: str  # SQL: column names, or expressions ("impact DESC")
    unique: bool = False
    where: str = ""  # a partial index's condition
    include: str = ""  # PostgreSQL: columns carried for index-only scans
    only: Dialect | None = None


Rls = Literal["brain", "system"]


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[Column, ...]
    primary_key: tuple[str, ...] = ()  # empty: the KEY column, if any
    unique: tuple[tuple[str, ...], ...] = ()
    foreign_keys: tuple[ForeignKey, ...] = ()
    checks: tuple[str, ...] = ()
    indexes: tuple[Index, ...] = ()
    # PostgreSQL row-level security: "brain" — a transaction sees only the rows of the brain
    # it names (`brain_key` holds the brain's id); "system" — only transactions that span
    # brains see any row; None — the table holds no brain's rows and has no policy.
    rls: Rls | None = None
    brain_key: str = "brain_id"
    # SQLite only: AUTOINCREMENT (an id is never handed out twice, see `identities.py`), and
    # a table clustered on its primary key.
    autoincrement: bool = False
    without_rowid: bool = False
    only: Dialect | None = None

    def column(self, name: str) -> Column:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(f"{self.name} has no column {name}")

    def on(self, dialect: Dialect) -> tuple[Column, ...]:
        """The columns the table has on this backend, in their order there."""
        return tuple(c for c in self.columns if c.only in (None, dialect))

    def key(self) -> tuple[str, ...]:
        if self.primary_key:
            return self.primary_key
        return tuple(c.name for c in self.columns if c.kind is KEY)
