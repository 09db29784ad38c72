"""Copying an embedded SQLite data directory into PostgreSQL (`loci migrate --to`).

Everything canonical and derived is copied with its ids unchanged — brains, documents, their
texts and earlier versions, the folders brains follow, chunks with their stored vectors
(nothing is embedded again), jobs, the graph and its versions, users, members, tokens (hashes
only), OAuth clients, codes and refresh tokens (hashes only), single sign-on identities,
sessions, conversations, Slack identities and the threads they ask in, webhook secrets (still
sealed with the server's key) and handled deliveries — so links, tokens and ids in scripts keep
working. What is copied is read from `loci.store.schema`: every column of every table both
backends have, but the running processes' leases (`NOT_COPIED`). The term statistics of the
BM25 leg are computed on the way in. The copy is one transaction: it lands whole or not at all.
Then every table's rows are counted on both sides. The target must be empty; blobs stay where
they are (a shared volume), or go into the database with `blobs_in_database`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import psycopg

from loci.context_line import index_title
from loci.errors import Conflict, StoreError
from loci.nul import NUL
from loci.store import schema
from loci.store.blobs import sha256_hex
from loci.store.postgres import document_lexical, lexical
from loci.store.postgres.blobs import PostgresBlobStore
from loci.store.postgres.connection import Cursor
from loci.store.postgres.store import PostgresStore
from loci.store.sqlite import SqliteStore
from loci.store.stemming import stemmer_for

log = logging.getLogger(__name__)

BATCH = 2000
Progress = Callable[[str, int], None]  # (table, rows copied so far)


# Tables both backends have that are not copied: what running processes hold for the moment,
# which they make again on the new database.
NOT_COPIED = {
    "workers": "the running workers' heartbeats",
    "source_watches": "which process watches which folder: leases of running processes",
}
# Columns only PostgreSQL has, and where the copy takes them from: a row's brain, from the row
# it belongs to (row-level security checks it on every row) ...
BRAIN_OF = {
    "document_texts": ("documents", "document_id"),
    "messages": ("conversations", "conversation_id"),
}
# ... or what the copy computes: a chunk's vector (from SQLite's `vectors`) and the BM25
# lengths, counted on the way in (`_insert_chunk_batch`, `_index_documents`).
COMPUTED = {
    ("chunks", "embed_model"), ("chunks", "embed_dims"), ("chunks", "embedding"),
    ("chunks", "lex_length"), ("documents", "lex_length"),
}  # fmt: skip


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]  # as inserted into PostgreSQL, in this order
    select: str  # the SQLite query that reads them, in the same order
    bool_columns: tuple[str, ...] = ()


def _copied(spec: schema.Table) -> Table:
    """How one table is copied: every column of the spec, read from SQLite by name."""
    computed = {c for t, c in COMPUTED if t == spec.name}
    columns = tuple(
        c for c in schema.column_names(spec.name, dialect=schema.POSTGRES) if c not in computed
    )
    shared = set(schema.column_names(spec.name))
    parent, link = BRAIN_OF.get(spec.name, ("", ""))
    unknown = {c for c in columns if c not in shared and not (parent and c == "brain_id")}
    if unknown:  # a column only PostgreSQL has must say where its values come from
        raise StoreError(f"loci migrate cannot fill {spec.name}.{', '.join(sorted(unknown))}")
    read = [f"t.{c}" if c in shared else "p.brain_id" for c in columns]
    join = f" JOIN {parent} p ON p.id = t.{link}" if parent else ""
    order = ", ".join(f"t.{c}" for c in spec.key())
    return Table(
        spec.name,
        columns,
        f"SELECT {', '.join(read)} FROM {spec.name} t{join} ORDER BY {order}",
        tuple(c.name for c in spec.columns if c.kind is schema.BOOL),
    )


# In the spec's order, which puts every table after those it points at. `chunks` is special
# (vectors and postings, see _copy_chunks).
TABLES: tuple[Table, ...] = tuple(
    _copied(t) for t in schema.tables_on() if t.name not in NOT_COPIED
)
# Tables whose ids PostgreSQL hands out (identity columns): new rows continue after the copy's.
IDENTITY_TABLES = tuple(
    t.name
    for t in schema.tables_on()
    if t.name not in NOT_COPIED and any(c.kind is schema.KEY for c in t.columns)
)


def _handed_out(source: SqliteStore) -> dict[str, int]:
    """The largest id each AUTOINCREMENT table of the source ever gave, deleted rows' too: the
    copy must not hand a deleted document's or brain's id to a new one."""
    rows = source.db.rows("SELECT name, seq FROM sqlite_sequence")
    return {str(r["name"]): int(r["seq"]) for r in rows}


def _source_rows(source: SqliteStore, table: Table) -> Iterator[tuple[Any, ...]]:
    for row in source.db.conn.execute(table.select):
        values = list(row)
        _refuse_nul(table.name, table.columns, values)
        for i, column in enumerate(table.columns):
            if column in table.bool_columns:
                values[i] = bool(values[i])
        yield tuple(values)


def _row_name(columns: Sequence[str], row: Sequence[Any]) -> str:
    """The row as a person would look it up in SQLite: its id, or its key columns."""
    names = [c.rsplit(".", 1)[-1] for c in columns]  # without a join's table alias
    keys = ["id"] if "id" in names else [n for n in names if n.endswith("_id")] or names[:1]
    return ", ".join(f"{key} {row[names.index(key)]!r}" for key in keys)


def _refuse_nul(table: str, columns: Sequence[str], row: Sequence[Any]) -> None:
    """SQLite kept a NUL that PostgreSQL cannot store (older Loci accepted them): say where,
    before the insert fails without naming the row."""
    for column, value in zip(columns, row, strict=True):
        if isinstance(value, str) and NUL in value:
            raise StoreError(
                f"cannot copy {table} {_row_name(columns, row)}: column"
                f" {column.rsplit('.', 1)[-1]} contains a NUL"
                " character (\\u0000), which PostgreSQL cannot store. Nothing was copied; remove"
                " the character in the SQLite database (or the document) and migrate again"
            )


def _insert_rows(
    cur: Cursor, table: str, columns: Sequence[str], sql: str, batch: Sequence[tuple[Any, ...]]
) -> None:
    """Insert a batch; if PostgreSQL refuses it, find the row it refuses and name it."""
    try:
        with cur.connection.transaction():  # a savepoint: the copy may go on to find the row
            cur.executemany(sql, batch)
    except psycopg.Error as error:
        for row in batch:
            try:
                with cur.connection.transaction():
                    cur.execute(sql, row)
            except psycopg.Error as refused:
                reason = refused.diag.message_primary or str(refused)
                raise StoreError(
                    f"cannot copy {table} {_row_name(columns, row)}: {reason}. Nothing was copied"
                ) from refused
        raise StoreError(f"cannot copy {table}: {error}. Nothing was copied") from error


def _count(cur: Cursor, table: str) -> int:
    cur.execute(f"SELECT count(*) AS n FROM {table}")
    row = cur.fetchone()
    return int(row["n"]) if row else 0


def copy_sqlite_to_postgres(
    source: SqliteStore, target: PostgresStore, progress: Progress | None = None
) -> dict[str, int]:
    """Copy everything; returns rows per table (equal on both sides, else StoreError)."""
    report = progress or (lambda _table, _rows: None)
    counts: dict[str, int] = {}
    with target.db.tx() as cur:
        if _count(cur, "brains") or _count(cur, "users"):
            raise Conflict(
                "the target database already holds brains or users; migrate into an empty one"
            )
        for table in TABLES:
            if table.name == "chunks":  # after documents, before jobs
                counts["chunks"] = _copy_chunks(cur, source, report)
                _index_documents(cur)
            else:
                counts[table.name] = _copy_table(cur, source, table, report)
        handed_out = _handed_out(source)
        for name in IDENTITY_TABLES:  # new rows continue after every id ever handed out
            cur.execute(
                f"SELECT setval(pg_get_serial_sequence('{name}', 'id'),"
                f" greatest(coalesce((SELECT max(id) FROM {name}), 0), %s) + 1, false)",
                (handed_out.get(name, 0),),
            )
        for name, expected in counts.items():
            found = _count(cur, name)
            if found != expected:
                raise StoreError(f"{name}: copied {expected} rows but the target holds {found}")
    for dims in {b.embedder_dims for b in target.list_brains() if b.embedder_dims}:
        target.ensure_vector_index(dims)
    source_counts = {t: int(source.db.scalar(f"SELECT count(*) FROM {t}")) for t in counts}
    counts["chunk vectors"] = int(
        target.db.scalar("SELECT count(*) FROM chunks WHERE embedding IS NOT NULL")
    )
    source_counts["chunk vectors"] = int(
        source.db.scalar(
            "SELECT count(*) FROM chunks c JOIN brains b ON b.id = c.brain_id"
            " JOIN vectors v ON v.model = b.embedder_model AND v.hash = c.embed_hash"
        )
    )
    if source_counts != counts:
        raise StoreError(f"row counts differ: SQLite {source_counts}, PostgreSQL {counts}")
    return counts


def _copy_table(cur: Cursor, source: SqliteStore, table: Table, report: Progress) -> int:
    columns = ", ".join(table.columns)
    marks = ", ".join("%s" for _ in table.columns)  # JSON columns arrive as JSON text
    sql = f"INSERT INTO {table.name} ({columns}) VALUES ({marks})"
    total = 0
    for batch in _batches(_source_rows(source, table)):
        _insert_rows(cur, table.name, table.columns, sql, batch)
        total += len(batch)
        report(table.name, total)
    return total


# A chunk as SQLite keeps it, with its brain's embedder and stemming language and the stored
# vector of its embedding input: every chunk column of the spec, then what the copy needs.
CHUNK_COLUMNS = (
    *(f"c.{name}" for name in schema.column_names("chunks")),
    "b.embedder_model", "v.vector", "b.text_language",
)  # fmt: skip
_CHUNK_NAMES = tuple(c.rsplit(".", 1)[-1] for c in CHUNK_COLUMNS)
CHUNK_TABLE = next(t for t in TABLES if t.name == "chunks")  # PostgreSQL's columns, in order
_CHUNK_MARKS = ", ".join(
    "%s::jsonb" if schema.BY_NAME["chunks"].column(c).kind is schema.JSON else "%s"
    for c in CHUNK_TABLE.columns + ("embed_model", "embed_dims", "embedding", "lex_length")
)


def _copy_chunks(cur: Cursor, source: SqliteStore, report: Progress) -> int:
    """Chunks with the vector of their brain's embedder (as stored, not recomputed), and
    their postings and lengths for BM25."""
    titles = {  # the title BM25 indexes a document's passages under, as the index does
        int(r[0]): (int(r[1]), index_title(r[2] or None, str(r[3]), str(r[4])))
        for r in source.db.conn.execute("SELECT id, brain_id, title, name, kind FROM documents")
    }
    rows = source.db.conn.execute(
        f"SELECT {', '.join(CHUNK_COLUMNS)}"
        " FROM chunks c JOIN brains b ON b.id = c.brain_id"
        " LEFT JOIN vectors v ON v.model = b.embedder_model AND v.hash = c.embed_hash"
        " ORDER BY c.brain_id, c.document_id, c.idx"
    )
    total = 0
    for batch in _batches(rows):
        for row in batch:
            _refuse_nul("chunks", CHUNK_COLUMNS, row)
        _insert_chunk_batch(cur, batch, titles)
        total += len(batch)
        report("chunks", total)
    return total


def _index_documents(cur: Cursor) -> None:
    """Every brain's documents counted whole for BM25, from the passages just copied."""
    cur.execute("SELECT id, text_language FROM brains ORDER BY id")
    for brain in cur.fetchall():
        lexical.lock_stats(cur, int(brain["id"]))
        document_lexical.index_documents(cur, int(brain["id"]), str(brain["text_language"]))


