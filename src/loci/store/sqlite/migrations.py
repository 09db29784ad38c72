"""Numbered schema migrations for the SQLite store, each applied in its own transaction.

These 33 steps are the frozen baseline: never edit one that has shipped. A new step is written
once for both backends in `loci.store.schema` (`STEPS`), which is appended here. The FTS table
is contentless (the chunk text lives once, in `chunks`) with `contentless_delete` so a
document's rows can be removed by rowid. Its `brain` column carries a per-brain token so the
MATCH itself is scoped to one brain.
"""

from __future__ import annotations

from collections.abc import Callable

import apsw

from loci.store.schema import SQLITE, STEPS, Step
from loci.store.sqlite.connection import Database
from loci.store.sqlite.identities import never_reuse_ids
from loci.store.sqlite.stemmed_fts import add_languages

# A step is SQL, or a function of the connection for one SQL alone cannot write (a rebuild that
# reads the tables' current definitions).
Migration = str | Callable[[apsw.Connection], None]
# Steps that rebuild tables others refer to: they run with foreign keys off, as SQLite's
# procedure for rebuilding a table asks (dropping a parent would cascade otherwise), and check
# the keys themselves before committing.
REBUILDS = frozenset({15})

MIGRATIONS: list[Migration] = [
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
    # 2: accounts — users, brain members and visibility, API tokens (hashes only), web sessions
    """
    ALTER TABLE brains ADD COLUMN visibility TEXT NOT NULL DEFAULT 'restricted';
    CREATE TABLE users (
        id INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        is_admin INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE TABLE brain_members (
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (brain_id, user_id)
    );
    CREATE INDEX brain_members_user ON brain_members(user_id);
    CREATE TABLE api_tokens (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        name TEXT NOT NULL,
        prefix TEXT NOT NULL,
        secret_hash TEXT NOT NULL UNIQUE,
        scope TEXT NOT NULL,
        brain_ids TEXT,
        expires_at REAL,
        last_used_at REAL,
        revoked_at REAL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX api_tokens_user ON api_tokens(user_id);
    CREATE TABLE web_sessions (
        secret_hash TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        token_id INTEGER NOT NULL REFERENCES api_tokens(id) ON DELETE CASCADE,
        csrf TEXT NOT NULL,
        expires_at REAL NOT NULL
    );
    """,
    # 3: conversations with `ask`, per brain and user (user NULL: the local CLI)
    """
    CREATE TABLE conversations (
        id INTEGER PRIMARY KEY,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        user_id INTEGER REFERENCES users(id) ON DELETE CASCADE,
        title TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX conversations_owner ON conversations(brain_id, user_id, updated_at);
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        citations TEXT NOT NULL DEFAULT '[]',
        intent TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX messages_conversation ON messages(conversation_id, id);
    """,
    # 4: a user's own chat model ("bring your own key"); the key only ever sealed
    """
    CREATE TABLE user_llm (
        user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
        base_url TEXT NOT NULL,
        model TEXT NOT NULL,
        fallback_models TEXT NOT NULL DEFAULT '[]',
        sealed_api_key TEXT,
        updated_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    """,
    # 5: the brain graph — Markdown documents keyed by (brain, id), their derived
    # edges and timeline entries, and the versions every overwrite and delete leaves behind.
    # The CHECK is the graph's one structural rule: evidence under evidence/, pages outside it.
    """
    CREATE TABLE graph_documents (
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        id TEXT NOT NULL,
        kind TEXT NOT NULL CHECK (kind IN ('page', 'evidence')),
        type TEXT NOT NULL,
        folder TEXT NOT NULL,
        status TEXT NOT NULL,
        title TEXT NOT NULL,
        aliases TEXT NOT NULL DEFAULT '[]',
        merged_into TEXT,
        created TEXT NOT NULL,
        updated TEXT NOT NULL,
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        document_id INTEGER UNIQUE REFERENCES documents(id) ON DELETE SET NULL,
        PRIMARY KEY (brain_id, id),
        CHECK ((kind = 'evidence') = (folder = 'evidence' OR folder LIKE 'evidence/%'))
    );
    CREATE INDEX graph_documents_folder ON graph_documents(brain_id, folder);
    CREATE TABLE graph_edges (
        brain_id INTEGER NOT NULL,
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        type TEXT NOT NULL,
        PRIMARY KEY (brain_id, source, type, target),
        FOREIGN KEY (brain_id, source) REFERENCES graph_documents(brain_id, id) ON DELETE CASCADE
    ) WITHOUT ROWID;
    CREATE INDEX graph_edges_target ON graph_edges(brain_id, target);
    CREATE TABLE graph_timeline (
        brain_id INTEGER NOT NULL,
        doc_id TEXT NOT NULL,
        entry_id TEXT NOT NULL,
        at TEXT NOT NULL,
        text TEXT NOT NULL,
        source TEXT,
        PRIMARY KEY (brain_id, doc_id, entry_id),
        FOREIGN KEY (brain_id, doc_id) REFERENCES graph_documents(brain_id, id) ON DELETE CASCADE
    ) WITHOUT ROWID;
    CREATE INDEX graph_timeline_at ON graph_timeline(brain_id, at);
    CREATE TABLE graph_versions (
        id INTEGER PRIMARY KEY,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        doc_id TEXT NOT NULL,
        action TEXT NOT NULL,
        actor TEXT NOT NULL,
        content TEXT NOT NULL,
        content_hash TEXT NOT NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX graph_versions_doc ON graph_versions(brain_id, doc_id, id);
    """,
    # 6: a log of chunk ids added or removed, so derived in-memory indexes (the BM25 index of a
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
    # 7: pushes from outside — Slack users linked to a Loci user and brain, per-integration
    # webhook signing secrets (sealed with the server's key: verifying an HMAC needs the secret
    # itself, so a hash would not do), and the delivery ids already handled (Slack's event_id)
    # with a lease, so a retry is skipped but a crashed handler's claim expires.
    """
    CREATE TABLE slack_identities (
        team_id TEXT NOT NULL,
        slack_user_id TEXT NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (team_id, slack_user_id)
    );
    CREATE TABLE webhook_secrets (
        id INTEGER PRIMARY KEY,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        provider TEXT NOT NULL,
        prefix TEXT NOT NULL,
        sealed_secret TEXT NOT NULL,
        revoked_at REAL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX webhook_secrets_target ON webhook_secrets(brain_id, provider);
    CREATE TABLE deliveries (
        source TEXT NOT NULL,
        delivery_id TEXT NOT NULL,
        claimed_at REAL NOT NULL,
        done_at REAL,
        PRIMARY KEY (source, delivery_id)
    ) WITHOUT ROWID;
    CREATE INDEX deliveries_claimed ON deliveries(claimed_at);
    """,
    # 8: where OCR text sits on its
    # page ("left,top,right,bottom" as fractions) and how sure the engine was, for citations.
    """
    ALTER TABLE chunks ADD COLUMN region TEXT;
    ALTER TABLE chunks ADD COLUMN ocr_confidence REAL;
    """,
    # 9: the chunk log is pruned (chunk_log.py). Its seq becomes AUTOINCREMENT so a number is
    # never reused once the entries at the top are gone; each brain keeps the floor it was
    # pruned to, so a reader further behind knows to rebuild; and a deleted brain's entries go
    # with it (the AFTER trigger runs once the cascade has deleted, and logged, its chunks).
    """
    DROP TRIGGER chunks_logged_insert;
    DROP TRIGGER chunks_logged_delete;
    CREATE TABLE chunk_log_new (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        brain_id INTEGER NOT NULL,
        chunk_id INTEGER NOT NULL
    );
    INSERT INTO chunk_log_new(seq, brain_id, chunk_id)
        SELECT seq, brain_id, chunk_id FROM chunk_log ORDER BY seq;
    DELETE FROM chunk_log_new WHERE brain_id NOT IN (SELECT id FROM brains);
    DROP TABLE chunk_log;
    ALTER TABLE chunk_log_new RENAME TO chunk_log;
    CREATE INDEX chunk_log_brain ON chunk_log(brain_id, seq);
    CREATE TRIGGER chunks_logged_insert AFTER INSERT ON chunks BEGIN
        INSERT INTO chunk_log(brain_id, chunk_id) VALUES (new.brain_id, new.id);
    END;
    CREATE TRIGGER chunks_logged_delete AFTER DELETE ON chunks BEGIN
        INSERT INTO chunk_log(brain_id, chunk_id) VALUES (old.brain_id, old.id);
    END;
    CREATE TABLE chunk_log_floor (
        brain_id INTEGER PRIMARY KEY REFERENCES brains(id) ON DELETE CASCADE,
        seq INTEGER NOT NULL
    );
    CREATE TRIGGER brains_log_forget AFTER DELETE ON brains BEGIN
        DELETE FROM chunk_log WHERE brain_id = old.id;
    END;
    """,
    # 10: a web page saved again is found by its address (and refreshed, not kept twice).
    """
    CREATE INDEX documents_source ON documents(brain_id, source_url) WHERE source_url IS NOT NULL;
    """,
    # 11: a passage transcribed from a recording is cited by when it was said (seconds).
    """
    ALTER TABLE chunks ADD COLUMN time_start REAL;
    ALTER TABLE chunks ADD COLUMN time_end REAL;
    """,
    # 12: people sign in with a password too (an scrypt hash that names its parameters), are
    # invited by a one-time link (only its hash kept) and can be disabled. A password sign-in
    # opens its session with a token of kind 'session', which the token list does not show.
    """
    ALTER TABLE users ADD COLUMN email TEXT;
    ALTER TABLE users ADD COLUMN password_hash TEXT;
    ALTER TABLE users ADD COLUMN disabled_at REAL;
    ALTER TABLE api_tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'api';
    CREATE TABLE invites (
        id INTEGER PRIMARY KEY,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        secret_hash TEXT NOT NULL UNIQUE,
        expires_at REAL NOT NULL,
        used_at REAL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX invites_user ON invites(user_id);
    """,
    # 13: an answer's rating by the conversation's owner (up or down, and why), on the message
    # itself: rating again replaces it, and deleting the conversation takes it along.
    """
    ALTER TABLE messages ADD COLUMN rating TEXT CHECK (rating IN ('up', 'down'));
    ALTER TABLE messages ADD COLUMN rating_reason TEXT;
    ALTER TABLE messages ADD COLUMN rated_at TEXT;
    CREATE INDEX messages_rated ON messages(rating, conversation_id) WHERE rating IS NOT NULL;
    """,
    # 14: a Slack thread where someone asks Loci is one conversation of theirs: follow-ups in
    # the thread continue it. Deleting the conversation (or the user, or the brain) forgets it.
    """
    CREATE TABLE slack_threads (
        team_id TEXT NOT NULL,
        channel TEXT NOT NULL,
        thread_ts TEXT NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
        PRIMARY KEY (team_id, channel, thread_ts, user_id)
    ) WITHOUT ROWID;
    CREATE INDEX slack_threads_conversation ON slack_threads(conversation_id);
    """,
    # 15: ids are never handed out twice — a deleted brain's id given to the next brain made a
    # token limited to it a token for the newcomer (see identities.py).
    never_reuse_ids,
    # 16: every script a person writes in (`loci.store.text_analysis`): the FTS table was made
    # again with marks as token characters. Migration 28 rebuilds it once more, for stemming
    # by language, and does all this did: a database not yet at 16 is rebuilt only there.
    "SELECT 1",
    # 17: a file added from a path is that path's document: adding the path again after an edit
    # updates it (same id) instead of keeping both versions.
    """
    ALTER TABLE documents ADD COLUMN source_path TEXT;
    CREATE INDEX documents_source_path ON documents(brain_id, source_path)
        WHERE source_path IS NOT NULL;
    """,
    # 18: folders a brain follows (`loci sources add`): `loci sync` reconciles each with the
    # documents whose source_path lies under it. Ids are never reused, so a script holding a
    # removed source's id cannot reach the next one.
    """
    CREATE TABLE sources (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        path TEXT NOT NULL,
        include_globs TEXT NOT NULL DEFAULT '[]',
        exclude_globs TEXT NOT NULL DEFAULT '[]',
        on_delete TEXT NOT NULL DEFAULT 'remove' CHECK (on_delete IN ('remove', 'keep')),
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        last_sync_at TEXT,
        last_report TEXT,
        UNIQUE (brain_id, path)
    );
    """,
    # 19: a document's earlier contents (`loci show ID --versions`): when a file, note or web
    # page is replaced in place, the bytes it had stay as a blob this row points at, so they
    # can be listed, diffed and restored; `unused` counts them as in use. Numbered per
    # document; a retention setting drops the oldest.
    """
    CREATE TABLE document_versions (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        document_id INTEGER NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        number INTEGER NOT NULL,
        name TEXT NOT NULL,
        mime_type TEXT,
        size_bytes INTEGER NOT NULL,
        content_hash TEXT NOT NULL,
        saved_at TEXT NOT NULL,
        replaced_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        UNIQUE (document_id, number)
    );
    CREATE INDEX document_versions_hash ON document_versions(content_hash);
    """,
    # 20: a folder followed as pages (`loci sources add VAULT --as pages`): its Markdown files
    # are graph pages kept in step both ways. `source_pages` is that sync's manifest: per page,
    # its file and the hashes of both at the last sync, so an edit on either side is told from
    # the other, and an edit on both is a conflict.
    """
    ALTER TABLE sources ADD COLUMN mode TEXT NOT NULL DEFAULT 'files'
        CHECK (mode IN ('files', 'pages'));
    CREATE TABLE source_pages (
        source_id INTEGER NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        doc_id TEXT NOT NULL,
        path TEXT NOT NULL,
        page_hash TEXT NOT NULL,
        file_hash TEXT,
        PRIMARY KEY (source_id, doc_id)
    ) WITHOUT ROWID;
    """,
    # 21: Loci as an OAuth 2.1 authorization server (`loci.auth.oauth`): registered clients,
    # authorization codes and refresh tokens, each secret kept only as its hash. The access
    # token an application holds is an ordinary API token naming its client and resource.
    """
    CREATE TABLE oauth_clients (
        client_id TEXT PRIMARY KEY,
        name TEXT NOT NULL,
        redirect_uris TEXT NOT NULL,
        grant_types TEXT NOT NULL,
        auth_method TEXT NOT NULL,
        secret_hash TEXT,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    ALTER TABLE api_tokens ADD COLUMN client_id TEXT
        REFERENCES oauth_clients(client_id) ON DELETE CASCADE;
    ALTER TABLE api_tokens ADD COLUMN resource TEXT;
    CREATE INDEX api_tokens_client ON api_tokens(client_id) WHERE client_id IS NOT NULL;
    CREATE TABLE oauth_codes (
        code_hash TEXT PRIMARY KEY,
        client_id TEXT NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        redirect_uri TEXT NOT NULL,
        scope TEXT NOT NULL,
        brain_ids TEXT,
        resource TEXT NOT NULL,
        code_challenge TEXT NOT NULL,
        expires_at REAL NOT NULL,
        used_at REAL,
        token_id INTEGER REFERENCES api_tokens(id) ON DELETE SET NULL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX oauth_codes_client ON oauth_codes(client_id);
    CREATE INDEX oauth_codes_user ON oauth_codes(user_id);
    CREATE TABLE oauth_refresh_tokens (
        secret_hash TEXT PRIMARY KEY,
        token_id INTEGER NOT NULL REFERENCES api_tokens(id) ON DELETE CASCADE,
        expires_at REAL NOT NULL,
        used_at REAL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX oauth_refresh_tokens_token ON oauth_refresh_tokens(token_id);
    """,
    # 22: single sign-on (`loci.auth.sso`): an account at an identity provider (its issuer's
    # name in Loci and the subject it gives) belongs to one Loci user.
    """
    CREATE TABLE user_identities (
        provider TEXT NOT NULL,
        subject TEXT NOT NULL,
        user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
        email TEXT,
        last_sign_in_at REAL,
        created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')),
        PRIMARY KEY (provider, subject)
    );
    CREATE INDEX user_identities_user ON user_identities(user_id);
    """,
    # 23: searchable by words before vectors. An index job runs in two stages — "text" (parse,
    # chunk, write chunks and their text index) then "vectors" — and the queue is ordered: the
    # text stage of every queued job first, then by `priority` (when the job entered its
    # stage plus its estimated cost, so small files go first and a big one still gets its
    # turn). A document whose chunks are written but not all embedded is `vectors_pending`;
    # `progress` says what it is doing ({"stage", "done", "total"}). A vector written to a
    # chunk later is logged (`vectors_only`) so the vector matrices catch up and the text
    # index does not re-read the chunk. `workers` lists the running workers (`loci serve`,
    # `loci worker`) by their last heartbeat, so `loci add` can leave embedding to them.
    """
    ALTER TABLE jobs ADD COLUMN stage TEXT NOT NULL DEFAULT 'text'
        CHECK (stage IN ('text', 'vectors'));
    ALTER TABLE jobs ADD COLUMN priority REAL NOT NULL DEFAULT 0;
    ALTER TABLE documents ADD COLUMN vectors_pending INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE documents ADD COLUMN progress TEXT;
    ALTER TABLE chunk_log ADD COLUMN vectors_only INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE workers (
        name TEXT PRIMARY KEY,
        seen_at REAL NOT NULL
    );
    """,
    # 24: who watches which folder (`loci.store.watch_tables`): one lease a source, renewed by
    # the process that watches it, so two processes never watch the same folder.
    """
    CREATE TABLE source_watches (
        source_id INTEGER PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
        brain_id INTEGER NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        owner TEXT NOT NULL,
        mode TEXT NOT NULL CHECK (mode IN ('events', 'poll')),
        lease_until REAL NOT NULL,
        since TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now'))
    );
    CREATE INDEX source_watches_owner ON source_watches(owner);
    """,
    # 25: one document a file path: two writers adding the same path at once (a watcher and a
    # sync in another process) cannot make two; the second updates the first. A path that
    # already has two keeps the oldest (the one citations point at); the others stay as
    # documents that no longer follow the file.
    """
    UPDATE documents SET source_path = NULL WHERE source_path IS NOT NULL AND id NOT IN (
        SELECT min(id) FROM documents WHERE source_path IS NOT NULL
        GROUP BY brain_id, source_path
    );
    DROP INDEX documents_source_path;
    CREATE UNIQUE INDEX documents_source_path ON documents(brain_id, source_path)
        WHERE source_path IS NOT NULL;
    """,
    # 26: why a document failed, as the code of the error (`loci.errors`) beside its message:
    # what a person can do about it follows from the code (`loci.failure_advice`) — a retry
    # helps a model server that did not answer, never a file no parser reads.
    "ALTER TABLE documents ADD COLUMN failure_code TEXT",
    # 27: where a conversation was started (web, api, cli, mcp, slack), so the web app can say
    # so when it lists the conversations a person had elsewhere. NULL: before it was kept.
    "ALTER TABLE conversations ADD COLUMN origin TEXT",
    # 28: languages (`loci.language`, `loci.store.stemming`): a brain's stemming language
    # ('auto': each passage in its own), each document's and passage's detected language, and
    # the FTS table again, holding text stemmed in Python as PostgreSQL's terms are.
    add_languages,
    # 29: brain and user names in any script (`loci.names`): a user is found by the key of
    # their name, kept beside it and unique, which Python folds (no backend folds 'Ü' as
    # Python does). Names so far are ASCII, whose key is their lower case.
    """
    ALTER TABLE users ADD COLUMN name_key TEXT;
    UPDATE users SET name_key = lower(name);
    CREATE UNIQUE INDEX users_name_key ON users(name_key);
    """,
    # 30: a followed folder's file that was deleted, where the source keeps deleted files'
    # documents: when it was found gone (NULL while the file is there). Its document stays
    # searchable, marked; the file coming back clears it.
    """
    ALTER TABLE documents ADD COLUMN gone_at TEXT;
    """,
    # 31: BM25 over whole documents (`loci.store.document_index`). PostgreSQL keeps their term
    # statistics in tables (its 31); here the in-memory index derives them from the passages
    # as it derives theirs, so the schema does not change.
    "SELECT 1",
    # 32: the queue in the order jobs are claimed (`loci.store.job_order`): a claim read every
    # due job to find the first, 54 ms a claim with 100,000 queued (a large folder's first
    # sync) on PostgreSQL; an index scan stops at the batch's last job.
    "CREATE INDEX jobs_queued ON jobs(stage, priority, id) WHERE status = 'queued'",
    # 33: open OAuth registration is limited per address (`loci.auth.oauth.registration_limits`):
    # the address a client registered from (its /64 for IPv6), counted by the next registrations
    # and forgotten after an hour.
    """
    ALTER TABLE oauth_clients ADD COLUMN registered_from TEXT;
    CREATE INDEX oauth_clients_registered_from ON oauth_clients(registered_from, created_at)
        WHERE registered_from IS NOT NULL;
    """,
]


