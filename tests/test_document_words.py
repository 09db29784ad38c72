"""A passage's words are read in its document's context: the text leg blends each passage's BM25
with its whole document's (`loci.search.document_words`), from document-level term statistics
both backends keep on write (`loci.store.document_terms`).

The notes of the first test are Foam's documentation (bench/data/foam-vault, MIT): `orphans.md`
is a short note about notes nothing links to, `backlinking.md` about the notes linking to the one
open; long notes (`foam-queries.md`, `templates.md`) use the questions' words all over, and their
best passages outranked them.
"""

from __future__ import annotations

import dataclasses
import math
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from loci.context_line import index_title
from loci.models import (
    Brain,
    ChunkDraft,
    DocumentTextScores,
    IndexedChunk,
    Location,
    NewDocument,
    SearchMode,
)
from loci.search.document_words import in_document
from loci.search.engine import SearchRequest
from loci.search.lexical import query_terms
from loci.service import Loci
from loci.store.base import Store
from loci.store.lexical_index import K1, B
from loci.store.postgres import PostgresStore
from loci.store.postgres.connection import connect
from loci.store.postgres.migrations import grant, migrate
from loci.store.sqlite import SqliteStore, search_index
from loci.store.sqlite.document_rows import document_rows
from loci.store.stemming import analyze, stemmer_for
from tests.support.paths import REPO
from tests.support.pg import APP_ROLE, EmbeddedPostgres

NOTES = REPO / "bench" / "data" / "foam-vault" / "notes"


def test_the_notes_about_it_beat_long_notes_full_of_its_words(loci: Loci, brain: Brain) -> None:
    folders = ("user/features", "user/tools", "user/tools/cli")
    files = [path for folder in folders for path in sorted((NOTES / folder).glob("*.md"))]
    ids = [loci.library.add_file(brain, path).document.id for path in files]
    loci.library.wait_for(brain, ids)
    orphans = "How do I find notes that nothing links to?"
    backlinks = "Which notes point to the one I'm reading?"

    def ranked(question: str, mode: SearchMode = "hybrid") -> list[str]:
        request = SearchRequest(question, mode=mode)
        return [h.citation.name for h in loci.searching.search(brain, request)]

    assert ranked(orphans)[0] == "orphans.md"
    # In the first four: on onnxruntime 1.32 it ties block-anchors.md's fused score (0.242) for
    # third place; without the document's words it falls below fifth.
    assert "backlinking.md" in ranked(backlinks)[:4]
    # by their passages alone, long notes that use the words throughout came first (for the
    # orphans question the words' own ranking still shows it; in hybrid, how little its common
    # words say now lets the meaning put orphans.md first either way)
    engine = loci.searching.engine
    engine.params = dataclasses.replace(engine.params, document_words=0.0)
    assert ranked(orphans, "text")[0] == "foam-queries.md"
    assert ranked(backlinks).index("backlinking.md") >= 4


# Passages that overlap by a sentence, as the chunker cuts them: each a slice of the text.
TEXTS = {
    "Otters": (
        "Sea otters eat urchins. Urchins graze kelp forests. Otters keep the urchins down. "
        "Kelp forests shelter fish. Otters hold hands while they sleep."
    ),
    "Boilers": (
        "The boiler shows error F22 when its pressure falls. Refill the boiler to one bar. "
        "A boiler service each year keeps the pressure steady."
    ),
    "Kelp": "Kelp grows fast in cold water.",
    "Bread": "A long cold proof makes sourdough bread. Bread needs salt. Kelp bread is odd.",
}
QUESTIONS = ["otters urchins kelp", "boiler pressure", "cold kelp bread", "absent", "kelp kelp"]


