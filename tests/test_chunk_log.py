"""The chunk change log is pruned, and no reader silently misses what the pruning dropped.

Two `SqliteStore` instances on one database file play two processes (a server and a CLI, say):
each keeps its own in-memory BM25 index and vector matrix, caught up from `chunk_log`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.store.sqlite import SqliteStore
from loci.store.sqlite import search as sqlite_search
from loci.store.sqlite.connection import Database
from loci.store.sqlite.migrations import MIGRATIONS, migrate

DIMS = 8
ALL = SearchFilters()


def _vector(word: str) -> np.ndarray:
    """A unit vector that depends on the word only, so searches are repeatable."""
    rng = np.random.default_rng(sum(word.encode()) * 7919 + len(word))
    v = rng.standard_normal(DIMS).astype(np.float32)
    return v / np.linalg.norm(v)


def _add(store: SqliteStore, brain_id: int, name: str, words: list[str]) -> int:
    """A document with one chunk per word ("<word> notes"), each chunk's vector the word's."""
    doc = store.create_document(
        brain_id,
        NewDocument("file", name, None, None, "text/plain", 10, name.encode().hex().ljust(64, "0")),
        "index",
    )
    _reindex(store, doc.id, name, words)
    return doc.id


def _reindex(store: SqliteStore, doc_id: int, name: str, words: list[str]) -> None:
    chunks, vectors = [], {}
    for index, word in enumerate(words):
        text = f"{word} notes"
        draft = ChunkDraft(index, text, (), Location(None, 1, 1, 0, len(text)), 2, f"{name}-{word}")
        chunks.append(IndexedChunk(draft, f"{name}-{word}"))
        vectors[f"{name}-{word}"] = _vector(word)
    store.replace_index(doc_id, chunks, vectors, "m", "", None, None)


def _texts(store: SqliteStore, hits: list[tuple[int, float]]) -> set[str]:
    found = store.chunks_with_documents([i for i, _ in hits])
    return {found[i][0].text for i, _ in hits}


def _log_rows(store: SqliteStore, brain_id: int) -> int:
    return int(store.db.scalar("SELECT count(*) FROM chunk_log WHERE brain_id = ?", (brain_id,)))


@pytest.fixture
def pruning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Save the BM25 index after every change and keep no spare log entries, so pruning
    happens on a test-sized brain exactly as it does on a big one after thousands of changes."""
    monkeypatch.setattr(sqlite_search, "SAVE_AFTER_CHANGES", 1)
    monkeypatch.setattr(sqlite_search, "LOG_RETAIN", 0)


@pytest.mark.usefixtures("pruning")
def test_a_store_behind_the_pruned_log_still_sees_every_change(tmp_path: Path) -> None:
    server = SqliteStore(tmp_path / "loci.db")
    cli = SqliteStore(tmp_path / "loci.db")
    brain = server.ensure_brain("notes")
    gone = _add(server, brain.id, "old.txt", ["walrus", "harbour"])
    _add(server, brain.id, "keep.txt", ["lantern", "meadow"])
    # The lagging process builds its index and matrix now, then stops searching.
    assert _texts(cli, cli.text_search(brain.id, ["walrus"], 10, ALL)) == {"walrus notes"}
    assert cli.vector_search(brain.id, "m", _vector("walrus"), 1, ALL)
    behind = cli._lexical[brain.id].seq

    server.delete_document(brain.id, gone)
    _add(server, brain.id, "new.txt", ["pelican"])
    server.text_search(brain.id, ["pelican"], 10, ALL)  # catches up, saves, prunes
    floor = int(server.db.scalar("SELECT seq FROM chunk_log_floor WHERE brain_id = ?", (brain.id,)))
    assert floor > behind  # what the lagging process would need is gone from the log
    assert not server.db.scalar(
        "SELECT count(*) FROM chunk_log WHERE brain_id = ? AND seq <= ?", (brain.id, floor)
    )

    assert cli.text_search(brain.id, ["walrus"], 10, ALL) == []
    assert _texts(cli, cli.text_search(brain.id, ["pelican"], 10, ALL)) == {"pelican notes"}
    nearest = cli.vector_search(brain.id, "m", _vector("pelican"), 10, ALL)
    assert _texts(cli, nearest[:1]) == {"pelican notes"}
    assert _texts(cli, nearest) == {"lantern notes", "meadow notes", "pelican notes"}
    near_walrus = _texts(cli, cli.vector_search(brain.id, "m", _vector("walrus"), 10, ALL))
    assert near_walrus == {"lantern notes", "meadow notes", "pelican notes"}  # deleted: gone


