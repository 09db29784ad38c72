"""The scale-out store: PostgreSQL with pgvector, shared by many API processes and workers."""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from typing import Any

import numpy as np
from psycopg import errors

from loci.embed.base import Vectors
from loci.errors import Conflict, InvalidInput, NotFound
from loci.models import (
    Brain,
    BrainStats,
    Chunk,
    Document,
    DocumentKind,
    DocumentStatus,
    IndexedChunk,
    Job,
    NewDocument,
    SearchFilters,
    Visibility,
)
from loci.store.postgres import lexical, vectors
from loci.store.postgres.accounts import PostgresAccounts
from loci.store.postgres.analyzer import text_languages
from loci.store.postgres.connection import Cursor, Database, Row, connect
from loci.store.postgres.conversations import PostgresConversations
from loci.store.postgres.filters import filter_sql
from loci.store.postgres.graph import PostgresGraph
from loci.store.postgres.index import as_array, reanalyze, write_index
from loci.store.postgres.integrations import PostgresIntegrations
from loci.store.postgres.jobs import PostgresJobs, queue_job
from loci.store.postgres.migrations import grant, migrate

log = logging.getLogger(__name__)


_BRAIN = "id, name, embedder_model, embedder_dims, created_at, visibility"
_DOCUMENT = (
    "id, brain_id, kind, name, title, source_url, mime_type, size_bytes, content_hash, status,"
    " status_reason, chunk_count, tags, metadata, created_at, updated_at"
)
_CHUNK = (
    "id, document_id, idx, text, heading_path, page, line_start, line_end, char_start,"
    " char_end, token_count, content_hash, region, ocr_confidence"
)


def _brain(row: Row) -> Brain:
    return Brain(**row)


def _document(row: Row) -> Document:
    return Document(**{**row, "tags": tuple(row["tags"]), "metadata": row["metadata"]})


def _chunk(row: Row) -> Chunk:
    values = {k: v for k, v in row.items() if k != "idx"}
    return Chunk(**{**values, "index": row["idx"], "heading_path": tuple(row["heading_path"])})


