"""The tables of both stores as they stand after the last migration, and each backend's own
objects beside them (see `loci.store.schema` for how they are used and changed)."""

from __future__ import annotations

from loci.store.schema.spec import (
    BIGINT,
    BOOL,
    BYTES,
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
    Default,
    Dialect,
    ForeignKey,
    Index,
    Table,
)
from loci.store.stemming import FTS_TOKENIZE_SQL


def _brain(only: Dialect | None = None) -> Column:
    return Column("brain_id", BIGINT, nullable=False, references="brains.id", only=only)


def _user(nullable: bool = False) -> Column:
    return Column("user_id", BIGINT, nullable=nullable, references="users.id")


def _created(name: str = "created_at") -> Column:
    return Column(name, TEXT, nullable=False, default=NOW)


def _text(name: str, default: Default = None, check: str = "") -> Column:
    return Column(name, TEXT, nullable=False, default=default, check=check)


# In dependency order (a table after those it points at), which is also the order
# `loci migrate` copies them in.
TABLES: tuple[Table, ...] = (
    Table(
        "users",
        (
            Column("id", KEY),
            Column("name", TEXT, nullable=False, unique_nocase=True),
            Column("is_admin", BOOL, nullable=False, default=False),
            _created(),
            Column("email", TEXT),
            Column("password_hash", TEXT),  # scrypt, naming its parameters
            Column("disabled_at", REAL),
            Column("name_key", TEXT),  # how the name is found (`loci.names`), unique
        ),
        indexes=(Index("users_name_key", "name_key", unique=True),),
        autoincrement=True,
    ),
    Table(
        "brains",
        (
            Column("id", KEY),
            Column("name", TEXT, nullable=False, unique=True),
            Column("embedder_model", TEXT),
            Column("embedder_dims", INT),
            Column("generation", BIGINT, nullable=False, default=0),
            _created(),
            _text("visibility", "restricted"),
            # how BM25 stems the brain's words (`loci.store.stemming`): 'auto' (each passage in
            # its detected language), a Snowball stemmer's name or 'simple'
            _text("text_language", "auto"),
        ),
        rls="brain",
        brain_key="id",
        autoincrement=True,
    ),
    Table(
        "brain_members",
        (_brain(), _user(), _text("role"), _created()),
        primary_key=("brain_id", "user_id"),
        indexes=(Index("brain_members_user", "user_id"),),
        rls="brain",
    ),
    Table(
        "oauth_clients",
        (
            Column("client_id", TEXT),
            _text("name"),
            Column("redirect_uris", JSON, nullable=False),
            Column("grant_types", JSON, nullable=False),
            _text("auth_method"),
            Column("secret_hash", TEXT),
            _created(),
            Column("registered_from", TEXT),  # an address (IPv6: its /64), for rate limits
        ),
        primary_key=("client_id",),
        indexes=(
            Index(
                "oauth_clients_registered_from",
                "registered_from, created_at",
                where="registered_from IS NOT NULL",
            ),
        ),
        rls="system",
    ),
    Table(
        "api_tokens",
        (
            Column("id", KEY),
            _user(),
            _text("name"),
            _text("prefix"),
            Column("secret_hash", TEXT, nullable=False, unique=True),
            _text("scope"),
            Column("brain_ids", JSON),
            Column("expires_at", REAL),
            Column("last_used_at", REAL),
            Column("revoked_at", REAL),
            _created(),
            _text("kind", "api"),
            Column("client_id", TEXT, references="oauth_clients.client_id"),
            Column("resource", TEXT),
        ),
        indexes=(
            Index("api_tokens_user", "user_id"),
            Index("api_tokens_client", "client_id", where="client_id IS NOT NULL"),
        ),
        autoincrement=True,
    ),
    Table(
        "oauth_codes",
        (
            Column("code_hash", TEXT),
            Column("client_id", TEXT, nullable=False, references="oauth_clients.client_id"),
            _user(),
            _text("redirect_uri"),
            _text("scope"),
            Column("brain_ids", JSON),
            _text("resource"),
            _text("code_challenge"),
            Column("expires_at", REAL, nullable=False),
            Column("used_at", REAL),
            Column("token_id", BIGINT, references="api_tokens.id", on_delete="SET NULL"),
            _created(),
        ),
        primary_key=("code_hash",),
        indexes=(Index("oauth_codes_client", "client_id"), Index("oauth_codes_user", "user_id")),
        rls="system",
    ),
    Table(
        "user_identities",
        (
            _text("provider"),
            _text("subject"),
            _user(),
            Column("email", TEXT),
            Column("last_sign_in_at", REAL),
            _created(),
        ),
        primary_key=("provider", "subject"),
        indexes=(Index("user_identities_user", "user_id"),),
        rls="system",
    ),
    Table(
        "oauth_refresh_tokens",
        (
            Column("secret_hash", TEXT),
            Column("token_id", BIGINT, nullable=False, references="api_tokens.id"),
            Column("expires_at", REAL, nullable=False),
            Column("used_at", REAL),
            _created(),
        ),
        primary_key=("secret_hash",),
        indexes=(Index("oauth_refresh_tokens_token", "token_id"),),
        rls="system",
    ),
    Table(
        "invites",
        (
            Column("id", KEY),
            _user(),
            Column("secret_hash", TEXT, nullable=False, unique=True),
            Column("expires_at", REAL, nullable=False),
            Column("used_at", REAL),
            _created(),
        ),
        indexes=(Index("invites_user", "user_id"),),
        rls="system",
        autoincrement=True,
    ),
    Table(
        "web_sessions",
        (
            Column("secret_hash", TEXT),
            _user(),
            Column("token_id", BIGINT, nullable=False, references="api_tokens.id"),
            _text("csrf"),
            Column("expires_at", REAL, nullable=False),
        ),
        primary_key=("secret_hash",),
    ),
    Table(
        "user_llm",
        (
            Column("user_id", BIGINT, references="users.id"),
            _text("base_url"),
            _text("model"),
            Column("fallback_models", JSON, nullable=False, default="[]"),
            Column("sealed_api_key", TEXT),
            _created("updated_at"),
        ),
        primary_key=("user_id",),
    ),
    Table(
        "documents",
        (
            Column("id", KEY),
            _brain(),
            _text("kind"),
            _text("name"),
            Column("title", TEXT),
            Column("source_url", TEXT),
            Column("mime_type", TEXT),
            Column("size_bytes", BIGINT, nullable=False),
            _text("content_hash"),
            _text("status"),
            Column("status_reason", TEXT),
            Column("chunk_count", INT, nullable=False, default=0),
            Column("tags", JSON, nullable=False, default="[]"),
            Column("metadata", JSON_ORDERED, nullable=False, default="{}"),
            _created(),
            _created("updated_at"),
            Column("source_path", TEXT),
            Column("vectors_pending", BOOL, nullable=False, default=False),
            Column("progress", JSON),
            Column("failure_code", TEXT),
            Column("language", TEXT),
            Column("gone_at", TEXT),
            # the document's BM25 length (SQLite's in-memory index derives it)
            Column("lex_length", INT, nullable=False, default=0, only=POSTGRES),
            # Its identity in the place it came from, stable across runs ("notion:<page id>",
            # "feed:12:<entry id>"): importing or syncing that place again updates it in place.
            Column("origin", TEXT),
        ),
        unique=(("brain_id", "content_hash"),),
        indexes=(
            Index("documents_brain_status", "brain_id, status"),
            Index("documents_hash", "content_hash", only=POSTGRES),
            Index("documents_source", "brain_id, source_url", where="source_url IS NOT NULL"),
            Index(
                "documents_source_path",
                "brain_id, source_path",
                unique=True,
                where="source_path IS NOT NULL",
            ),
            Index("documents_language", "brain_id, language"),
            Index("documents_origin", "brain_id, origin", unique=True, where="origin IS NOT NULL"),
        ),
        rls="brain",
        autoincrement=True,
    ),
    Table(
        "document_texts",
        (
            Column("document_id", BIGINT, references="documents.id"),
            _brain(only=POSTGRES),  # row-level security checks the brain on every row
            _text("text"),
        ),
        primary_key=("document_id",),
        rls="brain",
    ),
    Table(
        "chunks",
        (
            Column("id", KEY),
            _brain(),
            Column("document_id", BIGINT, nullable=False, references="documents.id"),
            Column("idx", INT, nullable=False),
            _text("text"),
            Column("heading_path", JSON, nullable=False, default="[]"),
            Column("page", INT),
            Column("line_start", INT),
            Column("line_end", INT),
            Column("char_start", INT, nullable=False),
            Column("char_end", INT, nullable=False),
            Column("token_count", INT, nullable=False),
            _text("content_hash"),
            _text("embed_hash"),
            # pgvector keeps the vector in the row (SQLite: the `vectors` table, by hash)
            Column("embed_model", TEXT, only=POSTGRES),
            Column("embed_dims", INT, only=POSTGRES),
            Column("embedding", VECTOR, only=POSTGRES),
            # BM25 length: tokens of title, headings, body
            Column("lex_length", INT, nullable=False, default=0, only=POSTGRES),
            Column("region", TEXT),  # OCR: "left,top,right,bottom" as fractions of the page
            Column("ocr_confidence", REAL),
            Column("time_start", REAL),  # a transcript's span in its recording (seconds)
            Column("time_end", REAL),
            Column("language", TEXT),
        ),
        unique=(("document_id", "idx"),),
        indexes=(Index("chunks_brain", "brain_id"), Index("chunks_embed_hash", "embed_hash")),
        rls="brain",
    ),
    # SQLite: vectors cached by what was embedded, shared by every chunk with that input.
    Table(
        "vectors",
        (_text("model"), _text("hash"), Column("vector", BYTES, nullable=False)),
        primary_key=("model", "hash"),
        without_rowid=True,
        only=SQLITE,
    ),
    # SQLite: chunk ids added or removed, so each process's in-memory indexes catch up
    # (`loci.store.sqlite.chunk_log`); filled by triggers (`SQLITE_OBJECTS`).
    Table(
        "chunk_log",
        (
            Column("seq", KEY),
            Column("brain_id", BIGINT, nullable=False),
            Column("chunk_id", BIGINT, nullable=False),
            Column("vectors_only", BOOL, nullable=False, default=False),
        ),
        indexes=(Index("chunk_log_brain", "brain_id, seq"),),
        autoincrement=True,
        only=SQLITE,
    ),
    Table(
        "chunk_log_floor",
        (Column("brain_id", BIGINT, references="brains.id"), Column("seq", BIGINT, nullable=False)),
        primary_key=("brain_id",),
        only=SQLITE,
    ),
    # PostgreSQL: BM25's term statistics, kept on write (its ts_rank is not BM25; SQLite has
    # FTS5): per-brain postings, document frequencies and lengths, for passages and documents.
    Table(
        "chunk_terms",
        (
            _brain(),
            _text("term"),
            Column("chunk_id", BIGINT, nullable=False, references="chunks.id"),
            Column("tf", INT, nullable=False),  # weighted: a title occurrence counts twice
            Column("doc_len", INT, nullable=False),  # the chunk's lex_length: no join needed
            Column("impact", FLOAT4, nullable=False),  # BM25's tf part: orders the postings
        ),
        indexes=(
            # a term's postings, best first, from the index alone
            Index(
                "chunk_terms_impact", "brain_id, term, impact DESC", include="chunk_id, tf, doc_len"
            ),
            Index("chunk_terms_chunk", "chunk_id"),
        ),
        rls="brain",
        only=POSTGRES,
    ),
    Table(
        "term_df",
        (_brain(), _text("term"), Column("df", INT, nullable=False)),
        primary_key=("brain_id", "term"),
        rls="brain",
        only=POSTGRES,
    ),
    Table(
        "lexical_stats",
        (
            Column("brain_id", BIGINT, references="brains.id"),
            Column("chunks", BIGINT, nullable=False, default=0),
            Column("length", BIGINT, nullable=False, default=0),
            Column("documents", BIGINT, nullable=False, default=0),
            Column("document_length", BIGINT, nullable=False, default=0),
        ),
        primary_key=("brain_id",),
        rls="brain",
        only=POSTGRES,
    ),
    Table(
        "document_terms",
        (
            _brain(),
            Column("document_id", BIGINT, nullable=False, references="documents.id"),
            _text("term"),
            Column("tf", INT, nullable=False),
        ),
        primary_key=("document_id", "term"),
        rls="brain",
        only=POSTGRES,
    ),
    Table(
        "document_term_df",
        (_brain(), _text("term"), Column("df", INT, nullable=False)),
        primary_key=("brain_id", "term"),
        rls="brain",
        only=POSTGRES,
    ),
    Table(
        "document_versions",
        (
            Column("id", KEY),
            _brain(),
            Column("document_id", BIGINT, nullable=False, references="documents.id"),
            Column("number", INT, nullable=False),
            _text("name"),
            Column("mime_type", TEXT),
            Column("size_bytes", BIGINT, nullable=False),
            _text("content_hash"),
            _text("saved_at"),
            _created("replaced_at"),
        ),
        unique=(("document_id", "number"),),
        indexes=(Index("document_versions_hash", "content_hash"),),
        rls="brain",
        autoincrement=True,
    ),
    Table(
        "sources",
        (
            Column("id", KEY),
            _brain(),
            _text("path"),
            Column("include_globs", JSON, nullable=False, default="[]"),
            Column("exclude_globs", JSON, nullable=False, default="[]"),
            _text("on_delete", "remove", check="on_delete IN ('remove', 'keep')"),
            _created(),
            Column("last_sync_at", TEXT),
            Column("last_report", JSON),
            _text("mode", "files", check="mode IN ('files', 'pages')"),
            # A followed place that is not a folder (a feed, web pages, a mailbox, ...): its
            # `path` is its address; the worker runs it every `every_s` seconds, holding a
            # lease (`loci.store.schedule_tables`). Times are the database's epoch seconds.
            _text("kind", "folder"),
            Column("every_s", REAL),
            Column("next_run_at", REAL),
            Column("lease_owner", TEXT),
            Column("lease_until", REAL),
            Column("failures", INT, nullable=False, default=0),  # failed runs in a row
            Column("last_error", TEXT),
            Column("state", JSON),  # what the upstream wants back next run (ETag, cursor)
            Column("options", JSON),
            Column("secret", TEXT),  # a credential, sealed with the server's secret box
        ),
        unique=(("brain_id", "path"),),
        indexes=(Index("sources_due", "next_run_at", where="every_s IS NOT NULL"),),
        rls="brain",
        autoincrement=True,
    ),
    Table(
        "source_pages",
        (
            Column("source_id", BIGINT, nullable=False, references="sources.id"),
            _brain(),
            _text("doc_id"),
            _text("path"),
            _text("page_hash"),
            Column("file_hash", TEXT),
        ),
        primary_key=("source_id", "doc_id"),
        rls="brain",
        without_rowid=True,
    ),
    Table(
        "source_watches",
        (
            Column("source_id", BIGINT, references="sources.id"),
            _brain(),
            _text("owner"),
            _text("mode", check="mode IN ('events', 'poll')"),
            Column("lease_until", REAL, nullable=False),
            _created("since"),
        ),
        primary_key=("source_id",),
        indexes=(Index("source_watches_owner", "owner"),),
        rls="brain",
    ),
    Table(
        "jobs",
        (
            Column("id", KEY),
            _brain(),
            Column("document_id", BIGINT, nullable=False, references="documents.id"),
            _text("kind"),
            _text("status", "queued"),
            Column("attempts", INT, nullable=False, default=0),
            Column("last_error", TEXT),
            Column("run_after", REAL, nullable=False, default=0),
            Column("lease_owner", TEXT),
            Column("lease_expires", REAL),
            _created(),
            _created("updated_at"),
            _text("stage", "text", check="stage IN ('text', 'vectors')"),
            Column("priority", REAL, nullable=False, default=0),
        ),
        indexes=(
            Index("jobs_claim", "status, run_after"),
            Index("jobs_document", "document_id"),
            Index("jobs_queued", "stage, priority, id", where="status = 'queued'"),
        ),
        rls="brain",
        autoincrement=True,
    ),
    Table(
        "workers",
        (Column("name", TEXT), Column("seen_at", REAL, nullable=False)),
        primary_key=("name",),
        rls="system",
    ),
    Table(
        "conversations",
        (
            Column("id", KEY),
            _brain(),
            _user(nullable=True),  # NULL: the local CLI's
            _text("title"),
            _created(),
            _created("updated_at"),
            Column("origin", TEXT),  # web, api, cli, mcp, slack
        ),
        indexes=(Index("conversations_owner", "brain_id, user_id, updated_at"),),
        rls="brain",
        autoincrement=True,
    ),
    Table(
        "messages",
        (
            Column("id", KEY),
            Column("conversation_id", BIGINT, nullable=False, references="conversations.id"),
            _brain(only=POSTGRES),  # row-level security checks the brain on every row
            _text("role"),
            _text("content"),
            Column("citations", JSON_ORDERED, nullable=False, default="[]"),
            Column("intent", TEXT),
            _created(),
            Column("rating", TEXT, check="rating IN ('up', 'down')"),
            Column("rating_reason", TEXT),
            Column("rated_at", TEXT),
        ),
        indexes=(
            Index("messages_conversation", "conversation_id, id"),
            Index(
                "messages_rated",
                "rating, conversation_id",
                where="rating IS NOT NULL",
                only=SQLITE,
            ),
            Index("messages_rated", "brain_id, rating", where="rating IS NOT NULL", only=POSTGRES),
        ),
        rls="brain",
        autoincrement=True,
    ),
    Table(
        "graph_documents",
        (
            _brain(),
            _text("id"),
            _text("kind", check="kind IN ('page', 'evidence')"),
            _text("type"),
            _text("folder"),
            _text("status"),
            _text("title"),
            Column("aliases", JSON, nullable=False, default="[]"),
            Column("merged_into", TEXT),
            _text("created"),
            _text("updated"),
            _text("content"),
            _text("content_hash"),
            Column(
                "document_id", BIGINT, unique=True, references="documents.id", on_delete="SET NULL"
            ),
        ),
        primary_key=("brain_id", "id"),
        # the graph's one structural rule: evidence under evidence/, pages outside it
        checks=("(kind = 'evidence') = (folder = 'evidence' OR folder LIKE 'evidence/%')",),
        indexes=(Index("graph_documents_folder", "brain_id, folder"),),
        rls="brain",
    ),
    Table(
        "graph_edges",
        (
            Column("brain_id", BIGINT, nullable=False),
            _text("source"),
            _text("target"),
            _text("type"),
        ),
        primary_key=("brain_id", "source", "type", "target"),
        foreign_keys=(ForeignKey(("brain_id", "source"), "graph_documents", ("brain_id", "id")),),
        indexes=(Index("graph_edges_target", "brain_id, target"),),
        rls="brain",
        without_rowid=True,
    ),
    Table(
        "graph_timeline",
        (
            Column("brain_id", BIGINT, nullable=False),
            _text("doc_id"),
            _text("entry_id"),
            _text("at"),
            _text("text"),
            Column("source", TEXT),
        ),
        primary_key=("brain_id", "doc_id", "entry_id"),
        foreign_keys=(ForeignKey(("brain_id", "doc_id"), "graph_documents", ("brain_id", "id")),),
        indexes=(Index("graph_timeline_at", "brain_id, at"),),
        rls="brain",
        without_rowid=True,
    ),
    Table(
        "graph_versions",
        (
            Column("id", KEY),
            _brain(),
            _text("doc_id"),
            _text("action"),
            _text("actor"),
            _text("content"),
            _text("content_hash"),
            _created(),
        ),
        indexes=(Index("graph_versions_doc", "brain_id, doc_id, id"),),
        rls="brain",
        autoincrement=True,
    ),
    Table(
        "slack_identities",
        (_text("team_id"), _text("slack_user_id"), _user(), _brain(), _created()),
        primary_key=("team_id", "slack_user_id"),
        indexes=(
            Index("slack_identities_user", "user_id", only=POSTGRES),
            Index("slack_identities_brain", "brain_id", only=POSTGRES),
        ),
        rls="brain",
    ),
    Table(
        "webhook_secrets",
        (
            Column("id", KEY),
            _brain(),
            _text("provider"),
            _text("prefix"),
            _text("sealed_secret"),  # sealed with the server's key: an HMAC needs the secret
            Column("revoked_at", REAL),
            _created(),
        ),
        indexes=(Index("webhook_secrets_target", "brain_id, provider"),),
        rls="brain",
        autoincrement=True,
    ),
    Table(
        "deliveries",
        (
            _text("source"),
            _text("delivery_id"),
            Column("claimed_at", REAL, nullable=False),
            Column("done_at", REAL),
        ),
        primary_key=("source", "delivery_id"),
        indexes=(Index("deliveries_claimed", "claimed_at"),),
        rls="system",
        without_rowid=True,
    ),
    Table(
        "slack_threads",
        (
            _text("team_id"),
            _text("channel"),
            _text("thread_ts"),
            _user(),
            _brain(),
            Column("conversation_id", BIGINT, nullable=False, references="conversations.id"),
        ),
        primary_key=("team_id", "channel", "thread_ts", "user_id"),
        indexes=(
            Index("slack_threads_conversation", "conversation_id"),
            Index("slack_threads_brain", "brain_id", only=POSTGRES),
        ),
        rls="brain",
        without_rowid=True,
    ),
    # PostgreSQL: the originals themselves with LOCI_BLOBS=database (else a blob folder).
    Table(
        "blobs",
        (
            Column("hash", TEXT),
            Column("data", BYTES, nullable=False),
            Column("size", BIGINT, nullable=False),
            _created(),
        ),
        primary_key=("hash",),
        only=POSTGRES,
    ),
)
BY_NAME: dict[str, Table] = {t.name: t for t in TABLES}

