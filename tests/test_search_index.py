"""The SQLite store's search engine on its own: a `SearchIndex` over a real database file, with
its own connection, reading what a `SqliteStore` (another connection: another process, in
effect) writes. It builds from the rows, catches up from the change log, saves and reloads its
files, and prunes the log without any reader missing a change."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.models import SearchFilters
from loci.store.lexical_files import index_path
from loci.store.lexical_index import K1, B
from loci.store.sqlite import SqliteStore, search_index
from loci.store.sqlite.connection import Database
from loci.store.sqlite.search_index import SearchIndex
from loci.store.vector_files import matrix_path
from tests.support.word_chunks import add_words, word_vector

ALL = SearchFilters()


def _index(path: Path, folder: Path) -> SearchIndex:
    return SearchIndex(Database(path), folder, bm25=(K1, B))


def _texts(store: SqliteStore, hits: list[tuple[int, float]]) -> list[str]:
    found = store.chunks_with_documents([i for i, _ in hits])
    return [found[i][0].text for i, _ in hits]


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / "loci.db")


def test_builds_from_the_rows_and_catches_up_with_another_connections_writes(
    store: SqliteStore, tmp_path: Path
) -> None:
    brain = store.ensure_brain("notes")
    gone = add_words(store, brain.id, "sea.txt", ["walrus", "harbour"])
    add_words(store, brain.id, "land.txt", ["lantern", "meadow"])
    index = _index(store.db.path, tmp_path / "own-index")

    assert _texts(store, index.text_search(brain.id, ["walrus"], 10, ALL)) == ["walrus notes"]
    nearest = index.vector_search(brain.id, "m", word_vector("meadow"), 1, ALL)
    assert _texts(store, nearest) == ["meadow notes"]
    lexical, matrix = index.lexical_index(brain.id), index.matrix(brain.id, "m")

    store.delete_document(brain.id, gone)  # written through the store's own connection
    add_words(store, brain.id, "sky.txt", ["pelican"])
    assert index.text_search(brain.id, ["walrus"], 10, ALL) == []
    assert _texts(store, index.text_search(brain.id, ["pelican"], 10, ALL)) == ["pelican notes"]
    near = index.vector_search(brain.id, "m", word_vector("walrus"), 10, ALL)
    assert sorted(_texts(store, near)) == ["lantern notes", "meadow notes", "pelican notes"]
    # caught up in place from the change log, not rebuilt
    assert index.lexical_index(brain.id) is lexical and index.matrix(brain.id, "m") is matrix
    only = SearchFilters(document_ids=(gone + 1,))  # land.txt
    assert _texts(store, index.text_search(brain.id, ["notes"], 10, only)) == [
        "lantern notes",
        "meadow notes",
    ]


def test_saves_its_files_and_a_new_process_loads_them_instead_of_rebuilding(
    store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    brain = store.ensure_brain("notes")
    for number in range(5):
        add_words(store, brain.id, f"d{number}.txt", [f"word{number}", "common"])
    folder = tmp_path / "index"
    first = _index(store.db.path, folder)
    text = first.text_search(brain.id, ["common", "word3"], 10, ALL)
    vector = first.vector_search(brain.id, "m", word_vector("word2"), 10, ALL)
    assert index_path(folder, brain.id).exists() and matrix_path(folder, brain.id, "m").exists()

    full_reads: list[str] = []
    rows, vectors = SearchIndex._index_rows, SearchIndex._vectors_of

    def index_rows(self: SearchIndex, brain_id: int, ids: list[int] | None) -> object:
        if ids is None:
            full_reads.append("rows")
        return rows(self, brain_id, ids)

    def vectors_of(self: SearchIndex, brain_id: int, model: str, ids: list[int] | None) -> object:
        if ids is None:
            full_reads.append("vectors")
        return vectors(self, brain_id, model, ids)

    monkeypatch.setattr(SearchIndex, "_index_rows", index_rows)
    monkeypatch.setattr(SearchIndex, "_vectors_of", vectors_of)
    second = _index(store.db.path, folder)
    assert second.text_search(brain.id, ["common", "word3"], 10, ALL) == text
    assert second.vector_search(brain.id, "m", word_vector("word2"), 10, ALL) == vector
    assert full_reads == []  # both loaded from the files

    second.forget(brain.id)  # a deleted brain leaves no file behind
    assert not index_path(folder, brain.id).exists()
    assert not matrix_path(folder, brain.id, "m").exists()


def test_pruning_the_log_leaves_no_reader_behind(
    store: SqliteStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Save after every change and keep no spare entries: pruning on a test-sized brain.
    monkeypatch.setattr(search_index, "SAVE_AFTER_CHANGES", 1)
    monkeypatch.setattr(search_index, "LOG_RETAIN", 0)
    brain = store.ensure_brain("notes")
    gone = add_words(store, brain.id, "old.txt", ["walrus"])
    folder = tmp_path / "index"
    writer, lagging = _index(store.db.path, folder), _index(store.db.path, tmp_path / "other")
    writer.text_search(brain.id, ["walrus"], 10, ALL)
    lagging.text_search(brain.id, ["walrus"], 10, ALL)
    lagging.vector_search(brain.id, "m", word_vector("walrus"), 10, ALL)
    behind = lagging.lexical_index(brain.id).seq

    store.delete_document(brain.id, gone)
    add_words(store, brain.id, "new.txt", ["pelican"])
    writer.text_search(brain.id, ["pelican"], 10, ALL)  # catches up, saves, prunes
    floor = int(store.db.scalar("SELECT seq FROM chunk_log_floor WHERE brain_id = ?", (brain.id,)))
    assert floor == writer.lexical_index(brain.id).seq > behind
    assert not store.db.scalar("SELECT count(*) FROM chunk_log WHERE brain_id = ?", (brain.id,))

    # Behind the floor, the lagging reader cannot catch up from the log: it rebuilds.
    assert lagging.text_search(brain.id, ["walrus"], 10, ALL) == []
    assert _texts(store, lagging.text_search(brain.id, ["pelican"], 10, ALL)) == ["pelican notes"]
    near = lagging.vector_search(brain.id, "m", word_vector("walrus"), 10, ALL)
    assert _texts(store, near) == ["pelican notes"]
