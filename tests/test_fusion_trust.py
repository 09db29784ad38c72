"""Fusion trusts the vector leg only as far as its best passage stands above chance in the brain.

The bundled English model cannot read a script it was not trained on: a brain in Arabic
letters (here: real English paragraphs with each Latin letter replaced by an Arabic one, as
`bench/cipher_beir.py` does for SciFact) gets cosines that say nothing, and fusion must follow
the words. The same paragraphs in English keep the vector leg's full weight.
"""

from __future__ import annotations

import re
import statistics
import sys
from pathlib import Path

import numpy as np
import pytest

from loci.embed.base import Embedder
from loci.models import Brain, SearchFilters
from loci.search.confidence import vector_trust
from loci.search.engine import SearchRequest
from loci.search.fusion import fuse
from loci.search.weak import weak
from loci.service import Loci
from loci.store.vector_background import STEPS, VectorBackground
from tests.support.paths import REPO
from tests.support.services import make_service
from tests.support.text_files import vault_paragraphs

sys.path.insert(0, str(REPO / "bench"))
from cipher_beir import TABLE  # noqa: E402


def _median_trust(embedder: Embedder, tmp: Path, texts: list[str], queries: list[str]) -> float:
    loci = make_service(tmp, embedder)
    brain = loci.brain("trust")
    ids = [loci.library.add_note(brain, text).document.id for text in texts]
    loci.library.wait_for(brain, ids)
    brain = loci.store.get_brain("trust")
    assert brain.embedder_model is not None
    background = loci.store.vector_background(brain.id, brain.embedder_model)
    assert background is not None and background.documents == len(set(ids))
    trusts = []
    for query in queries:
        vector = embedder.embed([query])[0]
        leg = loci.store.vector_search(brain.id, embedder.model_id, vector, 100, SearchFilters())
        trusts.append(vector_trust(leg, background, vector))
    loci.store.close()
    return statistics.median(trusts)


def test_an_unreadable_script_loses_the_vector_leg_a_readable_one_keeps_it(
    embedder: Embedder, tmp_path: Path
) -> None:
    texts = vault_paragraphs(60)
    assert len(texts) == 60
    queries = [" ".join(re.findall(r"[A-Za-z]{5,}", t)[:4]) for t in texts[:20]]
    english = _median_trust(embedder, tmp_path / "en", texts, queries)
    letters = _median_trust(
        embedder,
        tmp_path / "ar",
        [t.translate(TABLE) for t in texts],
        [q.translate(TABLE) for q in queries],
    )
    assert english > 0.9 and letters < 0.5, (english, letters)


def test_no_trust_means_the_other_leg_decides() -> None:
    text = [(1, 9.0), (2, 8.0), (3, 1.0)]
    vector = [(3, 0.9), (2, 0.5), (1, 0.1)]
    trusted = fuse([text, vector], [0.5, 0.5], ceilings=[10.0, 1.0], normalisation="ceiling")
    assert [f.item_id for f in trusted][0] == 2  # both legs like it: it wins
    blind = fuse([text, vector], [0.5, 0.5], ceilings=[10.0, 1.0], normalisation="ceiling",
                 confidences=[1.0, 0.0])  # fmt: skip
    assert [f.item_id for f in blind] == [1, 2, 3]  # the words alone
    # no leg trusted at all: the weights stand as given rather than all becoming zero
    neither = fuse([text, vector], [0.5, 0.5], ceilings=[10.0, 1.0], normalisation="ceiling",
                   confidences=[0.0, 0.0])  # fmt: skip
    assert [f.item_id for f in neither] == [f.item_id for f in trusted]


def test_background_moments_give_each_querys_mean_and_spread() -> None:
    rng = np.random.default_rng(3)
    vectors = rng.normal(size=(500, 16)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    background = VectorBackground.of(vectors, 500, 100)
    assert background is not None
    query = vectors[0]
    cosines = vectors @ query
    mean, spread = background.similarity(query)
    assert mean == pytest.approx(float(cosines.mean()), abs=1e-6)
    assert spread == pytest.approx(float(cosines.std()), rel=1e-5)
    assert VectorBackground.of(vectors[:10], 10, 10) is None  # too few to judge by


@pytest.mark.both_backends
def test_each_backend_reads_the_brains_background(loci: Loci, brain: Brain) -> None:
    texts = vault_paragraphs(60)
    ids = [loci.library.add_note(brain, text).document.id for text in texts]
    loci.library.wait_for(brain, ids)
    brain = loci.store.get_brain(brain.name)
    assert brain.embedder_model is not None
    background = loci.store.vector_background(brain.id, brain.embedder_model)
    assert background is not None and background.documents == len(set(ids))
    # the sample's moments give what a scan of every passage gives
    query = loci.embedder.embed(["publish the notes as a website"])[0]
    every = loci.store.vector_search(brain.id, brain.embedder_model, query, 1000, SearchFilters())
    cosines = np.array([score for _, score in every])
    mean, spread = background.similarity(query)
    assert mean == pytest.approx(float(cosines.mean()), abs=1e-4)
    assert spread == pytest.approx(float(cosines.std()), rel=1e-3)
    assert loci.store.vector_background(brain.id, "another-model") is None
    # how close unrelated passages come (search.closeness): 60 notes of one passage give 1,770
    # pairs, resolved to one in 177; a nonsense search is weak, a real one reaches closeness 2
    assert len(background.unrelated) > 2 * STEPS and np.all(np.diff(background.unrelated) >= 0)
    nonsense = loci.searching.search(brain, SearchRequest("xylophone quantum zebra"))
    assert weak(nonsense) and all(h.closeness is not None for h in nonsense)
    found = loci.searching.search(brain, SearchRequest(" ".join(texts[5].split()[:12])))
    assert not weak(found) and (found[0].closeness or 0.0) >= 2