def _passages(text: str, tag: str) -> list[IndexedChunk]:
    """Two sentences a passage, each passage starting with the last sentence of the one before."""
    ends = [i + 1 for i, c in enumerate(text) if c == "."]
    starts = [0] + [e + 1 for e in ends[:-1]]
    pairs = range(max(len(ends) - 1, 1))
    spans = [(starts[n], ends[min(n + 1, len(ends) - 1)]) for n in pairs]
    return [
        IndexedChunk(
            ChunkDraft(n, text[a:b], (), Location(None, None, None, a, b), 10, f"{tag}{n}"),
            f"{tag}{n}",
        )
        for n, (a, b) in enumerate(spans)
    ]


def _write(store: Store, brain_id: int, title: str, text: str, version: int = 0) -> int:
    digest = f"{title}{version}".encode().hex().ljust(64, "0")[:64]
    doc = store.create_document(
        brain_id, NewDocument("note", title, title, None, "text/plain", 1, digest), "index"
    )
    chunks = _passages(text, f"{title}{version}-")
    vectors = {c.embed_hash: np.ones(4, np.float32) for c in chunks}
    store.replace_index(doc.id, chunks, vectors, "m", text, title, None)
    return doc.id


def _bm25_of_documents(texts: dict[str, str], tokens: list[str]) -> dict[str, float]:
    """BM25 over whole documents, by hand: the title (as indexed) twice, the text once."""
    stemmer = stemmer_for("auto", None)
    bags: dict[str, Counter[str]] = {}
    lengths: dict[str, int] = {}
    for title, text in texts.items():
        named = analyze(index_title(title, title, "note"), stemmer)
        body = analyze(text, stemmer)
        bags[title] = Counter(named) + Counter(named) + Counter(body)
        lengths[title] = 1 + len(named) + len(body)
    n, mean = len(bags), sum(lengths.values()) / len(lengths)
    scores = dict.fromkeys(bags, 0.0)
    for token in tokens:
        held = sum(token in bag for bag in bags.values())
        if not held:
            continue
        idf = max(math.log((n - held + 0.5) / (held + 0.5)), 1e-6)
        for title, bag in bags.items():
            tf = bag[token]
            norm = K1 * (1 - B + B * lengths[title] / mean)
            scores[title] += idf * tf * (K1 + 1) / (tf + norm) if tf else 0.0
    return scores


def _check(store: Store, brain_id: int, ids: dict[str, int], texts: dict[str, str]) -> None:
    chunks = {c.id: title for title, d in ids.items() for c in store.list_chunks(brain_id, d)}
    if isinstance(store, SqliteStore):
        store.search_index.lexical_index(brain_id)  # caught up now: the store's own statistics
    stemmer = stemmer_for("auto", None)
    for question in QUESTIONS:
        terms = query_terms(question)
        tokens = [t for term in terms for t in analyze(term, stemmer)]
        found = store.document_text_scores(brain_id, terms, list(chunks))
        assert found is not None
        expected = _bm25_of_documents(texts, tokens)
        assert found.of_passage == {
            chunk: pytest.approx(expected[title], rel=1e-9) for chunk, title in chunks.items()
        }, question


@pytest.mark.both_backends
def test_a_document_is_scored_whole_and_kept_up_to_date(store: Store, backend: str) -> None:
    brain = store.ensure_brain("docs")
    texts = dict(TEXTS)
    ids = {title: _write(store, brain.id, title, text) for title, text in texts.items()}
    _check(store, brain.id, ids, texts)
    store.delete_document(brain.id, ids.pop("Kelp"))
    del texts["Kelp"]
    texts["Boilers"] = "The boiler was replaced. Its pressure gauge is new. Kelp is not involved."
    store.delete_document(brain.id, ids["Boilers"])
    ids["Boilers"] = _write(store, brain.id, "Boilers", texts["Boilers"], version=1)
    _check(store, brain.id, ids, texts)
    # the best a document could score: otters and sourdough in one document of three each,
    # kelp in all three (its idf floored), "absent" in none
    found = store.document_text_scores(brain.id, ["otters", "sourdough", "kelp", "absent"], [])
    one_in_three = math.log((3 - 1 + 0.5) / (1 + 0.5))
    assert found is not None
    assert found.ceiling == pytest.approx((2 * one_in_three + 1e-6) * (K1 + 1), rel=1e-9)


