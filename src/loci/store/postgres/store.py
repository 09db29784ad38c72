"""The scale-out store: PostgreSQL with pgvector, shared by many API processes and workers.

Brains, documents and the derived index are here, with the reads and plain updates both backends
share in `loci.store.brain_tables`; the search legs are in `search.py`, the job queue in
`jobs.py`, the index writes in `index.py`; accounts, conversations, the graph and integrations
are stores of their own beside it."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from typing import Any

from psycopg import errors

from loci.embed.base import Vectors
from loci.errors import NotFound
from loci.models import (
    Brain,
    Chunk,
    IndexedChunk,
    IndexWrite,
)
from loci.store.brain_tables import BRAIN_COLUMNS, CHUNK_COLUMNS, BrainTables
from loci.store.identity_tables import IdentityTables
from loci.store.postgres import document_lexical, lexical
from loci.store.postgres.accounts import PostgresAccounts
from loci.store.postgres.connection import Cursor, Database, connect
from loci.store.postgres.conversations import PostgresConversations
from loci.store.postgres.graph import PostgresGraph
from loci.store.postgres.index import (
    as_array,
    reanalyze,
    write_index,
    write_indexes,
    write_vectors,
)
from loci.store.postgres.integrations import PostgresIntegrations
from loci.store.postgres.jobs import JobQueue, PostgresJobs, queue_jobs
from loci.store.postgres.migrations import grant, migrate
from loci.store.postgres.oauth import PostgresOAuth
from loci.store.postgres.rows import ROWS
from loci.store.postgres.search import SearchLegs
from loci.store.schedule_tables import ScheduleTables
from loci.store.source_tables import SourceTables
from loci.store.stemming import check_stemmer
from loci.store.watch_tables import WatchTables

log = logging.getLogger(__name__)


class PostgresStore(SearchLegs, JobQueue, BrainTables, SourceTables, ScheduleTables, WatchTables):
    now = "loci_now()"
    epoch = "loci_epoch()"
    unique_error = errors.UniqueViolation
    model_rows = ROWS
    for_update = " FOR UPDATE"
    file_inode = "((metadata->'file'->>'ino')::bigint)"

    def __init__(self, url: str, *, owner_url: str | None = None, pool_size: int = 8) -> None:
        """`url` is the application's role; `owner_url`, if given, the role that owns the
        schema: it applies migrations and grants the application what it needs, so the
        application's role owns no table and row-level security binds it."""
        with connect(url) as conn:
            row = conn.execute(
                "SELECT current_user AS role, rolsuper OR rolbypassrls AS bypass"
                " FROM pg_roles WHERE rolname = current_user"
            ).fetchone()
            assert row is not None
            if owner_url is None:
                migrate(conn)
        if owner_url is not None:
            with connect(owner_url) as owner:
                migrate(owner)
                grant(owner, str(row["role"]))
        if row["bypass"]:
            log.warning(
                "PostgreSQL role %s bypasses row-level security (superuser or BYPASSRLS);"
                " brain isolation rests on the application's checks alone",
                row["role"],
            )
        self.db = Database(url, max_size=pool_size)
        self._backgrounds = {}
        self.jobs = PostgresJobs(self.db)
        self.accounts = PostgresAccounts(self.db)
        self.conversations = PostgresConversations(self.db)
        self.graph = PostgresGraph(self.db, self._delete_rows, self._queue_job)
        self.integrations = PostgresIntegrations(self.db)
        self.oauth = PostgresOAuth(self.db)
        self.identities = IdentityTables(self.db)

    @property
    def portable(self) -> Database:
        return self.db

    def _has_tag(self, tag: str) -> tuple[str, Any]:
        return "d.tags @> ?::jsonb", json.dumps([tag])

    def _queue_jobs(
        self, conn: Any, brain_id: int, document_ids: Sequence[int], job_kind: str
    ) -> None:
        queue_jobs(conn, brain_id, document_ids, job_kind)

    # brains -------------------------------------------------------------------------------
    def ensure_brain(self, name: str) -> Brain:
        with self.db.tx() as cur:
            cur.execute(
                "INSERT INTO brains(name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,)
            )
            cur.execute(f"SELECT {BRAIN_COLUMNS} FROM brains WHERE name = %s", (name,))
            row = cur.fetchone()
        assert row is not None
        return ROWS.brain(row)

    def delete_brain(self, brain_id: int) -> list[str]:
        with self.db.tx(brain_id) as cur:
            cur.execute(
                "SELECT content_hash FROM documents WHERE brain_id = %s"
                " UNION SELECT content_hash FROM document_versions WHERE brain_id = %s",
                (brain_id, brain_id),
            )
            hashes = [str(r["content_hash"]) for r in cur.fetchall()]
            # The documents first, in the order every writer locks them (a document, then its
            # jobs and the brain's lexical_stats): the cascade below deletes lexical_stats
            # before documents, which deadlocked with a worker indexing one of them.
            cur.execute(
                "SELECT 1 FROM documents WHERE brain_id = %s ORDER BY id FOR UPDATE", (brain_id,)
            )
            cur.execute("DELETE FROM brains WHERE id = %s", (brain_id,))  # cascades
            self.accounts.drop_brain_from_tokens(cur, brain_id, time.time())
        return self.unused(hashes)

    def set_brain_embedder(self, brain_id: int, model: str | None, dims: int | None) -> None:
        with self.db.tx(brain_id) as cur:
            cur.execute(
                "UPDATE brains SET embedder_model = %s, embedder_dims = %s WHERE id = %s",
                (model, dims, brain_id),
            )
        if dims:
            self.ensure_vector_index(dims)

    def ensure_vector_index(self, dims: int) -> None:
        """The HNSW index for embeddings of this size (made once, by the schema's owner)."""
        with self.db.tx() as cur:
            cur.execute("SELECT loci_ensure_vector_index(%s)", (dims,))

    def brain_language(self, brain_id: int) -> str:
        value = self.db.scalar(
            "SELECT text_language FROM brains WHERE id = %s", (brain_id,), brain_id
        )
        if value is None:
            raise NotFound(f"no brain with id {brain_id}")
        return str(value)

    def set_brain_language(self, brain_id: int, language: str) -> None:
        """Switch the brain's text-search language and re-count its chunks' terms with it."""
        check_stemmer(language)
        with self.db.tx(brain_id) as cur:
            cur.execute(
                "UPDATE brains SET text_language = %s WHERE id = %s RETURNING id",
                (language, brain_id),
            )
            if cur.fetchone() is None:
                raise NotFound(f"no brain with id {brain_id}")
            lexical.lock_stats(cur, brain_id)
            reanalyze(cur, brain_id, language)

    # documents ----------------------------------------------------------------------------
    def _delete_rows(self, cur: Cursor, brain_id: int, document_id: int) -> None:
        """Locks the document, then the brain's lexical statistics, as replace_index does, so
        the two queue instead of deadlocking."""
        cur.execute("SELECT 1 FROM documents WHERE id = %s FOR UPDATE", (document_id,))
        lexical.lock_stats(cur, brain_id)
        lexical.remove_postings(cur, brain_id, "c.document_id = %s", (document_id,))
        document_lexical.remove_documents(cur, brain_id, "d.id = %s", (document_id,))
        cur.execute("DELETE FROM jobs WHERE document_id = %s", (document_id,))
        cur.execute("DELETE FROM documents WHERE id = %s", (document_id,))  # cascades
        cur.execute("UPDATE brains SET generation = generation + 1 WHERE id = %s", (brain_id,))

    # derived index ------------------------------------------------------------------------
    def cached_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, Vectors]:
        if not hashes:
            return {}
        rows = self.db.rows(
            "SELECT DISTINCT ON (embed_hash) embed_hash, embedding FROM chunks"
            " WHERE embed_model = %s AND embed_hash = ANY(%s) AND embedding IS NOT NULL",
            (model, list(dict.fromkeys(hashes))),
        )
        return {str(r["embed_hash"]): as_array(r["embedding"]) for r in rows}

    def replace_index(
        self,
        document_id: int,
        chunks: Sequence[IndexedChunk],
        new_vectors: dict[str, Vectors],
        model: str,
        text: str,
        title: str | None,
        status_reason: str | None,
    ) -> int:
        # The brain is read from the document, then set. In pipeline mode the statements that
        # need no answer go out without waiting for one: some 30 of them a document, each a
        # round trip otherwise (the text stage's main cost on PostgreSQL).
        with self.db.tx() as cur, cur.connection.pipeline():
            return write_index(
                cur, document_id, chunks, new_vectors, model, text, title, status_reason
            )

    def replace_indexes(self, writes: Sequence[IndexWrite], model: str) -> list[int | None]:
        if not writes:
            return []
        with self.db.tx() as cur, cur.connection.pipeline():
            return write_indexes(cur, writes, model)

    def add_vectors(self, document_id: int, model: str, vectors: dict[str, Vectors]) -> int:
        with self.db.tx() as cur:  # the brain is read from the document, then set
            return write_vectors(cur, document_id, model, vectors)

    def chunks_without_vectors(self, document_id: int, model: str) -> list[Chunk]:
        rows = self.db.rows(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE document_id = %s"
            " AND (embedding IS NULL OR embed_model IS DISTINCT FROM %s) ORDER BY idx",
            (document_id, model),
        )
        return [ROWS.chunk(r) for r in rows]

    def vectorless(self, chunk_ids: Sequence[int], model: str) -> set[int]:
        if not chunk_ids:
            return set()
        rows = self.db.rows(
            "SELECT id FROM chunks WHERE id = ANY(%s)"
            " AND (embedding IS NULL OR embed_model IS DISTINCT FROM %s)",
            (list(chunk_ids), model),
        )
        return {int(r["id"]) for r in rows}

    def clear_brain_index(self, brain_id: int) -> None:
        with self.db.tx(brain_id) as cur:
            lexical.lock_stats(cur, brain_id)
            lexical.remove_postings(cur, brain_id, "true", ())
            document_lexical.remove_documents(cur, brain_id, "true", ())
            cur.execute("DELETE FROM chunks WHERE brain_id = %s", (brain_id,))
            cur.execute("DELETE FROM document_texts WHERE brain_id = %s", (brain_id,))
            cur.execute("UPDATE brains SET generation = generation + 1 WHERE id = %s", (brain_id,))

    def database_bytes(self) -> int:
        # The server's own measure of the database (tables, indexes, TOAST, free space); it spans
        # every brain, so it runs in the system scope, and needs only CONNECT on the database.
        return int(self.db.scalar("SELECT pg_database_size(current_database())"))

    def close(self) -> None:
        self.jobs.close()
        self.db.close()


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and str(url).startswith(("postgresql://", "postgres://"))