# SQLite's own objects, after the tables: the FTS5 index of the passages (contentless; its
# `brain` column holds a per-brain token so a MATCH is scoped to one brain; text analysed in
# Python by `loci.store.stemming`, split back by this tokenizer), and the triggers that keep
# the chunk log.
SQLITE_OBJECTS: tuple[str, ...] = (
    "CREATE VIRTUAL TABLE chunks_fts USING fts5(brain, title, headings, body,"
    f" content='', contentless_delete=1, tokenize=\"{FTS_TOKENIZE_SQL}\")",
    "CREATE TRIGGER chunks_logged_insert AFTER INSERT ON chunks BEGIN"
    " INSERT INTO chunk_log(brain_id, chunk_id) VALUES (new.brain_id, new.id); END",
    "CREATE TRIGGER chunks_logged_delete AFTER DELETE ON chunks BEGIN"
    " INSERT INTO chunk_log(brain_id, chunk_id) VALUES (old.brain_id, old.id); END",
    "CREATE TRIGGER brains_log_forget AFTER DELETE ON brains BEGIN"
    " DELETE FROM chunk_log WHERE brain_id = old.id; END",
)
# PostgreSQL's own objects, before the tables (their defaults and policies call them):
# pgvector; the time as both backends write it; the brain a transaction names in
# `loci.brain_id` (or '*': every brain), which the row-level security policies read; and the
# HNSW index made per embedding size when a brain first embeds at it (cosine; halfvec beyond
# 2,000 dimensions, which pgvector's vector indexes stop at; none beyond 4,000).
POSTGRES_FUNCTIONS: tuple[str, ...] = (
    "CREATE EXTENSION IF NOT EXISTS vector",
    """CREATE FUNCTION loci_now() RETURNS text LANGUAGE sql STABLE AS
        $$ SELECT to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') $$""",
    """CREATE FUNCTION loci_epoch() RETURNS double precision LANGUAGE sql VOLATILE AS
        $$ SELECT extract(epoch FROM clock_timestamp())::double precision $$""",
    """CREATE FUNCTION loci_all_brains() RETURNS boolean LANGUAGE sql STABLE AS
        $$ SELECT coalesce(current_setting('loci.brain_id', true), '') = '*' $$""",
    """CREATE FUNCTION loci_brain() RETURNS bigint LANGUAGE sql STABLE AS
        $$ SELECT CASE WHEN current_setting('loci.brain_id', true) ~ '^[0-9]{1,18}$'
                  THEN current_setting('loci.brain_id', true)::bigint END $$""",
    """CREATE FUNCTION loci_ensure_vector_index(dims integer) RETURNS void LANGUAGE plpgsql
    SECURITY DEFINER SET search_path = public AS $$
    BEGIN
        PERFORM pg_advisory_xact_lock(7300002);
        IF dims > 4000 THEN
            RETURN;  -- no index type takes it: exact scans
        ELSIF dims > 2000 THEN
            EXECUTE format('CREATE INDEX IF NOT EXISTS chunks_embedding_%s ON chunks USING hnsw'
                ' ((embedding::halfvec(%s)) halfvec_cosine_ops) WHERE embed_dims = %s',
                dims, dims, dims);
        ELSE
            EXECUTE format('CREATE INDEX IF NOT EXISTS chunks_embedding_%s ON chunks USING hnsw'
                ' ((embedding::vector(%s)) vector_cosine_ops) WHERE embed_dims = %s',
                dims, dims, dims);
        END IF;
    END $$""",
)
