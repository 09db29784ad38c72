"""`loci migrate` copies every column of every table, values and not only row counts.

A SQLite brain gets one row in every table both backends have, every column of it filled with a
value of its own (never NULL, never the column's default, never another column's value), all
generated from the schema spec (`loci.store.schema`) — so a column added to the spec is filled
here and must arrive. After the copy each PostgreSQL row is compared with its SQLite row column
by column; what only PostgreSQL has (a row's brain, a chunk's vector, BM25 lengths) is checked
against where it comes from. Then the copied rows are read back through row-level security:
each brain's table shows its rows to its brain and to no other.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import psycopg
from psycopg.rows import dict_row

from loci.store import schema
from loci.store.postgres import PostgresStore
from loci.store.postgres.transfer import COMPUTED, NOT_COPIED, copy_sqlite_to_postgres
from loci.store.sqlite import SqliteStore
from tests.support.pg import EmbeddedPostgres

VECTOR = (0.25, -0.5, 0.75)
# Values a column's meaning constrains (a CHECK, a language a stemmer knows, the vector's
# model and size, a passage's span of its text); every other column gets a generated value.
CHOSEN: dict[tuple[str, str], Any] = {
    ("brains", "embedder_model"): "model-x",
    ("brains", "embedder_dims"): len(VECTOR),
    ("brains", "text_language"): "french",
    ("documents", "language"): "fr",
    ("chunks", "language"): "fr",
    ("chunks", "text"): "Les loutres dorment dans les forêts de varech",
    ("chunks", "char_start"): 3,
    ("chunks", "char_end"): 48,
    ("vectors", "vector"): np.array(VECTOR, dtype=np.float32).tobytes(),
    ("graph_documents", "kind"): "page",
    ("graph_documents", "folder"): "people",
    ("sources", "on_delete"): "keep",
    ("sources", "mode"): "pages",
    ("source_watches", "mode"): "poll",
    ("jobs", "stage"): "vectors",
    ("messages", "rating"): "down",
}
# The SQLite-only table of vectors is keyed by the brain's model and the chunk's input hash.
LINKED = {
    ("vectors", "model"): ("brains", "embedder_model"),
    ("vectors", "hash"): ("chunks", "embed_hash"),
}


def _generated(table: schema.Table, column: schema.Column, numbers: Iterator[int]) -> Any:
    """A value of the column's kind that no other column has and that is not its default."""
    n = next(numbers)
    label = f"{table.name}.{column.name}"
    kind = column.kind
    if kind in (schema.KEY, schema.INT, schema.BIGINT):
        return 1000 + n
    if kind is schema.REAL:
        return n + 0.25
    if kind is schema.BOOL:
        return 1  # every boolean defaults to false
    if kind in (schema.JSON, schema.JSON_ORDERED):
        return json.dumps([label] if column.default == "[]" else {"value": label})
    assert kind is schema.TEXT, label
    return label


def _fill(store: SqliteStore) -> dict[str, dict[str, Any]]:
    """One row in each table SQLite has (but the change log its triggers write); returns them."""
    numbers = itertools.count(1)
    rows: dict[str, dict[str, Any]] = {}
    for table in schema.tables_on(schema.SQLITE):
        if table.name in ("chunk_log", "chunk_log_floor"):
            continue
        row: dict[str, Any] = {}
        for column in table.on(schema.SQLITE):
            if (table.name, column.name) in CHOSEN:
                row[column.name] = CHOSEN[table.name, column.name]
            elif (table.name, column.name) in LINKED:
                other, name = LINKED[table.name, column.name]
                row[column.name] = rows[other][name]
            elif column.references:
                other, name = column.references.split(".")
                row[column.name] = rows[other][name]
            else:
                row[column.name] = _generated(table, column, numbers)
        for key in table.foreign_keys:  # the graph's edges and timeline point at its page
            for name, to in zip(key.columns, key.to, strict=True):
                row[name] = rows[key.table][to]
        rows[table.name] = row
        with store.db.write() as conn:
            conn.execute(
                f"INSERT INTO {table.name} ({', '.join(row)})"
                f" VALUES ({', '.join('?' for _ in row)})",
                tuple(row.values()),
            )
    return rows


