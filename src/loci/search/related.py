"""Documents related to a document: what else in the brain is about the same thing.

A document's meaning is the mean of its passages' vectors (each unit length, so the mean points
where most of its text points); the brain's passages nearest to that mean, best per document,
are its relatives. Nothing is embedded again — the vectors are the ones search already keeps,
all of the brain's own model — so it costs one vector search.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from loci.models import Brain, Chunk, Document, SearchFilters
from loci.store.base import Store

MAX_RELATED = 20
# Passages searched per wanted document: a close document often has several near passages.
PASSAGES_PER_DOCUMENT = 8


@dataclass(frozen=True)
class Related:
    document: Document
    score: float  # cosine of its closest passage to the document's mean vector
    passage: Chunk  # that passage


def related_documents(store: Store, brain: Brain, document: Document, limit: int) -> list[Related]:
    """Up to `limit` other documents of `brain`, closest first; [] when `document` has no
    vectors of the brain's model yet (not indexed, or nothing to embed)."""
    model = brain.embedder_model
    chunks = store.list_chunks(brain.id, document.id)
    if model is None or not chunks:
        return []
    vectors = store.cached_vectors(model, [c.embed_hash for c in chunks])
    if not vectors:
        return []
    mean = np.mean(np.stack(list(vectors.values())), axis=0)
    norm = float(np.linalg.norm(mean))
    if norm == 0.0:
        return []
    mean = (mean / norm).astype(np.float32)
    depth = limit * PASSAGES_PER_DOCUMENT + len(chunks)
    nearest = store.vector_search(brain.id, model, mean, depth, SearchFilters())
    best: dict[int, tuple[int, float]] = {}  # document id -> (chunk id, score)
    owners = store.chunk_documents([chunk_id for chunk_id, _ in nearest])
    for chunk_id, score in nearest:
        owner = owners.get(chunk_id)
        if owner is None or owner == document.id or owner in best:
            continue
        best[owner] = (chunk_id, score)
        if len(best) == limit:
            break
    rows = store.chunks_with_documents([chunk_id for chunk_id, _ in best.values()])
    return [
        Related(rows[chunk_id][1], score, rows[chunk_id][0])
        for chunk_id, score in best.values()
        if chunk_id in rows
    ]
