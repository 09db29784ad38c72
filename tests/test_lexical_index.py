"""The in-memory BM25 index: at FTS5's k1 and b it ranks exactly as FTS5's bm25() does; it keeps
up with changes, uses its own k1 and b by default, and is saved beside the database.

Both paths run on one real SQLite store: `fts_search` is FTS5's bm25(), `text_search` takes the
index because the threshold is set to one chunk.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import pytest

from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.search.lexical import query_terms
from loci.store.lexical_files import index_path
from loci.store.lexical_index import FTS5_B, FTS5_K1, K1, B
from loci.store.sqlite import SqliteStore, search_index
from loci.store.sqlite.search_index import SearchIndex

# Inflections (stemming), diacritics, words common and rare.
VOCABULARY = """
boiler pressure valve heating running runs ran runner committee budget annual maintenance
enzyme activity cold water fish protein expression exercise adults sensor error startup
café naïve résumé inspection supplier parts spring security review payment service
temperature decided decide decision remote work friday codes reported older changes
"""
WORDS = tuple(VOCABULARY.split())
QUESTIONS = [
    "how do I bring the boiler pressure back up",
    "effects of temperature on enzyme activity in cold water fish",
    "which supplier delivered the replacement parts late last spring",
    "when is the next inspection of the heating system due",
    "what did the committee decide about remote work",
    "cafe resume naive runners",
    "security review of the payment service",
]


def _document(store: SqliteStore, brain_id: int, number: int, rng: random.Random) -> int:
    name = f"doc-{number}.txt"
    title = " ".join(rng.choices(WORDS, k=3)) if number % 3 else None
    doc = store.create_document(
        brain_id,
        NewDocument("file", name, title, None, "text/plain", 10, f"{number:064d}"),
        "index",
    )
    chunks = []
    for index in range(rng.randint(1, 6)):
        # Zipf-like: early words are common, late ones rare, so idf varies (and some floor).
        words = [WORDS[min(int(rng.paretovariate(0.8)) - 1, len(WORDS) - 1)] for _ in range(40)]
        text = " ".join(words[: rng.randint(5, 40)]) + "."
        headings = ("Part " + rng.choice(WORDS),) if index % 2 else ()
        draft = ChunkDraft(
            index, text, headings, Location(None, 1, 1, 0, len(text)), len(words), text
        )
        chunks.append(IndexedChunk(draft, f"{number}-{index}"))
    vectors = {c.embed_hash: np.full(4, 0.5, np.float32) for c in chunks}
    store.replace_index(doc.id, chunks, vectors, "m", "", None, None)
    return doc.id


def _same_ranking(store: SqliteStore, brain_id: int, filters: SearchFilters) -> None:
    store.search_index.lexical_index(brain_id)  # built now, so text_search takes it
    for question in QUESTIONS:
        terms = query_terms(question)
        exact = store.search_index.fts_search(brain_id, terms, 25, filters)
        indexed = store.text_search(brain_id, terms, 25, filters)
        assert [s for _, s in indexed] == pytest.approx([s for _, s in exact], rel=1e-9)
        # Equal scores may come back in either order; everything above the last score may not.
        last = exact[-1][1] if exact else 0.0
        assert {i for i, s in indexed if s > last + 1e-9} == {
            i for i, s in exact if s > last + 1e-9
        }
        scores = dict(exact)
        for chunk_id, score in indexed:
            if chunk_id in scores:
                assert score == pytest.approx(scores[chunk_id], rel=1e-9)


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=1, bm25=(FTS5_K1, FTS5_B))


def test_index_ranks_exactly_as_fts5(store: SqliteStore) -> None:
    brain = store.ensure_brain("big")
    rng = random.Random(3)
    for number in range(150):
        _document(store, brain.id, number, rng)
    _same_ranking(store, brain.id, SearchFilters())
    some = tuple(store.document_ids(brain.id)[::4])
    _same_ranking(store, brain.id, SearchFilters(document_ids=some))


def test_index_catches_up_with_added_replaced_and_deleted_chunks(store: SqliteStore) -> None:
    brain = store.ensure_brain("big")
    rng = random.Random(5)
    ids = [_document(store, brain.id, number, rng) for number in range(60)]
    index = store.search_index.lexical_index(brain.id)
    _same_ranking(store, brain.id, SearchFilters())
    for doc_id in ids[:10]:
        store.delete_document(brain.id, doc_id)
    for number in range(60, 80):
        _document(store, brain.id, number, rng)
    store.requeue_document(brain.id, ids[20], "index")
    chunk = store.list_chunks(brain.id, ids[20])[0]
    replacement = ChunkDraft(0, "boiler boiler valve", (), Location(None, 1, 1, 0, 19), 3, "new")
    store.replace_index(
        ids[20],
        [IndexedChunk(replacement, "new")],
        {"new": np.ones(4, np.float32)},
        "m",
        "",
        None,
        None,
    )
    _same_ranking(store, brain.id, SearchFilters())
    assert store.search_index.lexical_index(brain.id) is index  # caught up in place, not rebuilt
    assert chunk.id not in {
        i for i, _ in store.text_search(brain.id, ["boiler"], 30, SearchFilters())
    }
    assert index.size == store.stats(brain.id).chunks
    for number in range(80, 200):  # many small catch-ups: small segments get merged
        _document(store, brain.id, number, rng)
        store.text_search(brain.id, ["boiler"], 5, SearchFilters())
    assert len(index.segments) <= 10
    _same_ranking(store, brain.id, SearchFilters())


def test_index_keeps_brains_apart_and_splits_phrases(store: SqliteStore) -> None:
    rng = random.Random(7)
    a, b = store.ensure_brain("a"), store.ensure_brain("b")
    for number in range(20):
        _document(store, a.id, number, rng)
        _document(store, b.id, 100 + number, rng)
    owned = {c.id for d in store.document_ids(a.id) for c in store.list_chunks(a.id, d)}
    store.search_index.lexical_index(a.id)
    hits = store.text_search(a.id, ["boiler", "pressure", "valve"], 30, SearchFilters())
    assert hits and {i for i, _ in hits} <= owned
    # "don't" is two FTS tokens, a phrase to FTS5; the index keeps no positions and counts both
    phrase = store.text_search(a.id, ["don't", "boiler"], 30, SearchFilters())
    assert phrase == store.text_search(a.id, ["don", "t", "boiler"], 30, SearchFilters())


def test_small_brains_stay_on_fts5(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=1000)
    brain = store.ensure_brain("small")
    rng = random.Random(11)
    for number in range(10):
        _document(store, brain.id, number, rng)
    store.text_search(brain.id, ["boiler"], 5, SearchFilters())
    assert store.search_index._lexical == {}  # never built


def test_first_search_answers_from_fts5_while_the_index_builds(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(search_index, "SYNC_BUILD_MAX_CHUNKS", 0)  # every brain counts as big
    brain = store.ensure_brain("big")
    rng = random.Random(13)
    for number in range(40):
        _document(store, brain.id, number, rng)
    terms = ["boiler", "valve"]
    exact = store.search_index.fts_search(brain.id, terms, 10, SearchFilters())
    assert store.text_search(brain.id, terms, 10, SearchFilters()) == exact
    deadline = time.monotonic() + 30
    while store.search_index._building and time.monotonic() < deadline:
        time.sleep(0.01)
    assert brain.id in store.search_index._lexical and not store.search_index._building
    indexed = store.text_search(brain.id, terms, 10, SearchFilters())
    assert [s for _, s in indexed] == pytest.approx([s for _, s in exact], rel=1e-9)


def test_default_scoring_is_bm25_at_its_own_k1_and_b(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "loci.db")
    assert (K1, B) != (FTS5_K1, FTS5_B)
    brain = store.ensure_brain("small")
    doc = store.create_document(
        brain.id, NewDocument("file", "a.txt", None, None, "text/plain", 1, "1" * 64), "index"
    )
    texts = ["boiler valve", "boiler pressure pressure pressure pressure", "kettle", "tea", "cup",
             "mug"]  # fmt: skip
    chunks = [
        IndexedChunk(ChunkDraft(i, t, (), Location(None, 1, 1, 0, len(t)), 2, t), f"h{i}")
        for i, t in enumerate(texts)
    ]
    store.replace_index(doc.id, chunks, {c.embed_hash: np.ones(4, np.float32) for c in chunks},
                        "m", "", None, None)  # fmt: skip
    hits = dict(store.text_search(brain.id, ["boiler"], 10, SearchFilters()))
    ids = [c.id for c in store.list_chunks(brain.id, doc.id)]
    # An FTS row holds the brain token and the title, "a" (the file's name, `index_title`),
    # besides the body.
    lengths = [1 + 1 + len(t.split()) for t in texts]
    mean = sum(lengths) / len(lengths)
    idf = np.log((6 - 2 + 0.5) / (2 + 0.5))
    expected = [idf * (K1 + 1) / (1 + K1 * (1 - B + B * n / mean)) for n in lengths[:2]]
    assert [hits[ids[0]], hits[ids[1]]] == pytest.approx(expected, rel=1e-9)
    assert hits != dict(store.search_index.fts_search(brain.id, ["boiler"], 10, SearchFilters()))


def test_index_is_saved_and_a_new_process_loads_it_and_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "loci.db"
    first = SqliteStore(path)
    brain = first.ensure_brain("notes")
    rng = random.Random(17)
    for number in range(30):
        _document(first, brain.id, number, rng)
    before = first.text_search(brain.id, ["boiler", "valve"], 20, SearchFilters())
    saved = index_path(tmp_path / "index", brain.id)
    assert saved.exists()

    second = SqliteStore(path)
    built: list[int] = []
    original = SearchIndex._index_rows

    def spy(self: SearchIndex, brain_id: int, chunk_ids: object) -> object:
        built.append(0 if chunk_ids is None else 1)
        return original(self, brain_id, chunk_ids)  # type: ignore[arg-type]

    monkeypatch.setattr(SearchIndex, "_index_rows", spy)
    assert second.text_search(brain.id, ["boiler", "valve"], 20, SearchFilters()) == before
    assert built == []  # loaded from the file, not rebuilt from the chunks
    for number in range(30, 40):  # written by the first process, after the file was saved
        _document(first, brain.id, number, rng)
    caught_up = second.text_search(brain.id, ["boiler", "valve"], 20, SearchFilters())
    assert built == [1]  # only the changed chunks were read
    fresh = SqliteStore(path, lexical_index_min_chunks=1)
    fresh.search_index.folder = tmp_path / "elsewhere"  # no saved file: a full build
    assert fresh.text_search(brain.id, ["boiler", "valve"], 20, SearchFilters()) == caught_up
    first.delete_brain(brain.id)
    assert not saved.exists()  # a deleted brain leaves no index behind


def test_a_saved_index_that_does_not_match_is_rebuilt(tmp_path: Path) -> None:
    path = tmp_path / "loci.db"
    store = SqliteStore(path)
    brain = store.ensure_brain("notes")
    rng = random.Random(19)
    for number in range(10):
        _document(store, brain.id, number, rng)
    expected = store.text_search(brain.id, ["boiler"], 10, SearchFilters())
    saved = index_path(tmp_path / "index", brain.id)
    # other scoring parameters: the file is not used (and is replaced)
    other = SqliteStore(path, bm25=(1.5, 0.9))
    assert other.text_search(brain.id, ["boiler"], 10, SearchFilters()) != expected
    # a damaged file: ignored with a warning, the index rebuilt
    saved.write_bytes(b"not an index")
    again = SqliteStore(path)
    assert again.text_search(brain.id, ["boiler"], 10, SearchFilters()) == expected