def _written_once(step: Step) -> Migration:
    """A step of `loci.store.schema.STEPS` as this backend runs it."""
    sql, data = step.sql(SQLITE), step.data(SQLITE)
    if data is None:
        return sql

    def run(conn: apsw.Connection) -> None:
        if sql:
            conn.execute(sql)
        data(conn)

    return run


MIGRATIONS += [_written_once(step) for step in STEPS]


def migrate(db: Database, version: int | None = None) -> int:
    """Apply pending migrations (up to `version`, for a test wanting an older schema); returns
    the schema version. Safe to race from two processes."""
    db.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        " version INTEGER PRIMARY KEY,"
        " applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ','now')))"
    )
    steps = MIGRATIONS if version is None else MIGRATIONS[:version]
    for number, step in enumerate(steps, start=1):
        if db.scalar("SELECT 1 FROM schema_migrations WHERE version = ?", (number,)):
            continue
        rebuild = number in REBUILDS
        if rebuild:  # a no-op inside a transaction: set before it begins
            db.execute("PRAGMA foreign_keys=OFF")
        try:
            _apply(db, number, step)
        finally:
            if rebuild:
                db.execute("PRAGMA foreign_keys=ON")
    return len(steps)


def _apply(db: Database, number: int, step: Migration) -> None:
    with db.write() as conn:
        # Re-check under the write lock: another process may have applied it meanwhile.
        done = conn.execute(
            "SELECT 1 FROM schema_migrations WHERE version = ?", (number,)
        ).fetchall()
        if done:
            return
        if isinstance(step, str):
            conn.execute(step)
        else:
            step(conn)
        conn.execute("INSERT INTO schema_migrations(version) VALUES (?)", (number,))