def _decoded(column: schema.Column, value: Any) -> Any:
    """A SQLite value as PostgreSQL returns it."""
    if value is not None and column.kind in (schema.JSON, schema.JSON_ORDERED):
        return json.loads(value)
    if column.kind is schema.BOOL:
        return bool(value)
    return value


def test_migrate_copies_every_column_of_every_table(
    tmp_path: Path, postgres_server: EmbeddedPostgres
) -> None:
    source = SqliteStore(tmp_path / "loci.db")
    try:
        rows = _fill(source)
        url = postgres_server.new_database()
        target = PostgresStore(url, pool_size=1)
        try:
            copied = copy_sqlite_to_postgres(source, target)
        finally:
            target.close()
    finally:
        source.close()

    shared = schema.tables_on()
    assert {t.name for t in shared} - NOT_COPIED.keys() <= set(copied)
    brain = rows["brains"]["id"]
    owner = postgres_server.owner_url(url)  # the schema's owner, a superuser: sees every row
    try:
        with psycopg.connect(owner, row_factory=dict_row) as conn:
            for table in shared:
                if table.name in NOT_COPIED:
                    continue
                written = rows[table.name]
                [found] = conn.execute(f"SELECT * FROM {table.name}").fetchall()
                compared = set()
                for column in table.on(schema.SQLITE):
                    value = written[column.name]
                    assert value is not None and value != column.default, (table.name, column)
                    assert found[column.name] == _decoded(column, value), (
                        f"{table.name}.{column.name}: {found[column.name]!r} != {value!r}"
                    )
                    compared.add(column.name)
                for name in set(found) - compared:  # what only PostgreSQL has
                    assert (table.name, name) in COMPUTED or name == "brain_id", (table.name, name)
                    assert found[name] is not None, (table.name, name)
                    compared.add(name)
                assert compared == {c.name for c in table.on(schema.POSTGRES)}

            for name in ("document_texts", "messages"):  # the brain of their document, talk
                assert conn.execute(f"SELECT brain_id FROM {name}").fetchone() == {
                    "brain_id": brain
                }
            chunk = conn.execute(
                "SELECT embed_model, embed_dims, embedding::real[] AS vector, lex_length"
                " FROM chunks"
            ).fetchone()
            assert chunk is not None
            assert (chunk["embed_model"], chunk["embed_dims"]) == ("model-x", len(VECTOR))
            assert chunk["vector"] == list(VECTOR) and chunk["lex_length"] > 0
            document = conn.execute("SELECT lex_length FROM documents").fetchone()
            assert document is not None and document["lex_length"] > 0
        _assert_scoped_to_its_brain(url, brain)
    finally:
        postgres_server.drop_database(url)


def _assert_scoped_to_its_brain(url: str, brain: int) -> None:
    """Through the application's role, a brain's table shows its row to that brain only, a
    system table to transactions that span brains only, an account-wide table to all."""
    seen: dict[str, dict[str, int]] = {}
    with psycopg.connect(url) as conn:
        for scope in (str(brain), str(brain + 1), "*"):
            conn.execute("SELECT set_config('loci.brain_id', %s, false)", (scope,))
            for table in schema.tables_on(schema.POSTGRES):
                count = conn.execute(f"SELECT count(*) FROM {table.name}").fetchall()[0][0]
                seen.setdefault(table.name, {})[scope] = int(count)
    checked = 0
    for table in schema.tables_on(schema.POSTGRES):
        counts = seen[table.name]
        if counts["*"] == 0:  # a running process's lease, or the blobs (copied by copy_blobs)
            assert table.name in {*NOT_COPIED, "blobs"}, table.name
            continue
        mine, other = counts[str(brain)], counts[str(brain + 1)]
        expected = {"brain": (counts["*"], 0), "system": (0, 0), None: (counts["*"],) * 2}
        assert (mine, other) == expected[table.rls], (table.name, counts)
        checked += 1
    assert checked >= 30
