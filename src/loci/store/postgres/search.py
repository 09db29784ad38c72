"""The PostgreSQL store's search legs: BM25 over the lexical postings, nearest vectors through
pgvector, and the chunk and document rows a hit needs. A mixin of `PostgresStore`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loci.embed.base import Vectors
from loci.models import Chunk, Document, SearchFilters
from loci.store.brain_tables import CHUNK_COLUMNS, DOCUMENT_COLUMNS
from loci.store.postgres import lexical, vectors
from loci.store.postgres.connection import Database
from loci.store.postgres.filters import filter_sql
from loci.store.postgres.rows import ROWS


class SearchLegs:
    db: Database

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

    def text_ceiling(self, brain_id: int, terms: Sequence[str]) -> float | None:
        if not terms:
            return None
        with self.db.tx(brain_id) as cur:
            cur.execute("SELECT text_language FROM brains WHERE id = %s", (brain_id,))
            found = cur.fetchone()
            if found is None:
                return None
            tokens = lexical.query_tokens(cur, str(found["text_language"]), terms)
            if not tokens:
                return None
            cur.execute(lexical.CEILING_SQL, lexical.bm25_params(brain_id, tokens, 0))
            row = cur.fetchone()
        return float(row["ceiling"]) if row is not None else None

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
            cur.execute(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE id = ANY(%s)", (list(set(chunk_ids)),)
            )
            chunk_rows = cur.fetchall()
            doc_ids = sorted({int(r["document_id"]) for r in chunk_rows})
            cur.execute(f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = ANY(%s)", (doc_ids,))
            docs = {int(r["id"]): ROWS.document(r) for r in cur.fetchall()}
        return {int(r["id"]): (ROWS.chunk(r), docs[int(r["document_id"])]) for r in chunk_rows}

    def chunk_documents(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        if not chunk_ids:
            return {}
        rows = self.db.rows(
            "SELECT id, document_id FROM chunks WHERE id = ANY(%s)", (list(set(chunk_ids)),)
        )
        return {int(r["id"]): int(r["document_id"]) for r in rows}
