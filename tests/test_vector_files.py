"""The vector matrix is saved beside the database and a new process maps it instead of reading
every vector out of SQLite; a file that does not fit is ignored, never trusted.

Separate `SqliteStore` instances on one database file play separate processes.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.store.sqlite import SqliteStore, search_index
from loci.store.sqlite.search_index import SearchIndex
from loci.store.vector_files import matrix_path

ALL = SearchFilters()
DIMS = 16


def _add(store: SqliteStore, brain_id: int, number: int, rng: np.random.Generator) -> int:
    doc = store.create_document(
        brain_id,
        NewDocument("file", f"d{number}.txt", None, None, "text/plain", 10, f"{number:064d}"),
        "index",
    )
    chunks, vectors = [], {}
    for index in range(3):
        text = f"passage {index} of {number}"
        chunk = ChunkDraft(index, text, (), Location(None, 1, 1, 0, len(text)), 4, text)
        vector = rng.standard_normal(DIMS).astype(np.float32)
        vectors[f"{brain_id}-{number}-{index}"] = vector / np.linalg.norm(vector)
        chunks.append(IndexedChunk(chunk, f"{brain_id}-{number}-{index}"))
    store.replace_index(doc.id, chunks, vectors, "m", "", None, None)
    return doc.id


def _query(seed: int) -> np.ndarray:
    q = np.random.default_rng(seed).standard_normal(DIMS).astype(np.float32)
    return q / np.linalg.norm(q)


@pytest.fixture
def full_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Records each read of the vectors table: "all" for a full rebuild, "some" for a catch-up."""
    reads: list[str] = []
    original = SearchIndex._vectors_of

    def spy(
        self: SearchIndex, brain_id: int, model: str, chunk_ids: list[int] | None
    ) -> tuple[list[int], list[bytes]]:
        reads.append("all" if chunk_ids is None else "some")
        return original(self, brain_id, model, chunk_ids)

    monkeypatch.setattr(SearchIndex, "_vectors_of", spy)
    return reads


def _fresh(tmp_path: Path) -> SqliteStore:
    """A process that has no saved file: it builds the matrix from SQLite."""
    store = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
    store.search_index.folder = tmp_path / f"empty-{len(list(tmp_path.iterdir()))}"
    return store


def test_a_new_process_maps_the_saved_matrix_and_catches_up(
    tmp_path: Path, full_reads: list[str]
) -> None:
    first = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
    brain = first.ensure_brain("b")
    rng = np.random.default_rng(5)
    docs = [_add(first, brain.id, n, rng) for n in range(120)]
    query = _query(1)
    before = first.vector_search(brain.id, "m", query, 20, ALL)
    assert full_reads == ["all"]
    saved = matrix_path(tmp_path / "index", brain.id, "m")
    assert saved.exists()

    full_reads.clear()
    second = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
    assert second.vector_search(brain.id, "m", query, 20, ALL) == before
    assert full_reads == []  # not one vector read from SQLite
    matrix = second.search_index.matrix(brain.id, "m")
    assert isinstance(matrix.matrix, np.memmap)  # mapped from the file, not copied
    assert matrix.int8 is not None  # the int8 copy is built from the mapped matrix

    for doc_id in docs[:4]:  # written by the first process after the file was saved
        first.delete_document(brain.id, doc_id)
    added = [_add(first, brain.id, n, rng) for n in range(120, 126)]
    full_reads.clear()
    got = second.vector_search(brain.id, "m", query, 30, ALL)
    assert full_reads == ["some"]  # only the changed chunks were read
    want = _fresh(tmp_path).vector_search(brain.id, "m", query, 30, ALL)
    assert [i for i, _ in got] == [i for i, _ in want]
    assert np.allclose([s for _, s in got], [s for _, s in want])
    every = {i for i, _ in second.vector_search(brain.id, "m", query, 1000, ALL)}
    assert len(every) == 122 * 3
    found = {d.id for _, d in second.chunks_with_documents(list(every)).values()}
    assert found.isdisjoint(docs[:4]) and found >= set(added)  # deleted gone, added found

    first.delete_brain(brain.id)
    assert not saved.exists()  # a deleted brain leaves no matrix behind


def test_a_file_that_does_not_fit_is_ignored(
    tmp_path: Path, full_reads: list[str], caplog: pytest.LogCaptureFixture
) -> None:
    store = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
    mine, other = store.ensure_brain("mine"), store.ensure_brain("other")
    rng = np.random.default_rng(8)
    for n in range(40):
        _add(store, mine.id, n, rng)
        _add(store, other.id, 100 + n, rng)
    query = _query(2)
    expected = store.vector_search(mine.id, "m", query, 15, ALL)
    store.vector_search(other.id, "m", query, 15, ALL)
    path = matrix_path(tmp_path / "index", mine.id, "m")
    good = path.read_bytes()

    def fresh_process_rebuilds() -> None:
        full_reads.clear()
        again = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
        assert again.vector_search(mine.id, "m", query, 15, ALL) == expected
        assert full_reads == ["all"]
        assert path.read_bytes() == good  # and the right file is written back

    shutil.copy(matrix_path(tmp_path / "index", other.id, "m"), path)  # another brain's
    fresh_process_rebuilds()
    path.write_bytes(good[:-40])  # cut short
    with caplog.at_level(logging.WARNING):
        fresh_process_rebuilds()
    assert "ignoring the unreadable vector matrix file" in caplog.text
    path.write_bytes(b"LOCIVEC1" + b"\xff" * 100)  # damaged
    fresh_process_rebuilds()
    # A file for another model of the same brain is another file: this one is left alone.
    assert not matrix_path(tmp_path / "index", mine.id, "other-model").exists()


def test_a_file_older_than_the_pruned_log_is_rebuilt(
    tmp_path: Path, full_reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_index, "SAVE_AFTER_CHANGES", 1)
    monkeypatch.setattr(search_index, "LOG_RETAIN", 0)
    store = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
    brain = store.ensure_brain("b")
    rng = np.random.default_rng(9)
    docs = [_add(store, brain.id, n, rng) for n in range(30)]
    query = _query(3)
    store.vector_search(brain.id, "m", query, 10, ALL)  # the file, at this position
    at = store.search_index.matrix(brain.id, "m").seq
    for doc_id in docs[:5]:  # 15 entries, more than the 9 kept (a tenth of the chunks)
        store.delete_document(brain.id, doc_id)
    _add(store, brain.id, 30, rng)
    store.text_search(brain.id, ["passage"], 10, ALL)  # saves BM25, prunes the log past it
    floor = store.db.scalar("SELECT seq FROM chunk_log_floor WHERE brain_id = ?", (brain.id,))
    assert floor > at

    full_reads.clear()
    later = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
    got = later.vector_search(brain.id, "m", query, 100, ALL)
    assert full_reads == ["all"]  # the log cannot say what changed since the file: rebuilt
    assert got == _fresh(tmp_path).vector_search(brain.id, "m", query, 100, ALL)
    assert len(got) == 78


def test_an_unwritable_index_folder_still_searches(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    store = SqliteStore(tmp_path / "loci.db", vector_int8_min_chunks=1)
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file where the index folder should be")
    store.search_index.folder = blocked / "index"
    brain = store.ensure_brain("b")
    rng = np.random.default_rng(4)
    for n in range(20):
        _add(store, brain.id, n, rng)
    query = _query(4)
    with caplog.at_level(logging.WARNING):
        got = store.vector_search(brain.id, "m", query, 10, ALL)
    assert "could not save the vector matrix" in caplog.text
    assert got == _fresh(tmp_path).vector_search(brain.id, "m", query, 10, ALL)
