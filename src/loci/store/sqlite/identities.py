"""Migration 15: ids that are never handed out twice.

A table whose key is a bare `INTEGER PRIMARY KEY` gives a new row one more than the largest id
in use, so deleting the newest brain or document frees its id for the next one — and a token
limited to that brain, or a `file:27` pointer to that document, silently points at the newcomer.
`AUTOINCREMENT` keeps the high-water mark in `sqlite_sequence` instead. SQLite cannot alter a
key into it, so each table is rebuilt from its own stored definition (whatever columns later
migrations added), its rows copied with their ids, its indexes and triggers made again, and its
high-water mark set to the largest id it holds (an id freed before this migration ran is
unknowable; every one handed out from now on is new).

The rebuild runs with foreign keys off (so dropping a parent table cascades nothing) and checks
every foreign key before it commits. Token scopes are cleaned on the way: an id that names no
brain, or a brain created after the token was (so not the one it was given), is dropped from the
token, and a token left with no brain at all is revoked.
"""

from __future__ import annotations

import json
import re
import time

import apsw

from loci.errors import StoreError
from loci.store.sqlite.connection import rows_of

# The tables whose ids people and programs hold on to: in links, citations, tokens, scripts.
# Chunks are left out: a citation names its document, and re-chunking replaces every chunk id
# of a document anyway.
TABLES = (
    "brains",
    "documents",
    "jobs",
    "users",
    "api_tokens",
    "invites",
    "conversations",
    "messages",
    "graph_versions",
    "webhook_secrets",
)
_KEY = re.compile(r"\bid\s+INTEGER\s+PRIMARY\s+KEY\b(?!\s+AUTOINCREMENT)", re.IGNORECASE)


def never_reuse_ids(conn: apsw.Connection) -> None:
    """Rebuild `TABLES` with AUTOINCREMENT keys; run inside the migration's transaction, with
    foreign keys off (see `needs_foreign_keys_off`)."""
    for table in TABLES:
        _rebuild(conn, table)
    broken = rows_of(conn, "PRAGMA foreign_key_check")
    if broken:
        raise StoreError(f"migration 15 would break foreign keys ({broken[:3]}); nothing changed")
    _clean_token_scopes(conn)


def _rebuild(conn: apsw.Connection, table: str) -> None:
    found = rows_of(
        conn, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?", (table,)
    )
    if not found:
        raise StoreError(f"migration 15: the table {table} is missing")
    create = str(found[0]["sql"])
    if _KEY.search(create) is None:
        return  # already AUTOINCREMENT
    header = re.compile(rf'^CREATE TABLE\s+"?{table}"?\s*\(', re.IGNORECASE)
    if header.match(create) is None:
        raise StoreError(f"migration 15: cannot read the definition of {table}")
    rebuilt = _KEY.sub("id INTEGER PRIMARY KEY AUTOINCREMENT", header.sub("", create, 1), 1)
    # Indexes and triggers go with the dropped table; their own SQL makes them again.
    dependents = [
        str(r["sql"])
        for r in rows_of(
            conn,
            "SELECT sql FROM sqlite_schema WHERE tbl_name = ? AND type IN ('index', 'trigger')"
            " AND sql IS NOT NULL ORDER BY type, name",
            (table,),
        )
    ]
    columns = ", ".join(f'"{r["name"]}"' for r in rows_of(conn, f'PRAGMA table_info("{table}")'))
    conn.execute(f'CREATE TABLE "{table}_rebuilt" ({rebuilt}')
    conn.execute(
        f'INSERT INTO "{table}_rebuilt" ({columns}) SELECT {columns} FROM "{table}" ORDER BY id'
    )
    conn.execute(f'DROP TABLE "{table}"')
    conn.execute(f'ALTER TABLE "{table}_rebuilt" RENAME TO "{table}"')
    for sql in dependents:
        conn.execute(sql)
    # Copying the ids already raised the mark to the largest; say so whatever SQLite did.
    conn.execute("DELETE FROM sqlite_sequence WHERE name IN (?, ?)", (table, f"{table}_rebuilt"))
    conn.execute(
        f'INSERT INTO sqlite_sequence(name, seq) SELECT ?, coalesce(max(id), 0) FROM "{table}"',
        (table,),
    )


def _clean_token_scopes(conn: apsw.Connection) -> None:
    brains = {
        int(r["id"]): str(r["created_at"])
        for r in rows_of(conn, "SELECT id, created_at FROM brains")
    }
    tokens = rows_of(
        conn,
        "SELECT id, brain_ids, created_at, revoked_at FROM api_tokens WHERE brain_ids IS NOT NULL",
    )
    now = time.time()
    for token in tokens:
        scope = [int(b) for b in json.loads(token["brain_ids"])]
        # A token is only ever given brains that exist: one created after it reused an id.
        kept = [b for b in scope if b in brains and brains[b] <= str(token["created_at"])]
        if kept == scope:
            continue
        revoke = not kept and token["revoked_at"] is None
        conn.execute(
            "UPDATE api_tokens SET brain_ids = ?, revoked_at = ? WHERE id = ?",
            (json.dumps(kept), now if revoke else token["revoked_at"], token["id"]),
        )
        if revoke:
            conn.execute("DELETE FROM web_sessions WHERE token_id = ?", (token["id"],))
