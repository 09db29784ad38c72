"""The vector leg in SQL: cosine over pgvector HNSW indexes, the brain filter inside the scan.

Embeddings sit on the chunk rows with their brain, and each embedding size has its own partial
HNSW index (see migration 1's `loci_ensure_vector_index`): `vector` up to 2,000 dimensions,
`halfvec` (16-bit) beyond, which pgvector indexes up to 4,000. The brain (and any filter) is a
condition the index scan checks as it walks the graph; with `hnsw.iterative_scan` the scan goes on
until `limit` rows pass instead of stopping at `ef_search` candidates, so a brain holding 1% of a
table still gets its k nearest. Relaxed order lets the scan return slightly out of order; the
outer query sorts again. For a small brain the planner may skip the index and compute exact
distances over the brain's rows (found through `chunks_brain`), which is both exact and fast.
"""

from __future__ import annotations

from typing import Any

HALFVEC_FROM_DIMS = 2001  # pgvector's HNSW indexes `vector` up to 2,000 dimensions
MIN_EF_SEARCH = 40
MAX_EF_SEARCH = 1000


def scan_settings(limit: int) -> tuple[str, tuple[Any, ...]]:
    """This transaction's HNSW settings: iterative scans, and a candidate list >= 2 x limit."""
    ef_search = min(MAX_EF_SEARCH, max(MIN_EF_SEARCH, 2 * limit))
    return (
        "SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true),"
        " set_config('hnsw.ef_search', %s, true)",
        (str(ef_search),),
    )


def nearest_sql(dims: int, filter_where: str) -> str:
    """(id, similarity) of the `%(limit)s` chunks nearest `%(q)s` in `%(brain)s` under
    `%(model)s`, best first; `filter_where` adds conditions on documents `d`."""
    dims = int(dims)  # written into the SQL: the partial index matches only a literal
    kind = "halfvec" if dims >= HALFVEC_FROM_DIMS else "vector"
    join = " JOIN documents d ON d.id = c.document_id" if filter_where else ""
    return (
        f"WITH nearest AS MATERIALIZED (SELECT c.id, c.embedding::{kind}({dims})"
        f" <=> %(q)s::{kind}({dims}) AS distance FROM chunks c{join}"
        f" WHERE c.brain_id = %(brain)s AND c.embed_model = %(model)s"
        f" AND c.embed_dims = {dims}{filter_where} ORDER BY distance LIMIT %(limit)s)"
        " SELECT id, 1 - distance AS similarity FROM nearest ORDER BY distance, id"
    )
