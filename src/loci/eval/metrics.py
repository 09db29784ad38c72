"""Standard IR metrics over one query's ranking and its graded judgments (BEIR conventions)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence


def ndcg_at(ranking: Sequence[str], judged: Mapping[str, int], k: int = 10) -> float:
    dcg = sum(
        (2 ** judged.get(doc, 0) - 1) / math.log2(rank + 2) for rank, doc in enumerate(ranking[:k])
    )
    ideal = sorted((g for g in judged.values() if g > 0), reverse=True)[:k]
    idcg = sum((2**g - 1) / math.log2(rank + 2) for rank, g in enumerate(ideal))
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
