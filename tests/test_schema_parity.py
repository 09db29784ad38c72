"""The two backends keep one schema: after all migrations, SQLite and PostgreSQL have the same
tables, the same columns with compatible types and nullability, and the same unique keys.

A migration added to one backend and not the other fails here. What only one backend has is
listed below with its reason; anything else that differs is a bug.
"""

from __future__ import annotations

import re
from pathlib import Path

import apsw
import psycopg

from loci.store.postgres.migrations import MIGRATIONS as POSTGRES_MIGRATIONS
from loci.store.sqlite import SqliteStore
from loci.store.sqlite.migrations import MIGRATIONS as SQLITE_MIGRATIONS
from tests.support.pg import EmbeddedPostgres

SQLITE_ONLY_TABLES = {
    # The BM25 leg is FTS5 (its table and shadow tables); PostgreSQL keeps term statistics.
    "chunks_fts", "chunks_fts_config", "chunks_fts_data", "chunks_fts_docsize", "chunks_fts_idx",
    # Vectors are cached by content hash beside the chunks; PostgreSQL stores them in the row.
    "vectors",
    # The change log lets every process's in-memory search indexes catch up with the others.
    "chunk_log", "chunk_log_floor",
    # SQLite's own bookkeeping for AUTOINCREMENT keys (ids never handed out twice).
    "sqlite_sequence",
}  # fmt: skip
POSTGRES_ONLY_TABLES = {
    "blobs",  # LOCI_BLOBS=database keeps the originals in PostgreSQL
    # BM25 term statistics kept on write (PostgreSQL's ts_rank is not BM25).
    "chunk_terms", "lexical_stats", "term_df",
    # and over whole documents (SQLite's in-memory index derives them from the passages)
    "document_terms", "document_term_df",
}  # fmt: skip
POSTGRES_ONLY_COLUMNS = {
    ("chunks", "embedding"),  # pgvector column (SQLite: the vectors table)
    ("chunks", "embed_model"),
    ("chunks", "embed_dims"),
    ("chunks", "lex_length"),  # the chunk's BM25 length, kept on write
    ("documents", "lex_length"),  # the document's, read whole
    # Row-level security checks the brain on every row it guards.
    ("document_texts", "brain_id"),
    ("messages", "brain_id"),
}
COMPATIBLE_TYPES = {
    "INTEGER": {"bigint", "integer", "smallint", "boolean"},
    "REAL": {"double precision", "real"},
    "TEXT": {"text", "json", "jsonb"},
    "BLOB": {"bytea"},
}

Column = tuple[str, bool]  # (type, not null)


def _sqlite_schema(
    path: Path,
) -> tuple[dict[str, dict[str, Column]], dict[str, set[tuple[str, ...]]]]:
    SqliteStore(path).close()  # creates and migrates the database
    conn = apsw.Connection(str(path))
    tables: dict[str, dict[str, Column]] = {}
    unique: dict[str, set[tuple[str, ...]]] = {}
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    for table in names:
        info = list(conn.execute(f"PRAGMA table_info('{table}')"))
        # A primary-key column is never NULL, whether or not it says NOT NULL.
        tables[table] = {r[1]: (str(r[2]).upper(), bool(r[3]) or bool(r[5])) for r in info}
        keys: set[tuple[str, ...]] = set()
        primary = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
        if primary:
            keys.add(tuple(sorted(primary)))
        # Partial unique indexes are left out on both sides (PostgreSQL's query below too).
        for _, index, is_unique, _origin, partial in conn.execute(f"PRAGMA index_list('{table}')"):
            if is_unique and not partial:
                cols = [r[2] for r in conn.execute(f"PRAGMA index_info('{index}')")]
                keys.add(tuple(sorted(cols)))
        unique[table] = keys
    conn.close()
    return tables, unique


def _postgres_schema(
    url: str,
) -> tuple[dict[str, dict[str, Column]], dict[str, set[tuple[str, ...]]]]:
    tables: dict[str, dict[str, Column]] = {}
    unique: dict[str, set[tuple[str, ...]]] = {}
    with psycopg.connect(url) as conn:
        for table, column, kind, nullable in conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns"
            " WHERE table_schema = 'public'"
        ):
            tables.setdefault(table, {})[column] = (kind, nullable == "NO")
        for table, definition in conn.execute(
            "SELECT t.relname, pg_get_indexdef(i.indexrelid) FROM pg_index i"
            " JOIN pg_class t ON t.oid = i.indrelid"
            " JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'"
            " WHERE i.indisunique AND i.indpred IS NULL"
        ):
            # "... USING btree (lower(name))" keys on `name`, as SQLite's COLLATE NOCASE does.
            keyed = definition.split(" USING ", 1)[1]
            words = set(re.findall(r"[a-z_]+", keyed))
            unique.setdefault(table, set()).add(tuple(sorted(words & set(tables[table]))))
    return tables, unique


def test_both_backends_have_the_same_migrations_tables_columns_and_keys(
    tmp_path: Path, postgres_server: EmbeddedPostgres
) -> None:
    assert len(SQLITE_MIGRATIONS) == len(POSTGRES_MIGRATIONS)
    lite, lite_unique = _sqlite_schema(tmp_path / "loci.db")
    url = postgres_server.new_database()
    try:
        pg, pg_unique = _postgres_schema(url)
    finally:
        postgres_server.drop_database(url)

    assert set(lite) - set(pg) == SQLITE_ONLY_TABLES
    assert set(pg) - set(lite) == POSTGRES_ONLY_TABLES
    shared = sorted(set(lite) & set(pg))
    assert {"brains", "documents", "chunks", "jobs", "users", "api_tokens"} <= set(shared)

    only_pg = {(t, c) for t in shared for c in set(pg[t]) - set(lite[t])}
    only_lite = {(t, c) for t in shared for c in set(lite[t]) - set(pg[t])}
    assert only_pg == POSTGRES_ONLY_COLUMNS
    assert only_lite == set()

    mismatched = [
        (table, column, lite[table][column], pg[table][column])
        for table in shared
        for column in set(lite[table]) & set(pg[table])
        if pg[table][column][0] not in COMPATIBLE_TYPES.get(lite[table][column][0], set())
        or lite[table][column][1] != pg[table][column][1]
    ]
    assert mismatched == []

    different_keys = {
        table: (lite_unique.get(table, set()), pg_unique.get(table, set()))
        for table in shared
        if lite_unique.get(table, set()) != pg_unique.get(table, set())
    }
    assert different_keys == {}
