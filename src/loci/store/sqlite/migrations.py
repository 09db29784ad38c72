"""Numbered schema migrations for the SQLite store, each applied in its own transaction.

Append new steps; never edit one that has shipped. The FTS table is contentless (the chunk text
lives once, in `chunks`) with `contentless_delete` so a document's rows can be removed by rowid.
Its `brain` column carries a per-brain token so the MATCH itself is scoped to one brain.
"""

from __future__ import annotations

from loci.store.sqlite.connection import Database

MIGRATIONS: list[str] = [
    # 1: the core schema
    """
    CREATE TABLE brains (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        embedder_model TEXT,
        embedder_dims INTEGER,
        generation INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE TABLE documents (
        id INTEGER PRIMARY KEY,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        title TEXT,
        source_url TEXT,
        mime_type TEXT,
        size_bytes INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        status TEXT NOT NULL,
        status_reason TEXT,
        chunk_count INTEGER NOT NULL DEFAULT 0,
        tags TEXT NOT NULL DEFAULT '[]',
        metadata TEXT NOT NULL DEFAULT '{}',
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        UNIQUE (brain_id, content_hash)
    );
    CREATE INDEX documents_brain_status ON documents(brain_id, status);
    CREATE TABLE document_texts (
        document_id INTEGER PRIMARY KEY REFERENCES documents(id) ON DELETE CASCADE,
        text TEXT NOT NULL
    );
    CREATE TABLE chunks (
        id INTEGER PRIMARY KEY,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        idx INTEGER NOT NULL,
        text TEXT NOT NULL,
        heading_path TEXT NOT NULL DEFAULT '[]',
        page INTEGER,
        line_start INTEGER,
        line_end INTEGER,
        char_start INTEGER NOT NULL,
        char_end INTEGER NOT NULL,
        token_count INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        embed_hash TEXT NOT NULL,
        UNIQUE (document_id, idx)
    );
    CREATE INDEX chunks_brain ON chunks(brain_id);
    CREATE INDEX chunks_embed_hash ON chunks(embed_hash);
    CREATE TABLE vectors (
        model TEXT NOT NULL,
        hash TEXT NOT NULL,
        vector BLOB NOT NULL,
        PRIMARY KEY (model, hash)
    ) WITHOUT ROWID;
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        brain, title, headings, body,
        content='', contentless_delete=1,
        tokenize='porter unicode61 remove_diacritics 2'
    );
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        kind TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'queued',
        attempts INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        run_after REAL NOT NULL DEFAULT 0,
        lease_owner TEXT,
        lease_expires REAL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX jobs_claim ON jobs(status, run_after);
    CREATE INDEX jobs_document ON jobs(document_id);
    """,
    # 2: a log of chunk ids added or removed, so derived in-memory indexes (the BM25 index of a
    # large brain) catch up with a change instead of rebuilding. Triggers keep every write path
    # honest; readers only need the ids, since they re-read whatever still exists.
    """
    CREATE TABLE chunk_log (
        seq INTEGER PRIMARY KEY,
        brain_id INTEGER NOT NULL,
        chunk_id INTEGER NOT NULL
    );
    CREATE INDEX chunk_log_brain ON chunk_log(brain_id, seq);
    CREATE TRIGGER chunks_logged_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunk_log(brain_id, chunk_id) VALUES (new.brain_id, new.id);
    END;
    CREATE TRIGGER chunks_logged_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunk_log(brain_id, chunk_id) VALUES (old.brain_id, old.id);
    END;
    """,
]


def migrate(db: Database) -> int:
    """Apply pending migrations; returns the schema version. Safe to race from two processes."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY,"
        " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"
    )
    for number, sql in enumerate(MIGRATIONS, start=1):
        if db.scalar("SELECT 1 FROM schema_migrations WHERE version = ?", (number,)):
            continue
        with db.write() as conn:
            # Re-check under the write lock: another process may have applied it meanwhile.
            done = conn.execute(
                "SELECT 1 FROM schema_migrations WHERE version = ?", (number,)
            ).fetchall()
            if done:
                continue
            conn.execute(sql)
            conn.execute("INSERT INTO schema_migrations(version) VALUES (?)", (number,))
    return len(MIGRATIONS)
