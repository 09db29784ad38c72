"""Loci's retrieval metrics agree with trec_eval's (through pytrec_eval), the reference BEIR
reports: nDCG@10 with linear gain on graded judgments, Recall@100 and reciprocal rank."""

from __future__ import annotations

import random

import pytest
import pytrec_eval

from loci.eval.metrics import mrr_at, ndcg_at, recall_at


@pytest.mark.parametrize("seed", range(5))
def test_ndcg_recall_and_mrr_match_trec_eval_on_graded_judgments(seed: int) -> None:
    rng = random.Random(seed)
    docs = [f"d{i}" for i in range(60)]
    qrels: dict[str, dict[str, int]] = {}
    runs: dict[str, list[str]] = {}
    for q in range(40):
        judged = rng.sample(docs, rng.randint(1, 12))
        qrels[f"q{q}"] = {d: rng.choice([0, 1, 1, 2, 3]) for d in judged}
        runs[f"q{q}"] = rng.sample(docs, rng.randint(0, 50))
    # strictly falling scores, so trec_eval's tie-breaking cannot reorder the ranking
    run = {q: {d: 1.0 / (i + 1) for i, d in enumerate(r)} for q, r in runs.items()}
    measures = {"ndcg_cut_10", "recall_100", "recip_rank"}
    reference = pytrec_eval.RelevanceEvaluator(qrels, measures).evaluate(run)
    for query, ranking in runs.items():
        expected = reference.get(query, {"ndcg_cut_10": 0.0, "recall_100": 0.0, "recip_rank": 0.0})
        assert ndcg_at(ranking, qrels[query], 10) == pytest.approx(
            expected["ndcg_cut_10"], abs=1e-9
        )
        assert recall_at(ranking, qrels[query], 100) == pytest.approx(
            expected["recall_100"], abs=1e-9
        )
        if any(qrels[query].get(d, 0) > 0 for d in ranking[:10]):  # trec_eval's has no cut-off
            assert mrr_at(ranking, qrels[query], 10) == pytest.approx(expected["recip_rank"])