def test_a_new_process_loads_the_document_index_and_catches_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = SqliteStore(tmp_path / "loci.db")
    brain = first.ensure_brain("docs")
    texts = dict(TEXTS)
    ids = {title: _write(first, brain.id, title, text) for title, text in texts.items()}
    _check(first, brain.id, ids, texts)  # built and saved beside the database
    read: list[list[int] | None] = []

    def spy(db: object, brain_id: int, document_ids: list[int] | None) -> object:
        read.append(None if document_ids is None else list(document_ids))
        return document_rows(db, brain_id, document_ids)  # type: ignore[arg-type]

    monkeypatch.setattr(search_index, "document_rows", spy)
    second = SqliteStore(tmp_path / "loci.db")
    _check(second, brain.id, ids, texts)
    assert read == []  # loaded, not read from the passages again
    # changed by the other process: a document deleted (its passages are gone from the
    # database, the index alone knows whose they were) and one written again
    first.delete_document(brain.id, ids.pop("Otters"))
    del texts["Otters"]
    first.delete_document(brain.id, ids["Kelp"])
    texts["Kelp"] = "Kelp and otters. Otters and kelp."
    ids["Kelp"] = _write(first, brain.id, "Kelp", texts["Kelp"], version=1)
    _check(second, brain.id, ids, texts)
    assert len(read) == 1 and read[0] is not None and len(read[0]) == 3  # those three only


def test_the_blend_is_over_each_levels_ceiling() -> None:
    leg = [(1, 8.0), (2, 6.0), (3, 2.0)]
    documents = DocumentTextScores({1: 2.0, 2: 9.0, 3: 9.0}, ceiling=10.0)
    blended, ceiling = in_document(leg, 10.0, documents, 0.5)
    assert ceiling == 1.0
    assert dict(blended) == {
        1: pytest.approx(0.5 * 0.8 + 0.5 * 0.2),
        2: pytest.approx(0.5 * 0.6 + 0.5 * 0.9),
        3: pytest.approx(0.5 * 0.2 + 0.5 * 0.9),
    }
    assert [c for c, _ in blended] == [2, 3, 1]
    # a passage whose document is not known yet is its own document; no blend without both
    # ceilings or without document scores
    assert dict(in_document([(4, 5.0)], 10.0, documents, 0.5)[0]) == {4: pytest.approx(0.5)}
    assert in_document(leg, None, documents, 0.5) == (leg, None)
    assert in_document(leg, 10.0, None, 0.5) == (leg, 10.0)


def test_postgresql_counts_the_documents_it_holds_when_it_migrates(
    postgres_server: EmbeddedPostgres,
) -> None:
    """Migration 31 run again over a database as an older Loci left it: documents indexed by
    their passages, no document statistics."""
    url = postgres_server.new_database()
    try:
        store = PostgresStore(url, pool_size=1)
        brain = store.ensure_brain("docs")
        ids = {title: _write(store, brain.id, title, text) for title, text in TEXTS.items()}
        store.close()
        with connect(postgres_server.owner_url(url)) as conn:
            conn.execute(
                "DROP TABLE document_terms; DROP TABLE document_term_df;"
                " ALTER TABLE documents DROP COLUMN lex_length;"
                " ALTER TABLE lexical_stats DROP COLUMN documents;"
                " ALTER TABLE lexical_stats DROP COLUMN document_length;"
                " DELETE FROM schema_migrations WHERE version = 31"
            )
            migrate(conn)
            grant(conn, APP_ROLE)
        store = PostgresStore(url, pool_size=1)
        try:
            _check(store, brain.id, ids, TEXTS)
        finally:
            store.close()
    finally:
        postgres_server.drop_database(url)
