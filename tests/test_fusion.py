"""Fusing the two legs: each normalised by the best score it could give (its ceiling), so a leg
that found only weak matches for a question weighs less than one that found strong ones."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest

from loci.models import Brain, SearchFilters
from loci.search.confidence import SPECIFIC_WORD_TRUST, text_share, text_trust
from loci.search.engine import RankingParams, SearchRequest
from loci.search.fusion import fuse, normalise
from loci.search.lexical import query_terms
from loci.service import Loci
from loci.store.lexical_index import K1


def test_a_weak_match_counts_less_than_a_strong_one_of_the_other_leg() -> None:
    # BM25's best passage matches a tenth of what the question could match (2.0 of 20); the
    # vectors are fairly sure of the other passage (cosine 0.6 against 0.45).
    text, vector = [(1, 2.0), (2, 0.2)], [(2, 0.6), (1, 0.45)]
    by_ceiling = fuse([text, vector], [0.5, 0.5], normalisation="ceiling", ceilings=[20.0, 1.0])
    assert [f.item_id for f in by_ceiling] == [2, 1]
    assert by_ceiling[0].score == pytest.approx(0.5 * 0.01 + 0.5 * 0.6)
    assert by_ceiling[1].score == pytest.approx(0.5 * 0.1 + 0.5 * 0.45)
    # Dividing each leg by its own best calls BM25's weak match perfect, and it wins.
    by_max = fuse([text, vector], [0.5, 0.5], normalisation="max")
    assert [f.item_id for f in by_max] == [1, 2]


def test_a_passage_without_a_vector_is_scored_by_its_words_alone() -> None:
    # Passage 1 was just added: it has no vector yet, so the vector leg cannot find it. Taken as
    # a miss there, it would get half its text score plus the vector leg's floor (0.65) and lose
    # to passage 2, whose words match less; scored by its words alone it keeps 0.8.
    text, vector = [(1, 8.0), (2, 6.0)], [(2, 0.9), (3, 0.5)]
    plain = fuse([text, vector], [0.5, 0.5], normalisation="ceiling", ceilings=[10.0, 1.0])
    assert [f.item_id for f in plain][:2] == [2, 1]
    assert plain[1].score == pytest.approx(0.5 * 0.8 + 0.5 * 0.5)
    pending = fuse(
        [text, vector],
        [0.5, 0.5],
        normalisation="ceiling",
        ceilings=[10.0, 1.0],
        first_leg_only={1},
    )
    assert [(f.item_id, round(f.score, 6)) for f in pending] == [(1, 0.8), (2, 0.75), (3, 0.55)]
    # Reciprocal rank fusion alike: its one rank counts for both legs.
    rrf = fuse([text, vector], [0.5, 0.5], method="rrf", first_leg_only={1})
    assert rrf[0].item_id == 1 and rrf[0].score == pytest.approx(1 / 61)


def test_ceiling_normalisation_keeps_within_zero_and_one_and_falls_back_to_max() -> None:
    ranked = [(1, 12.0), (2, 3.0), (3, -0.2)]  # over the ceiling (rounding), inside, negative
    assert normalise(ranked, "ceiling", 10.0) == {1: 1.0, 2: 0.3, 3: 0.0}
    # A backend that cannot say its ceiling: the leg's best score stands in for it.
    assert normalise(ranked, "ceiling", None) == normalise(ranked, "max")
    assert normalise(ranked, "ceiling", 0.0) == normalise(ranked, "max")


def test_the_shipped_fusion_is_by_ceilings_at_equal_weights() -> None:
    params = RankingParams()
    assert (params.fusion, params.normalisation, params.text_weight) == ("convex", "ceiling", 0.5)


@pytest.mark.both_backends
def test_the_text_ceiling_is_every_matching_terms_best_score(loci: Loci, brain: Brain) -> None:
    texts = [
        "The boiler pressure gauge reads 1.5 bar.",
        "Bleed the radiator to let the air out.",
        "Boiler boiler boiler boiler boiler boiler boiler boiler boiler boiler.",
        "The garden shed needs a new roof.",
    ]
    ids = [
        loci.library.add_note(brain, t, title=f"Note {n}").document.id for n, t in enumerate(texts)
    ]
    loci.library.wait_for(brain, ids)
    brain = loci.store.get_brain(brain.name)
    terms = query_terms("boiler pressure nonexistentword")
    found = loci.store.text_ceiling(brain.id, terms)
    assert found is not None
    ceiling = found.score

    # idf as BM25 counts it over the brain's passages (one each here), for the terms that occur.
    total = len(texts)

    def idf(matches: int) -> float:
        return math.log((total - matches + 0.5) / (matches + 0.5))

    boiler, pressure = 2, 1  # passages holding each term; the made-up word is in none
    expected = (K1 + 1) * (max(idf(boiler), 1e-6) + idf(pressure))
    assert ceiling == pytest.approx(expected, rel=1e-6)
    # The most specific matching term is "pressure", in one passage: the rarest a word can be.
    assert found.best_idf == pytest.approx(idf(pressure)) and found.rows == total
    best = loci.store.text_search(brain.id, terms, 5, SearchFilters())
    assert best and all(score <= ceiling for _, score in best)


FILM_NIGHTS = [
    *(f"Film night {n}: the film ran late and the film crew stayed." for n in range(59)),
    "A film about a zeppelin over the harbour ran late.",
]


def _film_nights(loci: Loci, brain: Brain) -> list[str]:
    """Sixty notes about film nights, one naming a zeppelin, indexed; their texts."""
    added = [loci.library.add_note(brain, t, title=f"Night {n}") for n, t in enumerate(FILM_NIGHTS)]
    loci.library.wait_for(brain, [a.document.id for a in added])
    return FILM_NIGHTS


@pytest.mark.both_backends
def test_the_text_leg_is_trusted_as_far_as_the_questions_rarest_word_is_rare(
    loci: Loci, brain: Brain
) -> None:
    # Sixty notes about films; one also names a zeppelin. "film" is in every passage: BM25
    # can only rank them by how often and in how short a passage it falls, and hybrid search
    # leans on the meaning instead. "zeppelin" is in one passage, as rare as a word can be.
    texts = _film_nights(loci, brain)

    def trust(question: str) -> float:
        return text_trust(loci.store.text_ceiling(brain.id, query_terms(question)))

    assert trust("film") < 0.05
    assert trust("zeppelin film") == pytest.approx(1.0, abs=0.01)
    assert trust("nonexistentword") == 1.0  # nothing matched: nothing to weigh
    # Under 50 passages a brain says too little to call a word common.
    few = loci.brain("few")
    added = [loci.library.add_note(few, t, title=f"Night {n}") for n, t in enumerate(texts[:9])]
    loci.library.wait_for(few, [a.document.id for a in added])
    assert text_trust(loci.store.text_ceiling(few.id, query_terms("film"))) == 1.0


def test_only_a_question_with_nothing_specific_leaves_the_words_a_smaller_share() -> None:
    common = SPECIFIC_WORD_TRUST / 2  # the rarest word is in many passages of the brain
    assert text_share(0.5, 0.4, words_in_pieces=0, trust_in_words=common) == pytest.approx(0.2)
    # A word the embedder reads in pieces (a name, a code) is matched exactly by the words.
    assert text_share(0.5, 0.4, words_in_pieces=1, trust_in_words=common) == 0.5
    # A word rare in this brain is specific, however well the embedder reads it.
    assert text_share(0.5, 0.4, words_in_pieces=0, trust_in_words=1.0) == 0.5
    # An embedder whose tokenizer is not at hand cannot say: the share stays.
    assert text_share(0.5, 0.4, words_in_pieces=None, trust_in_words=common) == 0.5


@pytest.mark.both_backends
def test_hybrid_search_weighs_the_words_by_how_specific_the_question_is(
    loci: Loci, brain: Brain
) -> None:
    # Sixty notes about film nights; one names a zeppelin. "film", "ran" and "late" are in
    # nearly every passage, and the embedder reads each whole: nothing in "Which film ran
    # late?" is specific, and the words keep 0.4 of their share. "zeppelin" is in one passage;
    # "Turturro" is a name the embedder reads in pieces: both keep their whole share.
    _film_nights(loci, brain)

    def scores(question: str, text_weight: float | None = None) -> list[tuple[int, float]]:
        hits = loci.searching.search(brain, SearchRequest(question, text_weight=text_weight))
        return [(hit.chunk_id, round(hit.score, 6)) for hit in hits]

    unspecific = "Which film ran late?"
    specific = ["Which film had a zeppelin?", "Which film did Turturro make?"]
    # An explicit share is treated as the default one (0.5) is, trusts and this rule alike.
    assert scores(unspecific) == scores(unspecific, 0.5)
    shipped = {question: scores(question) for question in [unspecific, *specific]}
    engine = loci.searching.engine
    engine.params = replace(engine.params, unspecific_words=1.0)  # the rule off
    assert scores(unspecific) != shipped[unspecific]
    assert all(scores(question) == shipped[question] for question in specific)


def test_a_vector_leg_is_read_above_its_floor_and_its_cosines_are_kept() -> None:
    """An embedder that puts every passage near 0.8 (multilingual-e5) separates them by a few
    hundredths: read from its floor, not from 0, that separation counts as much as MiniLM's
    does, and the hit still carries its cosine."""
    text = [(1, 6.0), (2, 4.0)]  # BM25 prefers passage 1
    vector = [(2, 0.86), (1, 0.81)]  # the vector leg prefers passage 2, by 0.05
    as_from_zero = fuse([text, vector], [0.5, 0.5], normalisation="ceiling", ceilings=[10.0, 1.0])
    assert [f.item_id for f in as_from_zero] == [1, 2]
    above_floor = fuse(
        [text, vector],
        [0.5, 0.5],
        normalisation="ceiling",
        ceilings=[10.0, 1.0],
        floors=[0.0, 0.8],
    )
    assert [f.item_id for f in above_floor] == [2, 1]
    assert {f.item_id: f.scores[1] for f in above_floor} == {1: 0.81, 2: 0.86}
    assert normalise(vector, "ceiling", 1.0, 0.8) == pytest.approx({2: 0.3, 1: 0.05})
