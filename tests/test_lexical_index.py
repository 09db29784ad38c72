"""The in-memory BM25 index of large brains ranks exactly as FTS5's bm25() does, and keeps up.

Both paths run on one real SQLite store: `fts_search` is FTS5's bm25(), `text_search` takes the
index because the threshold is set to one chunk.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import numpy as np
import pytest

from loci.models import ChunkDraft, IndexedChunk, NewDocument, SearchFilters
from loci.search.lexical import query_terms
from loci.store.sqlite import SqliteStore

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
        draft = ChunkDraft(index, text, headings, None, 1, 1, 0, len(text), len(words), text)
        chunks.append(IndexedChunk(draft, f"{number}-{index}"))
    vectors = {c.embed_hash: np.ones(4, np.float32) / 2 for c in chunks}
    store.replace_index(doc.id, chunks, vectors, "m", "", None, None)
    return doc.id


def _same_ranking(store: SqliteStore, brain_id: int, filters: SearchFilters) -> None:
    store.lexical_index(brain_id)  # built now, so text_search takes it
    for question in QUESTIONS:
        terms = query_terms(question)
        exact = store.fts_search(brain_id, terms, 25, filters)
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
    return SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=1)


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
    index = store.lexical_index(brain.id)
    _same_ranking(store, brain.id, SearchFilters())
    for doc_id in ids[:10]:
        store.delete_document(brain.id, doc_id)
    for number in range(60, 80):
        _document(store, brain.id, number, rng)
    store.requeue_document(brain.id, ids[20], "index")
    chunk = store.list_chunks(brain.id, ids[20])[0]
    replacement = ChunkDraft(0, "boiler boiler valve", (), None, 1, 1, 0, 19, 3, "new")
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
    assert store.lexical_index(brain.id) is index  # caught up in place, not rebuilt
    assert chunk.id not in {
        i for i, _ in store.text_search(brain.id, ["boiler"], 30, SearchFilters())
    }
    assert index.size == store.stats(brain.id).chunks
    for number in range(80, 200):  # many small catch-ups: small segments get merged
        _document(store, brain.id, number, rng)
        store.text_search(brain.id, ["boiler"], 5, SearchFilters())
    assert len(index.segments) <= 10
    _same_ranking(store, brain.id, SearchFilters())


def test_index_keeps_brains_apart_and_falls_back_for_phrases(store: SqliteStore) -> None:
    rng = random.Random(7)
    a, b = store.ensure_brain("a"), store.ensure_brain("b")
    for number in range(20):
        _document(store, a.id, number, rng)
        _document(store, b.id, 100 + number, rng)
    owned = {c.id for d in store.document_ids(a.id) for c in store.list_chunks(a.id, d)}
    store.lexical_index(a.id)
    hits = store.text_search(a.id, ["boiler", "pressure", "valve"], 30, SearchFilters())
    assert hits and {i for i, _ in hits} <= owned
    # "don't" is two FTS tokens, a phrase: the index has no positions, so FTS5 answers.
    phrase = store.text_search(a.id, ["don't", "boiler"], 30, SearchFilters())
    assert phrase == store.fts_search(a.id, ["don't", "boiler"], 30, SearchFilters())


def test_small_brains_stay_on_fts5(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=1000)
    brain = store.ensure_brain("small")
    rng = random.Random(11)
    for number in range(10):
        _document(store, brain.id, number, rng)
    store.text_search(brain.id, ["boiler"], 5, SearchFilters())
    assert store._lexical == {}  # never built


def test_first_search_answers_from_fts5_while_the_index_builds(store: SqliteStore) -> None:
    brain = store.ensure_brain("big")
    rng = random.Random(13)
    for number in range(40):
        _document(store, brain.id, number, rng)
    terms = ["boiler", "valve"]
    exact = store.fts_search(brain.id, terms, 10, SearchFilters())
    assert store.text_search(brain.id, terms, 10, SearchFilters()) == exact
    deadline = time.monotonic() + 30
    while store._building and time.monotonic() < deadline:
        time.sleep(0.01)
    assert brain.id in store._lexical and not store._building
    indexed = store.text_search(brain.id, terms, 10, SearchFilters())
    assert [s for _, s in indexed] == pytest.approx([s for _, s in exact], rel=1e-9)