class PostgresStore:
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
        self.jobs = PostgresJobs(self.db)
        self.accounts = PostgresAccounts(self.db)
        self.conversations = PostgresConversations(self.db)
        self.graph = PostgresGraph(self.db, self.delete_rows, queue_job)
        self.integrations = PostgresIntegrations(self.db)

    # brains -------------------------------------------------------------------------------
    def ensure_brain(self, name: str) -> Brain:
        with self.db.tx() as cur:
            cur.execute(
                "INSERT INTO brains(name) VALUES (%s) ON CONFLICT (name) DO NOTHING", (name,)
            )
            cur.execute(f"SELECT {_BRAIN} FROM brains WHERE name = %s", (name,))
            row = cur.fetchone()
        assert row is not None
        return _brain(row)

    def get_brain(self, name: str) -> Brain:
        row = self.db.row(f"SELECT {_BRAIN} FROM brains WHERE name = %s", (name,))
        if row is None:
            raise NotFound(f"no brain named {name!r}")
        return _brain(row)

    def get_brain_by_id(self, brain_id: int) -> Brain:
        row = self.db.row(f"SELECT {_BRAIN} FROM brains WHERE id = %s", (brain_id,))
        if row is None:
            raise NotFound(f"no brain with id {brain_id}")
        return _brain(row)

    def list_brains(self) -> list[Brain]:
        return [_brain(r) for r in self.db.rows(f"SELECT {_BRAIN} FROM brains ORDER BY name")]

    def create_brain(self, name: str, visibility: Visibility, owner_id: int | None) -> Brain:
        try:
            with self.db.tx() as cur:
                cur.execute(
                    "INSERT INTO brains(name, visibility) VALUES (%s, %s) RETURNING id",
                    (name, visibility),
                )
                row = cur.fetchone()
                assert row is not None
                if owner_id is not None:
                    cur.execute(
                        "INSERT INTO brain_members(brain_id, user_id, role)"
                        " VALUES (%s, %s, 'owner')",
                        (row["id"], owner_id),
                    )
        except errors.UniqueViolation:
            raise Conflict(f"a brain named {name!r} already exists") from None
        return self.get_brain(name)

    def update_brain(
        self, brain_id: int, *, name: str | None = None, visibility: Visibility | None = None
    ) -> Brain:
        try:
            with self.db.tx(brain_id) as cur:
                if name is not None:
                    cur.execute("UPDATE brains SET name = %s WHERE id = %s", (name, brain_id))
                if visibility is not None:
                    cur.execute(
                        "UPDATE brains SET visibility = %s WHERE id = %s", (visibility, brain_id)
                    )
        except errors.UniqueViolation:
            raise Conflict(f"a brain named {name!r} already exists") from None
        return self.get_brain_by_id(brain_id)

    def delete_brain(self, brain_id: int) -> list[str]:
        with self.db.tx(brain_id) as cur:
            cur.execute(
                "SELECT DISTINCT content_hash FROM documents WHERE brain_id = %s", (brain_id,)
            )
            hashes = [str(r["content_hash"]) for r in cur.fetchall()]
            cur.execute("DELETE FROM brains WHERE id = %s", (brain_id,))  # cascades
        return self._unused(hashes)

    def _unused(self, hashes: Sequence[str]) -> list[str]:
        """Of these content hashes, those no document of any brain uses any more."""
        if not hashes:
            return []
        used = {
            str(r["content_hash"])
            for r in self.db.rows(
                "SELECT DISTINCT content_hash FROM documents WHERE content_hash = ANY(%s)",
                (list(hashes),),
            )
        }
        return [h for h in hashes if h not in used]

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
        with self.db.tx(brain_id) as cur:
            if language not in text_languages(cur):
                raise InvalidInput(f"no text-search language {language!r} on this server")
            cur.execute(
                "UPDATE brains SET text_language = %s WHERE id = %s RETURNING id",
                (language, brain_id),
            )
            if cur.fetchone() is None:
                raise NotFound(f"no brain with id {brain_id}")
            lexical.lock_stats(cur, brain_id)
            reanalyze(cur, brain_id, language)

    # documents ----------------------------------------------------------------------------
    def find_by_hash(self, brain_id: int, content_hash: str) -> Document | None:
        row = self.db.row(
            f"SELECT {_DOCUMENT} FROM documents WHERE brain_id = %s AND content_hash = %s",
            (brain_id, content_hash),
            brain_id,
        )
        return _document(row) if row else None

    def create_document(self, brain_id: int, new: NewDocument, job_kind: str) -> Document:
        with self.db.tx(brain_id) as cur:
            cur.execute(
                "INSERT INTO documents(brain_id, kind, name, title, source_url, mime_type,"
                " size_bytes, content_hash, status, tags, metadata)"
                f" VALUES (%s,%s,%s,%s,%s,%s,%s,%s, 'processing', %s, %s) RETURNING {_DOCUMENT}",
                (
                    brain_id,
                    new.kind,
                    new.name,
                    new.title,
                    new.source_url,
                    new.mime_type,
                    new.size_bytes,
                    new.content_hash,
                    json.dumps(list(new.tags)),
                    json.dumps(new.metadata, default=str),
                ),
            )
            row = cur.fetchone()
            assert row is not None
            queue_job(cur, brain_id, int(row["id"]), job_kind)
        return _document(row)

    def get_document(self, brain_id: int, document_id: int) -> Document:
        row = self.db.row(
            f"SELECT {_DOCUMENT} FROM documents WHERE id = %s AND brain_id = %s",
            (document_id, brain_id),
            brain_id,
        )
        if row is None:
            raise NotFound(f"no document {document_id} in this brain")
        return _document(row)

    def list_documents(
        self,
        brain_id: int,
        *,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        tag: str | None = None,
    ) -> list[Document]:
        sql = f"SELECT {_DOCUMENT} FROM documents d WHERE d.brain_id = %s"
        params: list[Any] = [brain_id]
        if status:
            sql += " AND d.status = %s"
            params.append(status)
        if kind:
            sql += " AND d.kind = %s"
            params.append(kind)
        if tag:
            sql += " AND d.tags @> %s::jsonb"
            params.append(json.dumps([tag]))
        rows = self.db.rows(sql + " ORDER BY d.id", params, brain_id)
        return [_document(r) for r in rows]

    def delete_document(self, brain_id: int, document_id: int) -> bool:
        doc = self.get_document(brain_id, document_id)
        with self.db.tx(brain_id) as cur:
            self.delete_rows(cur, brain_id, document_id)
        return bool(self._unused([doc.content_hash]))

    def delete_rows(self, cur: Cursor, brain_id: int, document_id: int) -> None:
        """A document's row, index and jobs, inside the caller's transaction (the graph store
        deletes a page and its indexed document in one). Locks the document, then the brain's
        lexical statistics, as replace_index does, so the two queue instead of deadlocking."""
        cur.execute("SELECT 1 FROM documents WHERE id = %s FOR UPDATE", (document_id,))
        lexical.lock_stats(cur, brain_id)
        lexical.remove_postings(cur, brain_id, "c.document_id = %s", (document_id,))
        cur.execute("DELETE FROM jobs WHERE document_id = %s", (document_id,))
        cur.execute("DELETE FROM documents WHERE id = %s", (document_id,))  # cascades
        cur.execute("UPDATE brains SET generation = generation + 1 WHERE id = %s", (brain_id,))

    def requeue_document(self, brain_id: int, document_id: int, job_kind: str) -> Document:
        self.get_document(brain_id, document_id)
        with self.db.tx(brain_id) as cur:
            cur.execute(
                "UPDATE documents SET status = 'processing', status_reason = NULL,"
                " updated_at = loci_now() WHERE id = %s",
                (document_id,),
            )
            queue_job(cur, brain_id, document_id, job_kind)
        return self.get_document(brain_id, document_id)

    def replace_content(
        self, brain_id: int, document_id: int, expected_hash: str, new: NewDocument, job_kind: str
    ) -> tuple[Document, bool]:
        old = self.get_document(brain_id, document_id)
        try:
            with self.db.tx(brain_id) as cur:
                cur.execute(
                    "SELECT content_hash FROM documents WHERE id = %s FOR UPDATE", (document_id,)
                )
                current = cur.fetchone()
                if current is None or current["content_hash"] != expected_hash:
                    raise Conflict(
                        "the document changed since you read it; reload it and apply your edit"
                    )
                cur.execute(
                    "UPDATE documents SET name = %s, title = %s, size_bytes = %s,"
                    " content_hash = %s, tags = %s, metadata = %s, status = 'processing',"
                    " status_reason = NULL, updated_at = loci_now() WHERE id = %s",
                    (
                        new.name,
                        new.title,
                        new.size_bytes,
                        new.content_hash,
                        json.dumps(list(new.tags)),
                        json.dumps(new.metadata),
                        document_id,
                    ),
                )
                queue_job(cur, brain_id, document_id, job_kind)
        except errors.UniqueViolation:
            raise Conflict(
                "another document in this brain already has exactly this content"
            ) from None
        return self.get_document(brain_id, document_id), bool(self._unused([old.content_hash]))

    def document_ids(self, brain_id: int | None = None) -> list[int]:
        if brain_id is None:
            rows = self.db.rows("SELECT id FROM documents ORDER BY id")
        else:
            rows = self.db.rows(
                "SELECT id FROM documents WHERE brain_id = %s ORDER BY id", (brain_id,), brain_id
            )
        return [int(r["id"]) for r in rows]

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
    ) -> None:
        with self.db.tx() as cur:  # the brain is read from the document, then set
            write_index(cur, document_id, chunks, new_vectors, model, text, title, status_reason)

    def fail_document(self, document_id: int, reason: str) -> None:
        with self.db.tx() as cur:
            cur.execute(
                "UPDATE documents SET status = 'failed', status_reason = %s,"
                " updated_at = loci_now() WHERE id = %s",
                (reason, document_id),
            )

    def merge_document_metadata(self, document_id: int, values: dict[str, Any]) -> None:
        with self.db.tx() as cur:
            cur.execute("SELECT metadata FROM documents WHERE id = %s FOR UPDATE", (document_id,))
            row = cur.fetchone()
            if row is None:
                return
            metadata = dict(row["metadata"] or {})
            metadata.update(values)
            cur.execute(
                "UPDATE documents SET metadata = %s WHERE id = %s",
                (json.dumps(metadata, default=str), document_id),
            )

    def document_text(self, brain_id: int, document_id: int) -> str | None:
        self.get_document(brain_id, document_id)
        value = self.db.scalar(
            "SELECT text FROM document_texts WHERE document_id = %s", (document_id,), brain_id
        )
        return str(value) if value is not None else None

    def list_chunks(self, brain_id: int, document_id: int) -> list[Chunk]:
        self.get_document(brain_id, document_id)
        rows = self.db.rows(
            f"SELECT {_CHUNK} FROM chunks WHERE document_id = %s AND brain_id = %s ORDER BY idx",
            (document_id, brain_id),
            brain_id,
        )
        return [_chunk(r) for r in rows]

    def clear_brain_index(self, brain_id: int) -> None:
        with self.db.tx(brain_id) as cur:
            lexical.lock_stats(cur, brain_id)
            lexical.remove_postings(cur, brain_id, "true", ())
            cur.execute("DELETE FROM chunks WHERE brain_id = %s", (brain_id,))
            cur.execute("DELETE FROM document_texts WHERE brain_id = %s", (brain_id,))
            cur.execute("UPDATE brains SET generation = generation + 1 WHERE id = %s", (brain_id,))

    # search legs --------------------------------------------------------------------------
    def text_search(
        self, brain_id: int, terms: Sequence[str], limit: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        if not terms or limit <= 0:
            return []
        where, params = filter_sql(filters)
        with self.db.tx(brain_id) as cur:
            cur.execute("SELECT text_language FROM brains WHERE id = %s", (brain_id,))
            found = cur.fetchone()
            if found is None:
                return []
            tokens = lexical.query_tokens(cur, str(found["text_language"]), terms)
            if not tokens:
                return []
            cur.execute(
                lexical.bm25_sql(where),
                {**lexical.bm25_params(brain_id, tokens, limit), **params},
            )
            return [(int(r["chunk_id"]), float(r["score"])) for r in cur.fetchall()]

    def vector_search(
        self, brain_id: int, model: str, query: Vectors, limit: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        vector = np.asarray(query, np.float32).reshape(-1)
        where, params = filter_sql(filters)
        with self.db.tx(brain_id) as cur:
            cur.execute(*vectors.scan_settings(limit))
            cur.execute(
                vectors.nearest_sql(len(vector), where),
                {"q": vector, "brain": brain_id, "model": model, "limit": limit, **params},
            )
            return [(int(r["id"]), float(r["similarity"])) for r in cur.fetchall()]

    def chunks_with_documents(self, chunk_ids: Sequence[int]) -> dict[int, tuple[Chunk, Document]]:
        if not chunk_ids:
            return {}
        with self.db.tx() as cur:
            cur.execute(f"SELECT {_CHUNK} FROM chunks WHERE id = ANY(%s)", (list(set(chunk_ids)),))
            chunk_rows = cur.fetchall()
            doc_ids = sorted({int(r["document_id"]) for r in chunk_rows})
            cur.execute(f"SELECT {_DOCUMENT} FROM documents WHERE id = ANY(%s)", (doc_ids,))
            docs = {int(r["id"]): _document(r) for r in cur.fetchall()}
        return {int(r["id"]): (_chunk(r), docs[int(r["document_id"])]) for r in chunk_rows}

    def chunk_documents(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        if not chunk_ids:
            return {}
        rows = self.db.rows(
            "SELECT id, document_id FROM chunks WHERE id = ANY(%s)", (list(set(chunk_ids)),)
        )
        return {int(r["id"]): int(r["document_id"]) for r in rows}

    # jobs ---------------------------------------------------------------------------------
    def claim_jobs(
        self,
        owner: str,
        lease_s: float,
        limit: int = 1,
        only_documents: Sequence[int] | None = None,
    ) -> list[Job]:
        return self.jobs.claim(owner, lease_s, limit, only_documents)

    def heartbeat(self, job: Job, owner: str, lease_s: float) -> bool:
        return self.jobs.heartbeat(job, owner, lease_s)

    def finish_job(self, job: Job, owner: str) -> bool:
        return self.jobs.finish(job, owner)

    def retry_job(self, job: Job, owner: str, error: str, delay_s: float) -> bool:
        return self.jobs.retry(job, owner, error, delay_s)

    def fail_job(self, job: Job, owner: str, error: str) -> bool:
        return self.jobs.fail(job, owner, error)

    def pending_jobs(self, brain_id: int | None = None) -> int:
        return self.jobs.pending(brain_id)

    def list_jobs(self, brain_id: int, limit: int = 100) -> list[Job]:
        return self.jobs.list(brain_id, limit)

    def wait_for_jobs(self, timeout_s: float) -> bool:
        """Sleep until a job is enqueued anywhere or `timeout_s` passes (LISTEN/NOTIFY)."""
        return self.jobs.wait(timeout_s)

    # status -------------------------------------------------------------------------------
    def stats(self, brain_id: int) -> BrainStats:
        with self.db.tx(brain_id) as cur:

            def grouped(sql: str) -> dict[str, int]:
                cur.execute(sql, (brain_id,))
                return {str(r["k"]): int(r["n"]) for r in cur.fetchall()}

            by_status = grouped(
                "SELECT status AS k, count(*) AS n FROM documents WHERE brain_id = %s"
                " GROUP BY status"
            )
            by_kind = grouped(
                "SELECT kind AS k, count(*) AS n FROM documents WHERE brain_id = %s GROUP BY kind"
            )
            jobs = grouped(
                "SELECT status AS k, count(*) AS n FROM jobs WHERE brain_id = %s GROUP BY status"
            )
            cur.execute("SELECT count(*) AS n FROM chunks WHERE brain_id = %s", (brain_id,))
            chunk_row = cur.fetchone()
            cur.execute(
                "SELECT coalesce(sum(size_bytes), 0) AS n FROM documents WHERE brain_id = %s",
                (brain_id,),
            )
            size_row = cur.fetchone()
        assert chunk_row is not None and size_row is not None
        return BrainStats(by_status, by_kind, int(chunk_row["n"]), jobs, int(size_row["n"]))

    def database_bytes(self) -> int:
        # The server's own measure of the database (tables, indexes, TOAST, free space); it spans
        # every brain, so it runs in the system scope, and needs only CONNECT on the database.
        return int(self.db.scalar("SELECT pg_database_size(current_database())"))

    def close(self) -> None:
        self.jobs.close()
        self.db.close()


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and str(url).startswith(("postgresql://", "postgres://"))
