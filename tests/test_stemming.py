"""Stemming by language, the same on both backends: German and Russian inflections found on
SQLite as on PostgreSQL with equal scores, a brain's stemming language switched on either,
each passage stemmed in its detected language, and a question in a language the embedder
cannot read ranked by BM25 alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.errors import InvalidInput
from loci.language import (
    LATIN_SCRIPT,
    passage_languages,
    query_languages,
    question_language,
)
from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.search.engine import SearchRequest
from loci.search.fusion import vector_weight
from loci.search.lexical import query_terms
from loci.service import Loci
from loci.store.base import Store
from loci.store.postgres import PostgresStore
from loci.store.sqlite import SqliteStore
from loci.store.stemming import analyze, query_tokens
from tests.support.cli import run_cli
from tests.support.pg import EmbeddedPostgres

# (language, passages): inflected forms a question in the base form must find.
PASSAGES = {
    "de": ["Die Häuser am Fluss wurden im Winter gebaut.", "Er las zwei Bücher über Gärten."],
    "ru": ["Дети играли с кошками во дворе.", "Мы читали книги о садах."],
    "en": ["The gardens were planted in spring.", "Two houses stand by the river."],
}
QUESTIONS = {"Haus": "de", "Buch": "de", "кошка": "ru", "книга": "ru", "garden": "en"}


def _fill(store: Store, name: str) -> int:
    brain = store.ensure_brain(name)
    for language, texts in PASSAGES.items():
        digest = language.encode().hex().ljust(64, "0")
        doc = store.create_document(
            brain.id, NewDocument("note", language, language, None, "text/plain", 10, digest), "i"
        )
        chunks = [
            IndexedChunk(
                ChunkDraft(i, t, (), Location(char_start=0, char_end=len(t)), 1, f"{language}{i}"),
                f"e{language}{i}",
                language,
            )
            for i, t in enumerate(texts)
        ]
        store.replace_index(doc.id, chunks, {}, "m", " ".join(texts), language, None)
    return brain.id


def _found(store: Store, brain_id: int, question: str, language: str) -> list[tuple[str, float]]:
    hits = store.text_search(brain_id, query_terms(question), 10, SearchFilters(), [language])
    rows = store.chunks_with_documents([i for i, _ in hits])
    return [(rows[i][0].text, score) for i, score in hits]


def test_both_backends_stem_each_language_alike(
    postgres_server: EmbeddedPostgres, tmp_path: Path
) -> None:
    lite = SqliteStore(tmp_path / "loci.db", lexical_index_min_chunks=None)  # FTS5's bm25()
    indexed = SqliteStore(tmp_path / "indexed.db", lexical_index_min_chunks=1)  # in memory
    url = postgres_server.new_database()
    pg = PostgresStore(url, pool_size=2)
    stores: tuple[Store, ...] = (lite, indexed, pg)
    try:
        ids = [_fill(s, "stems") for s in stores]
        assert lite.brain_languages(ids[0]) == {"de": 1, "en": 1, "ru": 1}
        for question, language in QUESTIONS.items():
            found = [_found(s, i, question, language) for s, i in zip(stores, ids, strict=True)]
            assert found[0], question  # the inflected form is found from the base form
            assert [t for t, _ in found[2]] == [t for t, _ in found[1]], question
            assert [s for _, s in found[2]] == pytest.approx([s for _, s in found[1]], rel=1e-9)
            assert {t for t, _ in found[0]} == {t for t, _ in found[1]}, question
    finally:
        for store in stores:
            store.close()
        postgres_server.drop_database(url)


@pytest.mark.both_backends
def test_a_brains_stemming_language_is_switched_on_either_backend(store: Store) -> None:
    brain = store.ensure_brain("fr")
    digest = "f" * 64
    doc = store.create_document(
        brain.id, NewDocument("note", "repas", "Repas", None, "text/plain", 10, digest), "i"
    )
    text = "Les chevaux mangeaient chaque matin."
    chunk = IndexedChunk(
        ChunkDraft(0, text, (), Location(char_start=0, char_end=len(text)), 1, "r"), "er"
    )  # no language
    store.replace_index(doc.id, [chunk], {}, "m", text, "Repas", None)
    assert store.brain_language(brain.id) == "auto"
    assert store.text_search(brain.id, ["cheval"], 5, SearchFilters()) == []  # as English
    store.set_brain_language(brain.id, "french")
    assert store.brain_language(brain.id) == "french"
    assert len(store.text_search(brain.id, ["cheval"], 5, SearchFilters())) == 1
    assert len(store.text_search(brain.id, ["mangeront"], 5, SearchFilters())) == 1
    store.set_brain_language(brain.id, "simple")
    assert store.text_search(brain.id, ["cheval"], 5, SearchFilters()) == []
    assert len(store.text_search(brain.id, ["chevaux"], 5, SearchFilters())) == 1
    with pytest.raises(InvalidInput, match="klingon"):
        store.set_brain_language(brain.id, "klingon")


def test_reindex_language_on_the_default_sqlite_backend(tmp_path: Path) -> None:
    home = tmp_path / "home"
    note = "Die Häuser am Fluss wurden im Winter gebaut."
    assert run_cli("note", note, "--title", "Fluss", home=home).returncode == 0
    switched = run_cli("reindex", "--language", "german", home=home)
    assert switched.returncode == 0, switched.stderr
    assert "now stems words as german" in switched.stdout
    found = run_cli("search", "Haus", "--mode", "text", home=home)
    assert "Häuser" in found.stdout
    status = run_cli("status", home=home)
    assert "german" in status.stdout and "de 1" in status.stdout


def test_a_document_keeps_the_language_of_each_of_its_passages() -> None:
    german = (
        "Die Konfiguration liegt im Verzeichnis des Benutzers und wird beim Start gelesen. "
        "Jede Einstellung kann dort geändert werden, danach startet man die Shell neu."
    )
    english = (
        "Appendix: the configuration lives in the user's folder and is read at start-up. "
        "Any setting can be changed there; restart the shell afterwards to apply it."
    )
    assert passage_languages(german * 3 + english, [german, english, "Tabelle 1"]) == [
        "de",
        "en",
        "de",  # too short to tell: its document's
    ]


def test_questions_are_stemmed_in_the_languages_the_brain_holds() -> None:
    brain = {"en": 180, "de": 15, "fr": 2}
    assert query_languages("en", brain) == ["en"]  # fr: two documents, perhaps misdetected
    assert query_languages("fr", brain) == ["en", "fr"]  # …but a French question finds them
    assert query_languages("ja", brain) == ["en"]  # no Japanese text: nothing to stem for
    assert query_languages(None, {"de": 10, "en": 9}) == ["de", "en"]
    assert question_language("Wie lege ich einen Alias an?", brain) == "de"
    assert question_language("how do I define an alias", brain) == "en"
    assert question_language("特定の見出しにリンク", brain) == "ja"
    # Short English questions to an English brain where a few documents were detected as
    # Latin, Nigerian Pidgin or Bikol: they are read as English (they were read as those,
    # and the vector leg was dropped for them), where a question sure of its language keeps it.
    encyclopedia = {"en": 500, "pcm": 2, "la": 1, "ro": 1, "bcl": 1}
    for question in ("via ferrata gear", "aurora borealis forecast", "tapas bar menu",
                     "villa rental tuscany", "nova scotia ferry"):  # fmt: skip
        asked = question_language(question, encyclopedia)
        assert asked == "en", question
        assert vector_weight(asked, encyclopedia, LATIN_SCRIPT) == 1.0
    assert question_language("Où se trouve la gare la plus proche ?", encyclopedia) == "fr"
    assert analyze("Häuser", "german") == ["haus"] and analyze("houses", "english") == ["hous"]
    assert query_tokens(["Häuser"], ["english", "german"]) == ["hauser", "haus"]


def test_the_vector_leg_weighs_only_for_a_language_the_embedder_reads() -> None:
    english_only = frozenset({"en"})
    assert vector_weight("en", {"en": 3}, english_only) == 1.0
    assert vector_weight("ja", {"en": 3}, english_only) == 0.0
    assert vector_weight(None, {"ar": 3}, english_only) == 0.0  # too short: the brain's
    assert vector_weight(None, {}, english_only) == 1.0
    assert vector_weight("ja", {"ja": 3}, None) == 1.0  # a multilingual model reads all


@pytest.mark.both_backends
def test_a_japanese_question_ranks_as_bm25_alone_with_the_bundled_embedder(loci: Loci) -> None:
    brain = loci.brain("mixed")
    notes = [
        ("会議", "会議は毎週火曜日の午前十時に始まります。議事録は共有フォルダに保存します。"),
        ("予算", "来年度の予算案は三月末までに提出してください。会議で承認されます。"),
        (
            "Meeting",
            "The weekly meeting starts on Tuesday at ten; minutes go to the shared folder.",
        ),
        ("Budget", "Submit next year's budget by the end of March; the meeting approves it."),
    ]
    ids = [loci.library.add_note(brain, text, title=title).document.id for title, text in notes]
    loci.library.wait_for(brain, ids)
    for question in ("議事録はどこに保存しますか", "予算案の提出期限"):
        text = loci.searching.search(brain, SearchRequest(question, mode="text"))
        hybrid = loci.searching.search(brain, SearchRequest(question, mode="hybrid"))
        assert [h.chunk_id for h in hybrid] == [h.chunk_id for h in text], question
        assert hybrid and all(h.vector_rank is None for h in hybrid)
    english = loci.searching.search(brain, SearchRequest("where do the meeting minutes go"))
    assert any(h.vector_rank is not None for h in english)  # English: both legs


@pytest.mark.both_backends
def test_inflected_words_are_found_and_marked_in_german_and_russian(loci: Loci) -> None:
    brain = loci.brain("inflections")
    notes = {
        "Fluss": "Die Häuser am Fluss wurden im Winter gebaut, die Gärten im Frühling angelegt.",
        "Двор": "Дети весь день играли с кошками во дворе, пока взрослые читали книги.",
    }
    ids = [
        loci.library.add_note(brain, text, title=title).document.id for title, text in notes.items()
    ]
    loci.library.wait_for(brain, ids)
    assert loci.store.brain_languages(brain.id) == {"de": 1, "ru": 1}
    for question, title, marked in (
        ("Haus", "Fluss", "Häuser"),
        ("Garten", "Fluss", "Gärten"),
        ("кошка", "Двор", "кошками"),
        ("книга", "Двор", "книги"),
    ):
        hits = loci.searching.search(brain, SearchRequest(question, mode="text"))
        assert hits and hits[0].citation.title == title, question
        shown = [hits[0].snippet[start:end] for start, end in hits[0].highlights]
        assert marked in shown, (question, hits[0].snippet, shown)


def test_the_analysed_text_splits_back_into_its_terms_in_every_stemmer() -> None:
    """The FTS table holds the analysed text under plain `unicode61`: what it splits back out
    must be exactly the terms the other BM25s count, whatever the stemmer made of the words."""
    samples = {
        "greek": "Οι άνθρωποι περπατούσαν στους δρόμους της πόλης",
        "turkish": "İstanbul’daki kütüphanelerde kitapları okuyorduk",
        "arabic": "المكتبات العامة في المدن الكبيرة",
        "hindi": "बच्चे बगीचे में खेल रहे थे",
        "nepali": "बच्चाहरू खेलिरहेका थिए",
        "german": "Die Häuser am Fluß",
        "yiddish": "די קינדער האָבן געשפּילט",
    }
    for stemmer, text in samples.items():
        terms = analyze(text, stemmer)
        assert terms and all(terms), stemmer
        assert analyze(" ".join(terms), "simple") == terms, stemmer
