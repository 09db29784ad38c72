"""Fusing the ranked lists of the search legs into one.

Two methods, both measured on SciFact (docs/benchmarks.md):
- weighted reciprocal rank fusion: score = sum of weight / (k + rank); ignores score scales.
- convex combination: each leg's scores min-max normalised over its candidates, then weighted.
  A candidate missing from a leg gets that leg's floor (0 after normalisation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

FusionMethod = Literal["rrf", "convex"]

Ranked = Sequence[tuple[int, float]]  # (item id, leg score), best first


@dataclass(frozen=True)
class Fused:
    item_id: int
    score: float
    ranks: tuple[int | None, ...]  # 1-based rank in each leg, None when absent
    scores: tuple[float | None, ...]


def _normalise(ranked: Ranked) -> dict[int, float]:
    if not ranked:
        return {}
    values = [s for _, s in ranked]
    low, high = min(values), max(values)
    span = high - low
    if span <= 0:
        return {item: 1.0 for item, _ in ranked}
    return {item: (score - low) / span for item, score in ranked}


def fuse(
    legs: Sequence[Ranked],
    weights: Sequence[float],
    method: FusionMethod = "convex",
    rrf_k: float = 60.0,
) -> list[Fused]:
    ranks: dict[int, list[int | None]] = {}
    scores: dict[int, list[float | None]] = {}
    for leg_index, ranked in enumerate(legs):
        for rank, (item, score) in enumerate(ranked, start=1):
            ranks.setdefault(item, [None] * len(legs))[leg_index] = rank
            scores.setdefault(item, [None] * len(legs))[leg_index] = score
    fused: dict[int, float] = dict.fromkeys(ranks, 0.0)
    if method == "rrf":
        for item, item_ranks in ranks.items():
            fused[item] = sum(
                w / (rrf_k + r) for w, r in zip(weights, item_ranks, strict=True) if r is not None
            )
    else:
        for ranked, weight in zip(legs, weights, strict=True):
            for item, value in _normalise(ranked).items():
                fused[item] += weight * value
    ordered = sorted(fused.items(), key=lambda pair: (-pair[1], pair[0]))
    return [Fused(item, score, tuple(ranks[item]), tuple(scores[item])) for item, score in ordered]
