"""A large brain's vector leg takes its candidates from an HNSW graph and scores them exactly:
it finds what the exact scan finds, follows every write, honours filters, and a saved graph that
does not fit is rebuilt, never trusted.

Thresholds are lowered through the store's settings so a few hundred vectors count as large;
a second `SqliteStore` on the same database with the graph switched off is the exact scan.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np
import pytest

from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.store import vector_ann
from loci.store.sqlite import SqliteStore, search_index
from loci.store.vector_ann import AnnIndex, ann_path
from loci.store.vector_files import MatrixIdentity
from loci.store.vector_matrix import VectorMatrix

ALL = SearchFilters()
DIMS = 32
PER_DOC = 3


def _store(path: Path, ann: int | None = 100) -> SqliteStore:
    return SqliteStore(path / "loci.db", vector_int8_min_chunks=None, vector_ann_min_chunks=ann)


def _add(
    store: SqliteStore,
    brain_id: int,
    number: int,
    rng: np.random.Generator,
    tags: tuple[str, ...] = (),
    vector: np.ndarray | None = None,
) -> int:
    doc = store.create_document(
        brain_id,
        NewDocument("file", f"d{number}.txt", None, None, "text/plain", 10, f"{number:064d}", tags),
        "index",
    )
    chunks, vectors = [], {}
    for index in range(PER_DOC):
        text = f"passage {index} of {number}"
        key = f"{brain_id}-{number}-{index}"
        chunks.append(
            IndexedChunk(ChunkDraft(index, text, (), Location(None, 1, 1, 0, 9), 4, text), key)
        )
        v = rng.standard_normal(DIMS).astype(np.float32) if vector is None else vector
        vectors[key] = v / np.linalg.norm(v)
    store.replace_index(doc.id, chunks, vectors, "m", "", None, None)
    return doc.id


def _query(rng: np.random.Generator) -> np.ndarray:
    q = rng.standard_normal(DIMS).astype(np.float32)
    return q / np.linalg.norm(q)


def _ids(found: list[tuple[int, float]]) -> list[int]:
    return [i for i, _ in found]


def _recall(got: list[tuple[int, float]], want: list[tuple[int, float]]) -> float:
    return len(set(_ids(got)) & set(_ids(want))) / len(want)


@pytest.fixture
def brain(tmp_path: Path) -> tuple[SqliteStore, SqliteStore, int, list[int]]:
    """(graph store, exact store, brain id, document ids): 150 documents, 450 vectors; every
    third document tagged "odd" is not, every other one "even"."""
    store = _store(tmp_path)
    brain = store.ensure_brain("b")
    rng = np.random.default_rng(3)
    docs = [
        _add(store, brain.id, n, rng, tags=("even",) if n % 2 == 0 else ("odd",))
        for n in range(150)
    ]
    return store, _store(tmp_path, ann=None), brain.id, docs


def _graph(store: SqliteStore, brain_id: int) -> AnnIndex | None:
    index = store.search_index
    return index.ann(brain_id, "m", index.matrix(brain_id, "m"))


def test_the_graph_finds_what_the_exact_scan_finds(
    brain: tuple[SqliteStore, SqliteStore, int, list[int]],
) -> None:
    store, exact, brain_id, _ = brain
    rng = np.random.default_rng(11)
    recalls = []
    for _ in range(100):
        query = _query(rng)
        got = store.vector_search(brain_id, "m", query, 10, ALL)
        want = exact.vector_search(brain_id, "m", query, 10, ALL)
        assert len(got) == 10
        recalls.append(_recall(got, want))
        # Every score is the exact one, whichever way the candidate was found.
        scores = dict(exact.vector_search(brain_id, "m", query, 450, ALL))
        assert all(abs(s - scores[i]) < 1e-6 for i, s in got)
        assert [s for _, s in got] == sorted((s for _, s in got), reverse=True)
    assert np.mean(recalls) >= 0.95
    graph = _graph(store, brain_id)
    assert graph is not None and graph.size == 450  # the graph answered, not the scan
    assert _graph(exact, brain_id) is None


def test_a_small_brain_keeps_the_exact_scan(tmp_path: Path) -> None:
    store = _store(tmp_path, ann=1000)
    brain = store.ensure_brain("b")
    rng = np.random.default_rng(4)
    for n in range(20):
        _add(store, brain.id, n, rng)
    assert len(store.vector_search(brain.id, "m", _query(rng), 5, ALL)) == 5
    assert _graph(store, brain.id) is None
    assert not ann_path(tmp_path / "index", brain.id, "m").exists()


def test_deletes_and_additions_are_followed(
    brain: tuple[SqliteStore, SqliteStore, int, list[int]],
) -> None:
    store, exact, brain_id, docs = brain
    rng = np.random.default_rng(12)
    query = _query(rng)
    first = store.vector_search(brain_id, "m", query, 10, ALL)
    graph = _graph(store, brain_id)
    assert graph is not None
    top_doc = store.chunks_with_documents([first[0][0]])[first[0][0]][1].id
    store.delete_document(brain_id, top_doc)
    added = _add(store, brain_id, 999, rng, vector=query)  # three chunks exactly on the query

    got = store.vector_search(brain_id, "m", query, 10, ALL)
    owners = {i: d.id for i, (_, d) in store.chunks_with_documents(_ids(got)).items()}
    assert top_doc not in owners.values()  # a deleted chunk is never returned
    assert [owners[i] for i in _ids(got)[:3]] == [added] * 3  # the new ones come first
    assert got[0][1] == pytest.approx(1.0, abs=1e-5)
    assert _graph(store, brain_id) is graph  # caught up in place, not rebuilt
    assert graph.size == 450 and graph.dead == 3  # three out, three in
    assert _recall(got, exact.vector_search(brain_id, "m", query, 10, ALL)) >= 0.9

    # A document indexed again (new vectors for the same passages) moves with it.
    again = _add(store, brain_id, 1000, rng, vector=-query)
    assert again not in {
        d.id
        for _, d in store.chunks_with_documents(
            _ids(store.vector_search(brain_id, "m", query, 30, ALL))
        ).values()
    }
    assert docs  # the fixture's documents are still there


def test_filters_are_honoured_without_losing_recall(
    brain: tuple[SqliteStore, SqliteStore, int, list[int]],
) -> None:
    store, exact, brain_id, docs = brain
    with store.db.write() as conn:  # a third of the documents written a year earlier
        conn.execute(
            "UPDATE documents SET created_at = '2020-01-01 00:00:00' WHERE id % 3 = 0"
            " AND brain_id = ?",
            (brain_id,),
        )
    rng = np.random.default_rng(13)
    cases = [
        SearchFilters(tags=("even",)),  # half the brain: the graph, over-fetched
        SearchFilters(created_before="2021-01-01"),  # a third
        SearchFilters(document_ids=tuple(docs[:3])),  # 9 of 450 vectors: the exact scan
        SearchFilters(tags=("odd",), created_before="2021-01-01"),  # a sixth
    ]
    for filters in cases:
        where = exact.search_index._allowed_chunks(brain_id, filters)
        assert where is not None
        allowed = set(where.tolist())
        recalls = []
        for _ in range(30):
            query = _query(rng)
            got = store.vector_search(brain_id, "m", query, 10, filters)
            want = exact.vector_search(brain_id, "m", query, 10, filters)
            assert set(_ids(got)) <= allowed
            assert len(got) == len(want) == min(10, len(allowed))
            recalls.append(_recall(got, want))
        assert np.mean(recalls) >= 0.95, filters


def test_a_new_process_loads_the_saved_graph(
    tmp_path: Path,
    brain: tuple[SqliteStore, SqliteStore, int, list[int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, _, brain_id, _ = brain
    query = _query(np.random.default_rng(14))
    before = store.vector_search(brain_id, "m", query, 10, ALL)
    saved = ann_path(tmp_path / "index", brain_id, "m")
    assert saved.exists()

    builds: list[int] = []
    original = AnnIndex.build.__func__  # type: ignore[attr-defined]

    def counted(cls: type[AnnIndex], *args: object) -> AnnIndex:
        builds.append(1)
        return original(cls, *args)  # type: ignore[no-any-return]

    monkeypatch.setattr(AnnIndex, "build", classmethod(counted))
    second = _store(tmp_path)
    assert second.vector_search(brain_id, "m", query, 10, ALL) == before
    assert builds == []  # loaded, not built

    store.delete_brain(brain_id)
    assert not saved.exists()  # a deleted brain leaves no graph behind


@pytest.mark.parametrize("damage", ["body", "header", "truncated", "other brain"])
def test_a_damaged_or_stale_file_is_rebuilt_not_trusted(
    tmp_path: Path,
    brain: tuple[SqliteStore, SqliteStore, int, list[int]],
    damage: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    store, exact, brain_id, _ = brain
    rng = np.random.default_rng(15)
    store.vector_search(brain_id, "m", _query(rng), 10, ALL)
    saved = ann_path(tmp_path / "index", brain_id, "m")
    data = bytearray(saved.read_bytes())
    if damage == "body":
        # Graph bytes a reader could parse: only the digest tells them from the real ones.
        data[-4000:-2000] = bytes(2000)
    elif damage == "header":
        data[20:40] = b"x" * 20
    elif damage == "truncated":
        data = data[: len(data) // 2]
    else:  # a brain deleted and made again under the same id: its creation time differs
        with store.db.write() as conn:
            conn.execute("UPDATE brains SET created_at = '2001-01-01' WHERE id = ?", (brain_id,))
    saved.write_bytes(bytes(data))

    fresh = _store(tmp_path)
    with caplog.at_level(logging.WARNING, logger="loci.store.vector_ann"):
        graph = _graph(fresh, brain_id)
    assert graph is not None and graph.size == 450  # rebuilt from the stored vectors
    if damage != "other brain":
        assert "ignoring the unreadable vector graph" in caplog.text
    query = _query(rng)
    got = fresh.vector_search(brain_id, "m", query, 10, ALL)
    assert _recall(got, exact.vector_search(brain_id, "m", query, 10, ALL)) >= 0.9
    assert vector_ann.load(saved, _identity(fresh, brain_id), DIMS, 10**9, 0) is not None


def _identity(store: SqliteStore, brain_id: int) -> MatrixIdentity:
    created = store.db.scalar("SELECT created_at FROM brains WHERE id = ?", (brain_id,))
    return MatrixIdentity(brain_id, str(created), "m")


def test_a_large_graph_is_built_in_the_background_while_the_scan_answers(
    brain: tuple[SqliteStore, SqliteStore, int, list[int]],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store, exact, brain_id, _ = brain
    monkeypatch.setattr(search_index, "ANN_SYNC_BUILD_MAX", 100)
    release = threading.Event()
    original = store.search_index._build_ann

    def slow(matrix: VectorMatrix) -> AnnIndex:
        release.wait(10)
        return original(matrix)

    monkeypatch.setattr(store.search_index, "_build_ann", slow)
    query = _query(np.random.default_rng(16))
    want = exact.vector_search(brain_id, "m", query, 10, ALL)
    assert store.vector_search(brain_id, "m", query, 10, ALL) == want  # the exact scan
    assert store.search_index._anns == {}
    release.set()
    for thread in threading.enumerate():
        if thread.name == "loci-ann-build":
            thread.join(10)
    graph = _graph(store, brain_id)
    assert graph is not None and graph.size == 450


def test_a_process_that_made_a_graph_can_still_load_the_embedder() -> None:
    """usearch's extension loaded first crashes ONNX Runtime's import (vector_ann.py)."""
    script = (
        "from loci.store.vector_ann import AnnIndex; import numpy as np;"
        " g = AnnIndex.build(0, 8, np.ones((1, 8)), []);"
        " import onnxruntime; print(g.size)"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"
