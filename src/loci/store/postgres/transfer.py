"""Copying an embedded SQLite data directory into PostgreSQL (`loci migrate --to`).

Everything canonical and derived is copied with its ids unchanged — brains, documents, their
texts and earlier versions, the folders brains follow, chunks with their stored vectors
(nothing is embedded again), jobs, the graph and its versions, users, members, tokens (hashes
only), OAuth clients, codes and refresh tokens (hashes only), single sign-on identities,
sessions, conversations, Slack identities and the threads they ask in, webhook secrets (still
sealed with the server's key) and handled deliveries — so links, tokens and ids in scripts keep
working. The term statistics of the BM25 leg are computed on the way in. The copy is one
transaction: it lands whole or not at all. Then every table's rows are counted on both sides.
The target must be empty; blobs stay where they are (a shared volume), or go into the database
with `blobs_in_database`.
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


@dataclass(frozen=True)
class Table:
    name: str
    columns: tuple[str, ...]
    bool_columns: tuple[str, ...] = ()
    order: str = "rowid"


# In dependency order. `chunks` is special (vectors and postings), see _copy_chunks.
TABLES: tuple[Table, ...] = (
    Table(
        "users",
        (
            "id",
            "name",
            "name_key",
            "is_admin",
            "created_at",
            "email",
            "password_hash",
            "disabled_at",
        ),
        bool_columns=("is_admin",),
    ),
    Table(
        "brains",
        (
            "id",
            "name",
            "embedder_model",
            "embedder_dims",
            "generation",
            "created_at",
            "visibility",
            "text_language",
        ),
    ),
    Table("brain_members", ("brain_id", "user_id", "role", "created_at")),
    Table(
        "oauth_clients",
        (
            "client_id",
            "name",
            "redirect_uris",
            "grant_types",
            "auth_method",
            "secret_hash",
            "created_at",
            "registered_from",
        ),
        order="client_id",
    ),  # fmt: skip
    Table(
        "api_tokens",
        (
            "id",
            "user_id",
            "name",
            "prefix",
            "secret_hash",
            "scope",
            "brain_ids",
            "expires_at",
            "last_used_at",
            "revoked_at",
            "created_at",
            "kind",
            "client_id",
            "resource",
        ),
    ),  # fmt: skip
    Table(
        "oauth_codes",
        (
            "code_hash",
            "client_id",
            "user_id",
            "redirect_uri",
            "scope",
            "brain_ids",
            "resource",
            "code_challenge",
            "expires_at",
            "used_at",
            "token_id",
            "created_at",
        ),
        order="code_hash",
    ),  # fmt: skip
    Table(
        "user_identities",
        ("provider", "subject", "user_id", "email", "last_sign_in_at", "created_at"),
        order="provider, subject",
    ),
    Table(
        "oauth_refresh_tokens",
        ("secret_hash", "token_id", "expires_at", "used_at", "created_at"),
        order="secret_hash",
    ),
    Table("invites", ("id", "user_id", "secret_hash", "expires_at", "used_at", "created_at")),
    Table(
        "web_sessions",
        ("secret_hash", "user_id", "token_id", "csrf", "expires_at"),
        order="secret_hash",
    ),
    Table(
        "user_llm",
        ("user_id", "base_url", "model", "fallback_models", "sealed_api_key", "updated_at"),
        order="user_id",
    ),
    Table(
        "documents",
        (
            "id",
            "brain_id",
            "kind",
            "name",
            "title",
            "source_url",
            "mime_type",
            "size_bytes",
            "content_hash",
            "status",
            "status_reason",
            "chunk_count",
            "tags",
            "metadata",
            "created_at",
            "updated_at",
            "source_path",
            "vectors_pending",
            "progress",
            "failure_code",
            "language",
            "gone_at",
        ),
        bool_columns=("vectors_pending",),
    ),  # fmt: skip
    Table("document_texts", ("document_id", "brain_id", "text"), order="document_id"),
    Table(
        "document_versions",
        (
            "id",
            "brain_id",
            "document_id",
            "number",
            "name",
            "mime_type",
            "size_bytes",
            "content_hash",
            "saved_at",
            "replaced_at",
        ),
    ),  # fmt: skip
    Table(
        "sources",
        (
            "id",
            "brain_id",
            "path",
            "include_globs",
            "exclude_globs",
            "on_delete",
            "created_at",
            "last_sync_at",
            "last_report",
            "mode",
        ),
    ),  # fmt: skip
    Table(
        "source_pages",
        ("source_id", "brain_id", "doc_id", "path", "page_hash", "file_hash"),
        order="source_id, doc_id",
    ),
    Table(
        "jobs",
        (
            "id",
            "brain_id",
            "document_id",
            "kind",
            "status",
            "attempts",
            "last_error",
            "run_after",
            "lease_owner",
            "lease_expires",
            "created_at",
            "updated_at",
            "stage",
            "priority",
        ),
    ),  # fmt: skip
    Table(
        "conversations",
        ("id", "brain_id", "user_id", "title", "created_at", "updated_at", "origin"),
    ),
    Table(
        "messages",
        (
            "id",
            "conversation_id",
            "brain_id",
            "role",
            "content",
            "citations",
            "intent",
            "created_at",
            "rating",
            "rating_reason",
            "rated_at",
        ),
    ),  # fmt: skip
    Table(
        "graph_documents",
        (
            "brain_id",
            "id",
            "kind",
            "type",
            "folder",
            "status",
            "title",
            "aliases",
            "merged_into",
            "created",
            "updated",
            "content",
            "content_hash",
            "document_id",
        ),
        order="brain_id, id",
    ),  # fmt: skip
    Table("graph_edges", ("brain_id", "source", "target", "type"), order="brain_id, source, type"),
    Table(
        "graph_timeline",
        ("brain_id", "doc_id", "entry_id", "at", "text", "source"),
        order="brain_id, doc_id, entry_id",
    ),
    Table(
        "graph_versions",
        ("id", "brain_id", "doc_id", "action", "actor", "content", "content_hash", "created_at"),
    ),
    Table(
        "slack_identities",
        ("team_id", "slack_user_id", "user_id", "brain_id", "created_at"),
        order="team_id, slack_user_id",
    ),
    Table(
        "webhook_secrets",
        ("id", "brain_id", "provider", "prefix", "sealed_secret", "revoked_at", "created_at"),
        order="id",
    ),
    Table(
        "deliveries",
        ("source", "delivery_id", "claimed_at", "done_at"),
        order="source, delivery_id",
    ),
    Table(
        "slack_threads",
        ("team_id", "channel", "thread_ts", "user_id", "brain_id", "conversation_id"),
        order="team_id, channel, thread_ts, user_id",
    ),
)
# Columns the SQLite side computes rather than stores.
SOURCE_SQL = {
    "document_texts": "SELECT t.document_id, d.brain_id, t.text FROM document_texts t"
    " JOIN documents d ON d.id = t.document_id ORDER BY t.document_id",
    "messages": "SELECT m.id, m.conversation_id, c.brain_id, m.role, m.content, m.citations,"
    " m.intent, m.created_at, m.rating, m.rating_reason, m.rated_at"
    " FROM messages m JOIN conversations c ON c.id = m.conversation_id"
    " ORDER BY m.id",
}
IDENTITY_TABLES = (
    "users", "brains", "api_tokens", "invites", "documents", "chunks", "jobs", "conversations",
    "messages", "graph_versions", "webhook_secrets", "document_versions", "sources",
)  # fmt: skip


def _handed_out(source: SqliteStore) -> dict[str, int]:
    """The largest id each AUTOINCREMENT table of the source ever gave, deleted rows' too: the
    copy must not hand a deleted document's or brain's id to a new one."""
    rows = source.db.rows("SELECT name, seq FROM sqlite_sequence")
    return {str(r["name"]): int(r["seq"]) for r in rows}


def _source_rows(source: SqliteStore, table: Table) -> Iterator[tuple[Any, ...]]:
    sql = SOURCE_SQL.get(table.name) or (
        f"SELECT {', '.join(table.columns)} FROM {table.name} ORDER BY {table.order}"
    )
    for row in source.db.conn.execute(sql):
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
            counts[table.name] = _copy_table(cur, source, table, report)
            if table.name == "document_texts":  # chunks need documents and come before jobs
                counts["chunks"] = _copy_chunks(cur, source, report)
                _index_documents(cur)
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


CHUNK_COLUMNS = (
    "c.id", "c.brain_id", "c.document_id", "c.idx", "c.text", "c.heading_path", "c.page",
    "c.line_start", "c.line_end", "c.char_start", "c.char_end", "c.token_count",
    "c.content_hash", "c.embed_hash", "b.embedder_model", "v.vector", "c.region",
    "c.ocr_confidence", "c.time_start", "c.time_end", "b.text_language", "c.language",
)  # fmt: skip


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
    by_document: dict[int, list[tuple[Any, ...]]] = {}
    for row in batch:
        by_document.setdefault(int(row[2]), []).append(row)
    values: list[tuple[Any, ...]] = []
    postings: dict[int, tuple[list[int], list[tuple[Any, int]]]] = {}
    for document_id, chunks in by_document.items():
        brain_id, title = titles[document_id]
        headings = [" / ".join(json.loads(c[5])) for c in chunks]
        terms = lexical.chunk_terms(
            title,
            [
                (heading, str(c[4]), stemmer_for(str(c[20]), c[21]))
                for heading, c in zip(headings, chunks, strict=True)
            ],
        )
        ids, pairs = postings.setdefault(brain_id, ([], []))
        for chunk, term in zip(chunks, terms, strict=True):
            blob = chunk[15]
            vector = np.frombuffer(blob, dtype=np.float32) if blob is not None else None
            values.append(
                (
                    *chunk[:14],
                    chunk[14] if vector is not None else None,
                    len(vector) if vector is not None else None,
                    vector,
                    term[1],
                    *chunk[16:20],
                    chunk[21],
                )
            )
            ids.append(int(chunk[0]))
            pairs.append(term)
    cur.executemany(
        "INSERT INTO chunks(id, brain_id, document_id, idx, text, heading_path, page,"
        " line_start, line_end, char_start, char_end, token_count, content_hash, embed_hash,"
        " embed_model, embed_dims, embedding, lex_length, region, ocr_confidence, time_start,"
        " time_end, language)"
        " VALUES (%s,%s,%s,%s,%s,%s::jsonb,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
        values,
    )
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
