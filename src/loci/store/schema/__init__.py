"""The schema of both stores, declared once: every table, column, key, index and row-level
security policy as it stands after the last migration (`tables.py`), compiled to SQLite or
PostgreSQL (`sql.py`).

What it is for:

- **The truth about the current schema.** `tests/test_schema_spec.py` builds a database from
  the spec alone and compares it, catalogue against catalogue, with one the migrations made,
  on both backends: a migration and the spec that disagree fail there.
- **Column lists.** The stores' `*_COLUMNS` strings and `loci migrate`'s copy
  (`loci.store.postgres.transfer`) are read from it (`column_names`, `column_list`), so a
  column declared here is selected and copied without another list to edit.
- **New migration steps, written once** (`steps.py`: `Step`, `STEPS`).

The migrations themselves (`loci.store.sqlite.migrations`, `loci.store.postgres.migrations`) are
history: their first 33 steps are frozen as the baseline and never rewritten, so a database made
by any earlier Loci keeps upgrading exactly as it did. Each step after them is a `Step` in
`STEPS`, which both backends append to their lists (the first is migration 34 on both).

Adding a column, then:

1. declare it on its table in `tables.py`, after the table's last column (where
   `ALTER TABLE ... ADD COLUMN` puts it), e.g. ``Column("pinned_at", TEXT)`` on `documents`;
2. append ``Step("documents can be pinned", columns=("documents.pinned_at",))`` to `STEPS`:
   it compiles to ``ALTER TABLE documents ADD COLUMN pinned_at TEXT`` on SQLite and
   ``ALTER TABLE documents ADD COLUMN pinned_at text`` on PostgreSQL;
3. give the model its field (`loci.models`): the stores select a table's columns from the spec
   and map them to a model by name (`loci.store.model_rows`), and `loci migrate` copies every
   column both backends have;
4. show it where a person sees it (API schema, CLI, MCP, web).

A new table is declared the same way and named in its step's `tables`: the step creates it with
its keys and indexes and, on PostgreSQL, its row-level security (`Table.rls`). A table holding
a brain's rows must have a policy: `tests/test_schema_spec.py` fails for one that has not.

What one backend does alone is marked, never inferred from the other: a column, index or table
`only=SQLITE` / `only=POSTGRES`; SQLite's FTS5 table and the chunk log's triggers
(`SQLITE_OBJECTS`); PostgreSQL's pgvector extension and functions (`POSTGRES_FUNCTIONS`), its
BM25 term statistics in place of FTS5 (the `chunk_terms` family of tables) and its row-level
security (`Table.rls`). A step's own dialect-only work — an FTS5 table made again, a tsvector or
pgvector index, term statistics counted again — goes in its `sqlite` / `postgres` SQL or its
`sqlite_data` / `postgres_data` functions.

A step compiles from the spec as it is now. Changing a column later is a new step; dropping or
renaming one also freezes the step that added it (its SQL written out in place of the `Step`),
as the baseline is frozen, so that step keeps making what it made.
"""

from loci.store.schema.spec import (
    BIGINT,
    BOOL,
    BYTES,
    DIALECTS,
    FLOAT4,
    INT,
    JSON,
    JSON_ORDERED,
    KEY,
    NOW,
    POSTGRES,
    REAL,
    SQLITE,
    TEXT,
    VECTOR,
    Column,
    Dialect,
    ForeignKey,
    Index,
    Kind,
    Table,
)
from loci.store.schema.sql import (
    add_column_sql,
    array_types,
    column_list,
    column_names,
    columns_of_kind,
    create_all,
    create_table_sql,
    index_sql,
    pick,
    policy_sql,
    tables_on,
)
from loci.store.schema.steps import BASELINE, STEPS, Step
from loci.store.schema.tables import BY_NAME, POSTGRES_FUNCTIONS, SQLITE_OBJECTS, TABLES

__all__ = [
    "BASELINE", "BIGINT", "BOOL", "BY_NAME", "BYTES", "DIALECTS", "FLOAT4", "INT", "JSON",
    "JSON_ORDERED", "KEY", "NOW", "POSTGRES", "POSTGRES_FUNCTIONS", "REAL", "SQLITE",
    "SQLITE_OBJECTS", "STEPS", "TABLES", "TEXT", "VECTOR", "Column", "Dialect", "ForeignKey",
    "Index", "Kind", "Step", "Table", "add_column_sql", "array_types", "column_list",
    "column_names", "columns_of_kind", "create_all", "create_table_sql", "index_sql", "pick",
    "policy_sql", "tables_on",
]  # fmt: skip
