"""The chunk change log is pruned, and no reader silently misses what the pruning dropped.

Two `SqliteStore` instances on one database file play two processes (a server and a CLI, say):
each keeps its own in-memory BM25 index and vector matrix, caught up from `chunk_log`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.models import SearchFilters
from loci.store.sqlite import SqliteStore, search_index
from loci.store.sqlite.connection import Database
from loci.store.sqlite.migrations import MIGRATIONS, migrate
from tests.support.word_chunks import add_words, reindex_words, word_vector

ALL = SearchFilters()


def _texts(store: SqliteStore, hits: list[tuple[int, float]]) -> set[str]:
    found = store.chunks_with_documents([i for i, _ in hits])
    return {found[i][0].text for i, _ in hits}


def _log_rows(store: SqliteStore, brain_id: int) -> int:
    return int(store.db.scalar("SELECT count(*) FROM chunk_log WHERE brain_id = ?", (brain_id,)))


@pytest.fixture
def pruning(monkeypatch: pytest.MonkeyPatch) -> None:
    """Save the BM25 index after every change and keep no spare log entries, so pruning
    happens on a test-sized brain exactly as it does on a big one after thousands of changes."""
    monkeypatch.setattr(search_index, "SAVE_AFTER_CHANGES", 1)
    monkeypatch.setattr(search_index, "LOG_RETAIN", 0)


@pytest.mark.usefixtures("pruning")
def test_a_store_behind_the_pruned_log_still_sees_every_change(tmp_path: Path) -> None:
    server = SqliteStore(tmp_path / "loci.db")
    cli = SqliteStore(tmp_path / "loci.db")
    brain = server.ensure_brain("notes")
    gone = add_words(server, brain.id, "old.txt", ["walrus", "harbour"])
    add_words(server, brain.id, "keep.txt", ["lantern", "meadow"])
    # The lagging process builds its index and matrix now, then stops searching.
    assert _texts(cli, cli.text_search(brain.id, ["walrus"], 10, ALL)) == {"walrus notes"}
    assert cli.vector_search(brain.id, "m", word_vector("walrus"), 1, ALL)
    behind = cli.search_index._lexical[brain.id].seq

    server.delete_document(brain.id, gone)
    add_words(server, brain.id, "new.txt", ["pelican"])
    server.text_search(brain.id, ["pelican"], 10, ALL)  # catches up, saves, prunes
    floor = int(server.db.scalar("SELECT seq FROM chunk_log_floor WHERE brain_id = ?", (brain.id,)))
    assert floor > behind  # what the lagging process would need is gone from the log
    assert not server.db.scalar(
        "SELECT count(*) FROM chunk_log WHERE brain_id = ? AND seq <= ?", (brain.id, floor)
    )

    assert cli.text_search(brain.id, ["walrus"], 10, ALL) == []
    assert _texts(cli, cli.text_search(brain.id, ["pelican"], 10, ALL)) == {"pelican notes"}
    nearest = cli.vector_search(brain.id, "m", word_vector("pelican"), 10, ALL)
    assert _texts(cli, nearest[:1]) == {"pelican notes"}
    assert _texts(cli, nearest) == {"lantern notes", "meadow notes", "pelican notes"}
    near_walrus = _texts(cli, cli.vector_search(brain.id, "m", word_vector("walrus"), 10, ALL))
    assert near_walrus == {"lantern notes", "meadow notes", "pelican notes"}  # deleted: gone


@pytest.mark.usefixtures("pruning")
def test_the_log_stays_bounded_over_many_reindexes(tmp_path: Path) -> None:
    server = SqliteStore(tmp_path / "loci.db")
    cli = SqliteStore(tmp_path / "loci.db")
    brain = server.ensure_brain("notes")
    doc = add_words(server, brain.id, "draft.txt", ["alpha", "beta", "gamma"])
    add_words(server, brain.id, "other.txt", ["delta"])
    cli.text_search(brain.id, ["alpha"], 10, ALL)
    cli.vector_search(brain.id, "m", word_vector("alpha"), 10, ALL)
    for round_ in range(60):
        words = ["alpha", "beta", "gamma"] if round_ % 2 else ["alpha", "beta", f"word{round_}"]
        reindex_words(server, doc, "draft.txt", words)
        server.text_search(brain.id, ["alpha"], 10, ALL)
        server.vector_search(brain.id, "m", word_vector("alpha"), 10, ALL)
        # a reindex logs 3 deletes and 3 inserts; pruning keeps the log near that
        assert _log_rows(server, brain.id) <= 6
    total = int(server.db.scalar("SELECT count(*) FROM chunk_log"))
    assert total <= 6  # 60 reindexes logged 360 entries; the rest were pruned
    # The other process, 360 entries behind a log of 6, still answers as a fresh one does.
    words = ["alpha", "beta", "gamma"]  # the last round's (word58 was the one before)
    assert _texts(cli, cli.text_search(brain.id, ["gamma"], 10, ALL)) == {"gamma notes"}
    assert cli.text_search(brain.id, ["word58"], 10, ALL) == []
    fresh = SqliteStore(tmp_path / "loci.db")
    fresh.search_index.folder = tmp_path / "nothing-saved"
    query = word_vector("gamma")
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
    add_words(first, keep.id, "keep.txt", ["meadow"])
    add_words(first, brain.id, "a.txt", ["walrus", "harbour"])
    assert other.text_search(brain.id, ["walrus"], 10, ALL)
    assert other.vector_search(brain.id, "m", word_vector("walrus"), 10, ALL)
    top = int(first.db.scalar("SELECT max(seq) FROM chunk_log"))

    first.delete_brain(brain.id)
    assert _log_rows(first, brain.id) == 0  # its chunks' deletes were logged, then dropped
    assert _log_rows(first, keep.id) == 1
    # Neither the id (migration 15) nor the log's seq comes back: entries are never numbered
    # below a position some process already holds.
    again = first.ensure_brain("again")
    assert again.id > brain.id
    add_words(first, again.id, "b.txt", ["pelican"])
    assert (
        int(first.db.scalar("SELECT min(seq) FROM chunk_log WHERE brain_id = ?", (again.id,))) > top
    )
    # The other process still holds the old brain's index and matrix: none of it shows.
    assert other.text_search(again.id, ["walrus"], 10, ALL) == []
    assert _texts(other, other.text_search(again.id, ["pelican"], 10, ALL)) == {"pelican notes"}
    hits = other.vector_search(again.id, "m", word_vector("walrus"), 10, ALL)
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
    add_words(store, 1, "x.txt", ["otter"])
    assert [r[0] for r in store.db.conn.execute("SELECT seq FROM chunk_log WHERE seq > 7")] == [10]
