"""The PostgreSQL store's search legs: BM25 over the lexical postings, nearest vectors through
pgvector. A mixin of `PostgresStore`."""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from loci.embed.base import Vectors
from loci.models import DocumentTextScores, PassageContext, SearchFilters, TextCeiling
from loci.store.postgres import document_lexical, lexical, vectors
from loci.store.postgres.connection import Cursor, Database
from loci.store.postgres.filters import filter_sql
from loci.store.postgres.index import as_array
from loci.store.stemming import query_stemmers, query_tokens
from loci.store.vector_background import MIN_VECTORS, SAMPLE, VectorBackground

# A brain's background is read again after this long: it moves slowly, and several processes
# may be writing the brain, so no change log here says when it moved.
BACKGROUND_TTL_S = 60.0


class SearchLegs:
    db: Database
    # (brain id, model) -> (when read, background); per process
    _backgrounds: dict[tuple[int, str], tuple[float, VectorBackground]]

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
    ) -> TextCeiling | None:
        if not terms:
            return None
        with self.db.tx(brain_id) as cur:
            tokens = _query_tokens(cur, brain_id, terms, languages)
            if not tokens:
                return None
            cur.execute(lexical.CEILING_SQL, lexical.bm25_params(brain_id, tokens, 0))
            row = cur.fetchone()
        if row is None:
            return None
        return TextCeiling(float(row["ceiling"]), float(row["best_idf"]), int(row["total"] or 0))

    def document_text_scores(
        self,
        brain_id: int,
        terms: Sequence[str],
        chunk_ids: Sequence[int],
        languages: Sequence[str] = (),
    ) -> DocumentTextScores | None:
        if not terms:
            return None
        with self.db.tx(brain_id) as cur:
            tokens = _query_tokens(cur, brain_id, terms, languages)
            if not tokens:
                return None
            scores, ceiling = document_lexical.passage_scores(cur, brain_id, tokens, chunk_ids)
        return DocumentTextScores(scores, ceiling)

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

    def passage_contexts(
        self, brain_id: int, model: str, query: Vectors, chunk_ids: Sequence[int]
    ) -> dict[int, PassageContext]:
        if not chunk_ids:
            return {}
        with self.db.tx(brain_id) as cur:
            cur.execute(
                "SELECT c.id, o.id AS head, c.embedding AS own, o.embedding AS head_embedding"
                " FROM chunks c JOIN chunks o ON o.document_id = c.document_id AND o.idx = 0"
                " WHERE c.id = ANY(%s) AND c.brain_id = %s AND c.embed_model = %s"
                " AND o.embed_model = %s AND c.embedding IS NOT NULL"
                " AND o.embedding IS NOT NULL",
                (list(chunk_ids), brain_id, model, model),
            )
            found = cur.fetchall()
        q = np.asarray(query, np.float32).reshape(-1)
        out: dict[int, PassageContext] = {}
        for r in found:
            own, head = as_array(r["own"]), as_array(r["head_embedding"])
            out[int(r["id"])] = PassageContext(
                float(own @ q), int(r["head"]), float(head @ q), float(own @ head)
            )
        return out

    def vector_background(self, brain_id: int, model: str) -> VectorBackground | None:
        cached = self._backgrounds.get((brain_id, model))
        if cached is not None and time.monotonic() - cached[0] < BACKGROUND_TTL_S:
            return cached[1]
        with self.db.tx(brain_id) as cur:
            cur.execute(
                "SELECT count(*) AS n, count(DISTINCT document_id) AS documents FROM chunks"
                " WHERE brain_id = %s AND embed_model = %s AND embedding IS NOT NULL",
                (brain_id, model),
            )
            counts = cur.fetchone()
            n, documents = (int(counts["n"]), int(counts["documents"])) if counts else (0, 0)
            if n < MIN_VECTORS:
                return None
            # Every step-th chunk id: spread over the brain without sorting all of it.
            cur.execute(
                "SELECT document_id, embedding FROM chunks WHERE brain_id = %s"
                " AND embed_model = %s AND embedding IS NOT NULL AND id %% %s = 0 LIMIT %s",
                (brain_id, model, max(1, n // SAMPLE), SAMPLE),
            )
            found = cur.fetchall()
        if not found:
            return None
        rows = np.stack([as_array(r["embedding"]) for r in found])
        owners = np.asarray([int(r["document_id"]) for r in found], np.int64)
        background = VectorBackground.of(rows, n, documents, owners)
        if background is not None:
            self._backgrounds[(brain_id, model)] = (time.monotonic(), background)
        return background


def _query_tokens(
    cur: Cursor, brain_id: int, terms: Sequence[str], languages: Sequence[str]
) -> list[str]:
    """The question's terms analysed as the brain's text is (none if the brain is gone)."""
    cur.execute("SELECT text_language FROM brains WHERE id = %s", (brain_id,))
    found = cur.fetchone()
    if found is None:
        return []
    return query_tokens(terms, query_stemmers(str(found["text_language"]), languages))
