"""Fusing the ranked lists of the search legs into one.

Two methods, measured on SciFact (docs/benchmarks-journal.md):
- weighted reciprocal rank fusion: score = sum of weight / (k + rank); ignores score scales.
- convex combination: each leg's scores normalised, then weighted and summed. `max`
  normalisation divides by the leg's best score; `minmax` maps the leg's candidates onto [0, 1];
  `ceiling` divides by the best score the leg could give at all — BM25's when every matching
  query term saturates, cosine's 1 — so a leg that found only weak matches for this question
  weighs less than one that found strong ones, where `max` would lift its best to 1 regardless
  (the "theoretical min-max" of Bruch, Gai and Ingber, "An Analysis of Fusion Functions for
  Hybrid Retrieval", 2023, who found it the most robust convex fusion across collections).

Each leg's weight is the share it gets in general (`RankingParams.text_weight`) times its
`confidence` for this question, in [0, 1] (`loci.search.confidence`: a vector leg whose best
passage is no closer than chance gets ~0). One explicit input per leg, so any signal about a
leg on this question — the embedder cannot read its language, say — multiplies into it.

Passages of one document share evidence: with `groups` (item -> document), a passage missing from
a leg takes the best score any passage of its document has in that leg. A document whose one
passage matches the words and whose next passage matches the meaning then ranks as agreeing
legs, the way it would if it were one passage.

A passage that has no vector yet (`first_leg_only`: its document was just added and the vectors
stage has not reached it) cannot be found by the other legs, so missing from them says nothing
about it: it is scored by the first leg alone, as if every leg agreed with it, instead of losing
the other legs' share to a file that is merely older.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from typing import Literal

FusionMethod = Literal["rrf", "convex"]
Normalisation = Literal["max", "minmax", "ceiling"]

Ranked = Sequence[tuple[int, float]]  # (item id, leg score), best first


@dataclass(frozen=True)
class Fused:
    item_id: int
    score: float
    ranks: tuple[int | None, ...]  # 1-based rank in each leg, None when absent
    scores: tuple[float | None, ...]


def normalise(
    ranked: Ranked, how: Normalisation, ceiling: float | None = None, floor: float = 0.0
) -> dict[int, float]:
    """Scores mapped onto [0, 1]; `ceiling` is the leg's best possible score (for "ceiling"
    normalisation; without one it falls back to the best score seen, as "max"), `floor` what
    a score of nothing in particular is (0 for BM25; for cosines, what the question reaches
    with the brain's passages on average)."""
    if not ranked:
        return {}
    if how == "ceiling" and ceiling is not None and ceiling > floor:
        span = ceiling - floor
        return {item: min(max((score - floor) / span, 0.0), 1.0) for item, score in ranked}
    values = [s for _, s in ranked]
    high = max(values)
    low = min(values) if how == "minmax" else 0.0
    span = high - low
    if span <= 0:
        return {item: 1.0 for item, _ in ranked}
    return {item: (score - low) / span for item, score in ranked}


def _convex(
    legs: Sequence[Ranked],
    weights: Sequence[float],
    how: Normalisation,
    groups: Mapping[int, int] | None,
    ceilings: Sequence[float | None],
    first_leg_only: AbstractSet[int],
    floors: Sequence[float],
) -> dict[int, float]:
    items = {item for ranked in legs for item, _ in ranked}
    fused = dict.fromkeys(items, 0.0)
    bounds = zip(legs, weights, ceilings, floors, strict=True)
    for leg, (ranked, weight, ceiling, bottom) in enumerate(bounds):
        if weight == 0 or not ranked:
            continue
        norm = normalise(ranked, how, ceiling, bottom)
        floor = 0.0 if how == "minmax" else min(norm.values())
        best_of_group: dict[int, float] = {}
        if groups is not None:
            for item, score in norm.items():
                group = groups.get(item, -item)
                best_of_group[group] = max(best_of_group.get(group, score), score)
        for item in items:
            if leg > 0 and item in first_leg_only:
                continue
            own = norm.get(item)
            if own is None:
                own = floor
                if groups is not None:
                    own = best_of_group.get(groups.get(item, -item), floor)
            fused[item] += weight * own
    return fused


def _first_leg_alone(
    fused: dict[int, float], weights: Sequence[float], first_leg_only: AbstractSet[int]
) -> None:
    """Lift the score of each first-leg-only item to what agreeing legs would give it."""
    if not first_leg_only or not weights or weights[0] <= 0:
        return
    scale = sum(weights) / weights[0]
    for item in first_leg_only & fused.keys():
        fused[item] *= scale


def fuse(
    legs: Sequence[Ranked],
    weights: Sequence[float],
    method: FusionMethod = "convex",
    rrf_k: float = 60.0,
    normalisation: Normalisation = "max",
    groups: Mapping[int, int] | None = None,
    ceilings: Sequence[float | None] | None = None,
    confidences: Sequence[float] | None = None,
    first_leg_only: AbstractSet[int] = frozenset(),
    floors: Sequence[float] | None = None,
) -> list[Fused]:
    """`ceilings`: each leg's best possible score, for "ceiling" normalisation (None: unknown),
    `floors` the score that says nothing in particular (None: 0 for every leg);
    `confidences`: each leg's trust for this question, multiplying its weight (None: all 1);
    `first_leg_only`: items the other legs cannot find, scored by the first leg alone."""
    if confidences is not None:
        trusted = [w * min(max(c, 0.0), 1.0) for w, c in zip(weights, confidences, strict=True)]
        if any(trusted):  # with no leg trusted at all, none is preferred over the others
            weights = trusted
    ranks: dict[int, list[int | None]] = {}
    scores: dict[int, list[float | None]] = {}
    for leg_index, ranked in enumerate(legs):
        for rank, (item, score) in enumerate(ranked, start=1):
            ranks.setdefault(item, [None] * len(legs))[leg_index] = rank
            scores.setdefault(item, [None] * len(legs))[leg_index] = score
    if method == "rrf":
        fused = {
            item: sum(
                w / (rrf_k + r) for w, r in zip(weights, item_ranks, strict=True) if r is not None
            )
            for item, item_ranks in ranks.items()
        }
    else:
        fused = _convex(
            legs,
            weights,
            normalisation,
            groups,
            ceilings or [None] * len(legs),
            first_leg_only,
            floors or [0.0] * len(legs),
        )
    _first_leg_alone(fused, weights, first_leg_only)
    ordered = sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
    return [Fused(item, score, tuple(ranks[item]), tuple(scores[item])) for item, score in ordered]


def vector_weight(
    question_language: str | None,
    brain_languages: Mapping[str, int],
    embedder_languages: frozenset[str] | None,
) -> float:
    """How much of its weight the vector leg keeps for this question: 1, or 0 when the
    embedder cannot read the question's language (the brain's main language when the question
    is too short to tell). An English-only model (the bundled MiniLM) embeds Japanese or
    Arabic as noise: on a held-out Arabic set its leg scored 0.07 nDCG@10 against BM25's 0.73
    and dragged equal-weight fusion to 0.66, so such a question is ranked by BM25 alone.
    `embedder_languages` None: the embedder reads every language."""
    if embedder_languages is None:
        return 1.0
    language = question_language or next(iter(brain_languages), None)
    return 1.0 if language is None or language in embedder_languages else 0.0
