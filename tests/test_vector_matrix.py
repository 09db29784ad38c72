"""The vector scan of large brains: an int8 pre-scan, then float32 rescoring, returns what the
exact float32 scan returns."""

from __future__ import annotations

import numpy as np

from loci.store.vector_matrix import RESCORE, VectorMatrix


def _matrices(rows: int, dims: int = 64) -> tuple[VectorMatrix, VectorMatrix, np.ndarray]:
    rng = np.random.default_rng(0)
    # Clustered vectors, like embeddings of related passages, plus unit-length normalisation.
    centres = rng.standard_normal((20, dims)).astype(np.float32)
    vectors = centres[rng.integers(0, 20, rows)] + 0.7 * rng.standard_normal((rows, dims))
    vectors = (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)
    ids = list(range(10, 10 + rows))
    blobs = [v.tobytes() for v in vectors]
    exact = VectorMatrix.build(1, ids, blobs, dims)
    fast = VectorMatrix.build(1, ids, blobs, dims, int8_min_rows=rows)
    return exact, fast, vectors


def test_int8_prescan_returns_the_exact_top_100() -> None:
    exact, fast, vectors = _matrices(30_000)
    assert exact.int8 is None and fast.int8 is not None
    rng = np.random.default_rng(1)
    for _ in range(20):
        query = vectors[rng.integers(0, len(vectors))] + 0.3 * rng.standard_normal(64)
        query = (query / np.linalg.norm(query)).astype(np.float32)
        want, got = exact.top(query, 100), fast.top(query, 100)
        assert [i for i, _ in got] == [i for i, _ in want]
        assert np.allclose([s for _, s in got], [s for _, s in want])


def test_int8_prescan_respects_allowed_ids_and_small_sets() -> None:
    exact, fast, vectors = _matrices(5_000)
    query = vectors[7]
    allowed = set(range(10, 10 + 5_000, 3))
    assert fast.top(query, 50, allowed) == exact.top(query, 50, allowed)
    few = set(range(10, 10 + RESCORE // 2))  # fewer rows than the rescoring pool: plain scan
    assert fast.top(query, 20, few) == exact.top(query, 20, few)
    assert fast.top(query, 0) == [] and fast.top(query, 10, set()) == []
