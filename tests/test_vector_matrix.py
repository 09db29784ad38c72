"""The vector scan of large brains: an int8 pre-scan, then float32 rescoring, returns what the
exact float32 scan returns."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.store.sqlite import SqliteStore
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


def _add(store: SqliteStore, brain_id: int, number: int, rng: np.random.Generator) -> int:
    doc = store.create_document(
        brain_id,
        NewDocument("file", f"{number}.txt", None, None, "text/plain", 10, f"{number:064d}"),
        "index",
    )
    chunks, vectors = [], {}
    for index in range(3):
        text = f"passage {index} of {number}"
        chunk = ChunkDraft(index, text, (), Location(None, 1, 1, 0, len(text)), 4, text)
        vector = rng.standard_normal(16).astype(np.float32)
        vectors[f"{number}-{index}"] = vector / np.linalg.norm(vector)
        chunks.append(IndexedChunk(chunk, f"{number}-{index}"))
    store.replace_index(doc.id, chunks, vectors, "m", "", None, None)
    return doc.id


def test_store_matrix_catches_up_without_rebuilding(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
    brain = store.ensure_brain("b")
    rng = np.random.default_rng(2)
    ids = [_add(store, brain.id, n, rng) for n in range(400)]
    query = rng.standard_normal(16).astype(np.float32)
    query /= np.linalg.norm(query)
    store.vector_search(brain.id, "m", query, 10, SearchFilters())
    matrix = store.search_index.matrix(brain.id, "m")
    for doc_id in ids[:5]:
        store.delete_document(brain.id, doc_id)
    for n in range(400, 410):
        _add(store, brain.id, n, rng)
    got = store.vector_search(brain.id, "m", query, 50, SearchFilters())
    assert store.search_index.matrix(brain.id, "m") is matrix  # caught up, not rebuilt
    assert matrix.tail is not None and len(matrix.tail[0]) == 30
    fresh = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=None)
    want = fresh.vector_search(brain.id, "m", query, 50, SearchFilters())
    assert [i for i, _ in got] == [i for i, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want])
    some = SearchFilters(document_ids=(*ids[5:50], ids[-1]))
    got = store.vector_search(brain.id, "m", query, 20, some)
    want = fresh.vector_search(brain.id, "m", query, 20, some)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want])


def test_vectors_of_reads_live_rows_and_the_newer_tail() -> None:
    matrix, _, vectors = _matrices(50, dims=8)
    changed = vectors[3] * -1.0
    # chunk 12 deleted, chunk 13 re-embedded (now in the tail), chunk 99 added
    matrix.update(2, [12, 13], [13, 99], [changed.tobytes(), vectors[0].tobytes()])
    found = matrix.vectors_of([10, 12, 13, 99, 5, 10])
    assert set(found) == {10, 13, 99}
    assert np.array_equal(found[10], vectors[0]) and np.array_equal(found[13], changed)
    assert np.array_equal(found[99], vectors[0])
    # the sample carries each row's chunk id, live rows only
    ids, rows = matrix.sample(2048)
    assert 12 not in ids.tolist() and {13, 99} <= set(ids.tolist())
    assert np.array_equal(rows[ids.tolist().index(13)], changed)
