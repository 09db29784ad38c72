"""Standard IR metrics over one query's ranking and its graded judgments, with BEIR's
conventions: nDCG's gain is the judgment itself (linear, as trec_eval's and pytrec_eval's
`ndcg_cut_10`, which BEIR reports), not 2^rel − 1; the two agree on binary judgments (SciFact)
and differ on graded ones (DBPedia-entity's 0/1/2). A judgment below zero counts as zero."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

NDCG_GAIN = "linear"  # said beside the figure, so a reader knows which nDCG it is


def ndcg_at(ranking: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    dcg = sum(
        max(judged.get(doc, 0), 0) / math.log2(rank + 2) for rank, doc in enumerate(ranking[:k])
    )
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal))
    return dcg / idcg if idcg > 0 else 0.0


def recall_at(ranking: Sequence[str], judged: Mapping[str, int], k: int) -> float:
    relevant = {d for d, g in judged.items() if g > 0}
    if not relevant:
        return 0.0
    return len(relevant.intersection(ranking[:k])) / len(relevant)


def mrr_at(ranking: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    for rank, doc in enumerate(ranking[:k], start=1):
        if judged.get(doc, 0) > 0:
            return 1.0 / rank
    return 0.0


def percentile(values: Sequence[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q / 100 * len(ordered)) - 1))
    return ordered[index]


Z_95 = 1.959963984540054  # the standard normal's 97.5th percentile: a two-sided 95 % band


def wilson_interval(passed: int, total: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a pass rate: unlike p ± z·√(p(1−p)/n), it stays inside
    [0, 1] and is not zero-width at 0 % or 100 %, which matters for the few dozen questions a
    person writes. No questions: nothing is known, (0, 1)."""
    if total <= 0:
        return 0.0, 1.0
    p = passed / total
    z2 = z * z
    centre = (p + z2 / (2 * total)) / (1 + z2 / total)
    half = z / (1 + z2 / total) * math.sqrt(p * (1 - p) / total + z2 / (4 * total * total))
    return max(0.0, centre - half), min(1.0, centre + half)
