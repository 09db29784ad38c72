"""The PostgreSQL store's search legs: BM25 over the lexical postings, nearest vectors through
pgvector. A mixin of `PostgresStore`."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from loci.embed.base import Vectors
from loci.models import SearchFilters
from loci.store.postgres import lexical, vectors
from loci.store.postgres.connection import Database
from loci.store.postgres.filters import filter_sql
from loci.store.stemming import query_stemmers, query_tokens


class SearchLegs:
    db: Database

    def text_search(
        self,
        brain_id: int,
        terms: Sequence[str],
        limit: int,
        filters: SearchFilters,
        languages: Sequence[str] = (),
    ) -> list[tuple[int, float]]:
        if not terms or limit <= 0:
            return []
        where, params = filter_sql(filters)
        with self.db.tx(brain_id) as cur:
            cur.execute("SELECT text_language FROM brains WHERE id = %s", (brain_id,))
            found = cur.fetchone()
            if found is None:
                return []
            tokens = query_tokens(terms, query_stemmers(str(found["text_language"]), languages))
            if not tokens:
                return []
            cur.execute(
                lexical.bm25_sql(where),
                {**lexical.bm25_params(brain_id, tokens, limit), **params},
            )
            return [(int(r["chunk_id"]), float(r["score"])) for r in cur.fetchall()]

    def text_ceiling(
        self, brain_id: int, terms: Sequence[str], languages: Sequence[str] = ()
    ) -> float | None:
        if not terms:
            return None
        with self.db.tx(brain_id) as cur:
            cur.execute("SELECT text_language FROM brains WHERE id = %s", (brain_id,))
            found = cur.fetchone()
            if found is None:
                return None
            tokens = query_tokens(terms, query_stemmers(str(found["text_language"]), languages))
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