@pytest.mark.usefixtures("pruning")
def test_the_log_stays_bounded_over_many_reindexes(tmp_path: Path) -> None:
    server = SqliteStore(tmp_path / "loci.db")
    cli = SqliteStore(tmp_path / "loci.db")
    brain = server.ensure_brain("notes")
    doc = _add(server, brain.id, "draft.txt", ["alpha", "beta", "gamma"])
    _add(server, brain.id, "other.txt", ["delta"])
    cli.text_search(brain.id, ["alpha"], 10, ALL)
    cli.vector_search(brain.id, "m", _vector("alpha"), 10, ALL)
    for round_ in range(60):
        words = ["alpha", "beta", "gamma"] if round_ % 2 else ["alpha", "beta", f"word{round_}"]
        _reindex(server, doc, "draft.txt", words)
        server.text_search(brain.id, ["alpha"], 10, ALL)
        server.vector_search(brain.id, "m", _vector("alpha"), 10, ALL)
        # a reindex logs 3 deletes and 3 inserts; pruning keeps the log near that
        assert _log_rows(server, brain.id) <= 6
    total = int(server.db.scalar("SELECT count(*) FROM chunk_log"))
    assert total <= 6  # 60 reindexes logged 360 entries; the rest were pruned
    # The other process, 360 entries behind a log of 6, still answers as a fresh one does.
    words = ["alpha", "beta", "gamma"]  # the last round's (word58 was the one before)
    assert _texts(cli, cli.text_search(brain.id, ["gamma"], 10, ALL)) == {"gamma notes"}
    assert cli.text_search(brain.id, ["word58"], 10, ALL) == []
    fresh = SqliteStore(tmp_path / "loci.db")
    fresh._index_dir = tmp_path / "nothing-saved"
    query = _vector("gamma")
    assert cli.vector_search(brain.id, "m", query, 10, ALL) == fresh.vector_search(
        brain.id, "m", query, 10, ALL
    )
    assert _texts(cli, cli.vector_search(brain.id, "m", query, 10, ALL)) == {
        f"{w} notes" for w in [*words, "delta"]
    }


def test_a_deleted_brain_leaves_no_log_and_the_next_brain_starts_clean(tmp_path: Path) -> None:
    first = SqliteStore(tmp_path / "loci.db")
    other = SqliteStore(tmp_path / "loci.db")
    keep = first.ensure_brain("keep")
    brain = first.ensure_brain("doomed")
    _add(first, keep.id, "keep.txt", ["meadow"])
    _add(first, brain.id, "a.txt", ["walrus", "harbour"])
    assert other.text_search(brain.id, ["walrus"], 10, ALL)
    assert other.vector_search(brain.id, "m", _vector("walrus"), 10, ALL)
    top = int(first.db.scalar("SELECT max(seq) FROM chunk_log"))

    first.delete_brain(brain.id)
    assert _log_rows(first, brain.id) == 0  # its chunks' deletes were logged, then dropped
    assert _log_rows(first, keep.id) == 1
    # Neither the id (migration 15) nor the log's seq comes back: entries are never numbered
    # below a position some process already holds.
    again = first.ensure_brain("again")
    assert again.id > brain.id
    _add(first, again.id, "b.txt", ["pelican"])
    assert (
        int(first.db.scalar("SELECT min(seq) FROM chunk_log WHERE brain_id = ?", (again.id,))) > top
    )
    # The other process still holds the old brain's index and matrix: none of it shows.
    assert other.text_search(again.id, ["walrus"], 10, ALL) == []
    assert _texts(other, other.text_search(again.id, ["pelican"], 10, ALL)) == {"pelican notes"}
    hits = other.vector_search(again.id, "m", _vector("walrus"), 10, ALL)
    assert _texts(other, hits) == {"pelican notes"}


def test_migration_keeps_the_log_and_never_reuses_a_seq(tmp_path: Path) -> None:
    db = Database(tmp_path / "loci.db")
    migrate(db, 8)
    db.execute("INSERT INTO brains(id, name) VALUES (1, 'a')")
    db.execute("INSERT INTO chunk_log(seq, brain_id, chunk_id) VALUES (3, 1, 10), (7, 1, 11)")
    db.execute("INSERT INTO chunk_log(seq, brain_id, chunk_id) VALUES (9, 2, 12)")  # brain gone
    db.close()

    store = SqliteStore(tmp_path / "loci.db")
    assert migrate(store.db) == len(MIGRATIONS)
    rows = store.db.conn.execute("SELECT seq, brain_id, chunk_id FROM chunk_log").fetchall()
    assert rows == [(3, 1, 10), (7, 1, 11)]  # kept; the deleted brain's entry dropped
    _add(store, 1, "x.txt", ["otter"])
    assert [r[0] for r in store.db.conn.execute("SELECT seq FROM chunk_log WHERE seq > 7")] == [10]