def _insert_chunk_batch(
    cur: Cursor, batch: Sequence[tuple[Any, ...]], titles: dict[int, tuple[int, str]]
) -> None:
    by_document: dict[int, list[dict[str, Any]]] = {}
    for row in batch:
        chunk = dict(zip(_CHUNK_NAMES, row, strict=True))
        by_document.setdefault(int(chunk["document_id"]), []).append(chunk)
    values: list[tuple[Any, ...]] = []
    postings: dict[int, tuple[list[int], list[tuple[Any, int]]]] = {}
    for document_id, chunks in by_document.items():
        brain_id, title = titles[document_id]
        headings = [" / ".join(json.loads(c["heading_path"])) for c in chunks]
        terms = lexical.chunk_terms(
            title,
            [
                (heading, str(c["text"]), stemmer_for(str(c["text_language"]), c["language"]))
                for heading, c in zip(headings, chunks, strict=True)
            ],
        )
        ids, pairs = postings.setdefault(brain_id, ([], []))
        for chunk, term in zip(chunks, terms, strict=True):
            blob = chunk["vector"]
            vector = np.frombuffer(blob, dtype=np.float32) if blob is not None else None
            values.append(
                (
                    *(chunk[c] for c in CHUNK_TABLE.columns),
                    chunk["embedder_model"] if vector is not None else None,
                    len(vector) if vector is not None else None,
                    vector,
                    term[1],
                )
            )
            ids.append(int(chunk["id"]))
            pairs.append(term)
    columns = ", ".join((*CHUNK_TABLE.columns, "embed_model", "embed_dims", "embedding"))
    cur.executemany(f"INSERT INTO chunks({columns}, lex_length) VALUES ({_CHUNK_MARKS})", values)
    for brain_id, (ids, pairs) in postings.items():
        lexical.lock_stats(cur, brain_id)
        lexical.add_postings(cur, brain_id, ids, pairs)


def _batches(rows: Iterator[tuple[Any, ...]] | Any) -> Iterator[list[tuple[Any, ...]]]:
    batch: list[tuple[Any, ...]] = []
    for row in rows:
        batch.append(tuple(row))
        if len(batch) == BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def copy_blobs(blob_dir: Path, target: PostgresStore) -> int:
    """Copy the blob folder's files into the database's blob table; returns how many."""
    store = PostgresBlobStore(target.db)
    copied = 0
    for path in sorted(blob_dir.rglob("*")) if blob_dir.exists() else []:
        if path.is_file() and not path.name.startswith(".incoming-"):
            data = path.read_bytes()
            if sha256_hex(data) != path.name:
                raise StoreError(f"blob {path} does not hash to its name; nothing more copied")
            store.put(data)
            copied += 1
    return copied
