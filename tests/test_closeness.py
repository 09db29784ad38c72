"""Closeness in meaning is read against the brain, so "weak" and the no-model grading hold for any
embedder and in any script.

Two brains where a raw cosine cutoff fails: real paragraphs in Arabic letters (the bundled English
model scores every passage of a script it cannot read near 0.6-0.8), and the same paragraphs in
English under an embedder whose cosines run high (every unrelated pair near 0.7, as some hosted
models do). In both, a nonsense search is flagged weak and an off-topic question is refused
without a model — where a fixed cutoff (0.3 for weak, 0.2-0.6 for grading) called them close.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest

from loci.answer.events import Done, Graded, final_answer
from loci.answer.grading import coverage
from loci.embed.base import Embedder, Vectors
from loci.models import Brain
from loci.search.closeness import BUNDLED_MODEL, closeness_scale
from loci.search.engine import SearchRequest
from loci.search.weak import weak
from loci.service import Loci
from loci.store.vector_background import STEPS, VectorBackground
from tests.support.paths import REPO
from tests.support.services import make_service
from tests.support.text_files import vault_paragraphs

sys.path.insert(0, str(REPO / "bench"))
from cipher_beir import TABLE  # noqa: E402

NONSENSE = "xylophone quantum zebra"
OFF_TOPIC = "Dishwasher warranty expiry?"  # no word of it in the brain, in either script


class HighCosines:
    """The bundled model's vectors moved off-centre by a fixed direction: the same ranking, but
    unrelated texts meet at cosine ~0.7 instead of ~0.1 (another embedder's range)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        direction = np.random.default_rng(7).normal(size=inner.dimensions)
        self.offset = (1.5 * direction / np.linalg.norm(direction)).astype(np.float32)

    @property
    def model_id(self) -> str:
        return "test/minilm-high-cosines"

    @property
    def dimensions(self) -> int:
        return self.inner.dimensions

    @property
    def max_tokens(self) -> int:
        return self.inner.max_tokens

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def words_in_pieces(self, text: str) -> int | None:
        return self.inner.words_in_pieces(text)

    def embed(self, texts: Sequence[str]) -> Vectors:
        moved = self.inner.embed(texts) + self.offset
        unit: Vectors = (moved / np.linalg.norm(moved, axis=1, keepdims=True)).astype(np.float32)
        return unit


def _brain(
    embedder: Embedder, home: Path, texts: list[str], embed_languages: str | None = None
) -> tuple[Loci, Brain]:
    loci = make_service(home, embedder, embed_languages=embed_languages)
    brain = loci.brain("closeness")
    ids = [loci.library.add_note(brain, text).document.id for text in texts]
    loci.library.wait_for(brain, ids)
    return loci, loci.store.get_brain("closeness")


def _check(
    loci: Loci, brain: Brain, texts: list[str], nonsense: str, off_topic: str, reads: bool
) -> None:
    # the question shares no word with the brain: only meaning could make it relevant
    assert not any(coverage(off_topic, text) for text in texts)
    hits = loci.searching.search(brain, SearchRequest(nonsense))
    assert hits and all(h.vector_score is not None and h.vector_score > 0.5 for h in hits[:3])
    assert weak(hits), [(h.vector_score, h.closeness) for h in hits[:3]]
    events = list(loci.answers.ask(brain, off_topic))
    graded = next(e for e in events if isinstance(e, Graded))
    done: Done = final_answer(iter(events))
    assert graded.relevant == 0 and done.decision == "no_relevant_sources", done.answer
    assert done.citations == ()
    # a real question about the brain is not weak; its best passage is close where the model
    # reads the script, and not where it cannot (there the words found it)
    words = " ".join(texts[3].split()[:12])
    found = loci.searching.search(brain, SearchRequest(words))
    assert not weak(found) and found[0].closeness is not None
    assert (found[0].closeness >= 2) is reads, found[0].closeness


def test_a_script_the_model_cannot_read(embedder: Embedder, tmp_path: Path) -> None:
    texts = [t.translate(TABLE) for t in vault_paragraphs(60)]
    # Said to read every language (LOCI_EMBED_LANGUAGES=*, as a hosted model may be set up), so
    # the vector leg is asked and closeness alone must tell its cosines are of no meaning.
    loci, brain = _brain(embedder, tmp_path / "claimed", texts, embed_languages="*")
    _check(loci, brain, texts, NONSENSE.translate(TABLE), OFF_TOPIC.translate(TABLE), False)
    loci.store.close()
    # As shipped, the bundled model is not asked about a script it does not read at all
    # (`fusion.vector_weight`): the nonsense finds nothing, which is weak too.
    loci, brain = _brain(embedder, tmp_path / "shipped", texts)
    hits = loci.searching.search(brain, SearchRequest(NONSENSE.translate(TABLE)))
    assert weak(hits) and all(h.vector_score is None for h in hits)
    loci.store.close()


def test_an_embedder_whose_cosines_run_high(embedder: Embedder, tmp_path: Path) -> None:
    texts = vault_paragraphs(60)
    loci, brain = _brain(HighCosines(embedder), tmp_path, texts)
    _check(loci, brain, texts, NONSENSE, OFF_TOPIC, True)
    loci.store.close()


def test_closeness_is_the_rarity_among_unrelated_pairs() -> None:
    rng = np.random.default_rng(5)
    vectors = rng.normal(size=(400, 16))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    owners = np.arange(400) // 4  # 100 documents of 4 passages
    background = VectorBackground.of(vectors.astype(np.float32), 400, 100, owners)
    assert background is not None
    scale = closeness_scale(background, "any-model")
    assert scale is not None and scale.source == "brain"
    different = owners[:, None] != owners[None, :]
    pairs = (vectors @ vectors.T)[np.triu(different, k=1)]
    for share in (0.1, 0.01, 0.001):
        cosine = float(np.quantile(pairs, 1 - share))
        assert scale.of(cosine) == pytest.approx(-np.log10(share), abs=1.5 / STEPS)
    # past the rarest level the pairs resolve, closeness stays there
    assert scale.of(1.0) == pytest.approx((len(background.unrelated) - 1) / STEPS)
    assert scale.of(None) is None and scale.of(-1.0) == 0.0
    # too few documents to know their pairs: the bundled model's levels, or nothing
    few = VectorBackground.of(vectors[:60].astype(np.float32), 60, 1, np.zeros(60, np.int64))
    assert few is not None and len(few.unrelated) == 0
    assert closeness_scale(few, "any-model") is None
    bundled = closeness_scale(few, BUNDLED_MODEL)
    assert bundled is not None and bundled.source == "model"
    assert bundled.of(0.3) == pytest.approx(2.0) and bundled.of(0.2) == pytest.approx(1.0)
