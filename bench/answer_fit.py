"""Fit the weights that choose what an answer without a model quotes, and the probability from
which it answers, on the dev half of bench/answers — and show what each costs.

    python bench/answer_fit.py [--keep DIR] [--split dev] [--folds 5] [--drop meaning]

For each question, the pipeline's own first reading (`Asker.reading`: the passages its first
search finds, and the rest of the best one's document when it is short) gives every unit with
its features (`loci.answer.quoting.FEATURES`). A unit is right when it comes from the file the
question names and holds one of the facts. A logistic regression (L2, Newton's method) is fitted
on those units; the answer is then composed as `loci ask` composes it (`extractive_answer`) and
graded as bench/answer_quality.py grades it, for every threshold of the best unit's
probability: the curve of answering (precision: correct of answered) against recall (correct of
answerable), and the threshold that keeps wrong answers rarest for the correct ones it costs.

The weights are first judged by cross-validation within the split (`--folds`: each question's
answer scored by weights fitted without it), so a feature's worth (`--drop`) is measured on
questions its weights never saw; then fitted on the whole split and printed, to be pasted into
`loci/answer/quoting.py`.
"""

from __future__ import annotations

import argparse
import json
import pickle
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
from answer_quality import (
    ANSWERS,
    Question,
    add_files,
    load_questions,
    outcome_of,
    says,
    scratch_service,
)

from loci.answer.citation_order import by_first_use
from loci.answer.extractive import extractive_answer
from loci.answer.quoting import DECISION_FEATURES, FEATURES, Candidate, decision_features
from loci.answer.sources import Source

DECISION_L2 = 0.01
L2 = 1.0  # ridge on the weights (not the bias), against a handful of units deciding alone


@dataclass
class Asked:
    question: Question
    sources: list[Source]
    found: list[Candidate]
    path_of: dict[int, str]
    labels: np.ndarray  # per candidate: 1 where it is right

    @property
    def features(self) -> np.ndarray:
        return np.array([c.features for c in self.found], dtype=np.float64).reshape(
            -1, len(FEATURES)
        )


def read_all(keep: Path | None, split: str, cache: Path | None = None) -> list[Asked]:
    """Every question's reading; with `cache`, kept there (and read from there next time)."""
    if cache is not None and cache.exists():
        loaded: list[Asked] = pickle.loads(cache.read_bytes())
        return loaded
    asked: list[Asked] = []
    with scratch_service(keep, None, None) as loci:
        for corpus in sorted(p.parent for p in ANSWERS.glob("*/questions.jsonl")):
            questions = [
                q for q in load_questions(corpus / "questions.jsonl") if split in ("all", q.split)
            ]
            path_of = add_files(loci, corpus.name, corpus / "docs")
            brain = loci.brain(corpus.name)
            for q in questions:
                reading = loci.answers.asker(brain, q.text).reading(q.text)
                found = reading.quoted.found
                labels = np.array([right(q, c, path_of) for c in found], dtype=np.float64)
                asked.append(Asked(q, reading.sources, found, path_of, labels))
    if cache is not None:
        cache.write_bytes(pickle.dumps(asked))
    return asked


def right(question: Question, candidate: Candidate, path_of: dict[int, str]) -> bool:
    if question.document is None:
        return False
    if path_of.get(candidate.source.hit.citation.document_id) != question.document:
        return False
    return any(says(candidate.unit.text, spellings) for spellings in question.facts)


def logistic_fit(x: np.ndarray, y: np.ndarray, l2: float = L2) -> np.ndarray:
    """Logistic regression weights (the first column is the bias, not penalised): Newton."""
    w = np.zeros(x.shape[1])
    ridge = np.full(x.shape[1], l2)
    ridge[0] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-np.clip(x @ w, -30, 30)))
        gradient = x.T @ (p - y) + ridge * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + np.diag(ridge) + 1e-9 * np.eye(len(w))
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w


def fit(asked: list[Asked], columns: np.ndarray) -> np.ndarray:
    """The unit model's weights over the chosen feature columns."""
    x = np.vstack([a.features[:, columns] for a in asked if len(a.found)])
    y = np.concatenate([a.labels for a in asked if len(a.found)])
    full = np.zeros(len(FEATURES))
    full[columns] = logistic_fit(x, y)
    return full


def rescored(a: Asked, weights: np.ndarray) -> list[Candidate]:
    z = np.clip(a.features @ weights, -30, 30) if len(a.found) else np.zeros(0)
    p = 1 / (1 + np.exp(-z))
    found = [replace(c, probability=float(v)) for c, v in zip(a.found, p, strict=True)]
    return sorted(found, key=lambda c: -c.probability)


@dataclass
class Scored:
    asked: Asked
    inputs: tuple[float, ...]  # the decision's features
    outcome_if_answered: str  # "correct" or "wrong"
    answer_p: float = 0.0  # the decision's probability, once a decision model is fitted


def score(a: Asked, weights: np.ndarray) -> Scored:
    found = rescored(a, weights)
    inputs = decision_features(a.question.text, found, weights)
    if not found:
        return Scored(a, inputs, "wrong")
    text, cited = by_first_use(extractive_answer(a.question.text, found), a.sources)
    names = {a.path_of.get(s.hit.citation.document_id, "?") for s in cited}
    outcome, _ = outcome_of(a.question, False, text, names)
    return Scored(a, inputs, outcome)


def decide_fit(scored: list[Scored]) -> np.ndarray:
    """The decision's weights: few features, so hardly any ridge."""
    x = np.array([s.inputs for s in scored], dtype=np.float64)
    y = np.array([s.outcome_if_answered == "correct" for s in scored], dtype=np.float64)
    return logistic_fit(x, y, l2=DECISION_L2)


def with_decision(scored: list[Scored], weights: np.ndarray) -> list[Scored]:
    for s in scored:
        z = float(np.clip(np.dot(weights, s.inputs), -30, 30))
        s.answer_p = 1 / (1 + np.exp(-z))
    return scored


def outcomes(scored: list[Scored], threshold: float) -> dict[str, int]:
    counts = dict.fromkeys(("correct", "wrong", "refused wrongly", "refused rightly"), 0)
    for s in scored:
        answerable = s.asked.question.document is not None
        if s.answer_p < threshold:
            counts["refused wrongly" if answerable else "refused rightly"] += 1
        else:
            counts[s.outcome_if_answered] += 1
    return counts


def cross_validated(asked: list[Asked], columns: np.ndarray, folds: int) -> list[Scored]:
    """Each question scored by both models fitted without it: the unit model on the other
    folds, then the decision model on the other folds' questions (scored by unit models that
    never saw them either)."""
    scored: list[Scored | None] = [None] * len(asked)
    for k in range(folds):
        weights = fit([a for i, a in enumerate(asked) if i % folds != k], columns)
        for i, a in enumerate(asked):
            if i % folds == k:
                scored[i] = score(a, weights)
    done = [s for s in scored if s is not None]
    for k in range(folds):
        decision = decide_fit([s for i, s in enumerate(done) if i % folds != k])
        with_decision([s for i, s in enumerate(done) if i % folds == k], decision)
    return done


def ranks(asked: list[Asked], columns: np.ndarray, folds: int) -> dict[str, float]:
    """Where the first right unit ranks, for the questions where one was read."""
    found_at: list[int] = []
    for k in range(folds):
        weights = fit([a for i, a in enumerate(asked) if i % folds != k], columns)
        for i, a in enumerate(asked):
            if i % folds != k or not a.labels.any():
                continue
            p = a.features @ weights
            order = np.argsort(-p, kind="stable")
            found_at.append(int(np.flatnonzero(a.labels[order])[0]) + 1)
    n = len(found_at) or 1
    return {
        "questions": len(found_at),
        "first": round(sum(r == 1 for r in found_at) / n, 3),
        "top3": round(sum(r <= 3 for r in found_at) / n, 3),
        "mrr": round(sum(1 / r for r in found_at) / n, 3),
    }


def best_threshold(scored: list[Scored], min_precision: float) -> float:
    """The lowest threshold (the most answers) at which answers are right at least
    `min_precision` of the time."""
    grid = np.round(np.arange(0.05, 0.96, 0.01), 2)
    for t in grid:
        c = outcomes(scored, float(t))
        answered = c["correct"] + c["wrong"]
        if answered and c["correct"] / answered >= min_precision:
            return float(t)
    return float(grid[-1])


def auc(scored: list[Scored]) -> float:
    """How often a right answer's probability stands above a wrong one's (0.5: chance)."""
    right = [s.answer_p for s in scored if s.outcome_if_answered == "correct"]
    wrong = [s.answer_p for s in scored if s.outcome_if_answered != "correct"]
    if not right or not wrong:
        return 0.5
    above = sum((r > w) + 0.5 * (r == w) for r in right for w in wrong)
    return round(above / (len(right) * len(wrong)), 3)


def curve(scored: list[Scored]) -> list[dict[str, float]]:
    answerable = sum(s.asked.question.document is not None for s in scored)
    rows = []
    for t in np.round(np.arange(0.1, 0.91, 0.05), 2):
        c = outcomes(scored, float(t))
        answered = c["correct"] + c["wrong"]
        rows.append(
            {
                "threshold": float(t),
                "precision": round(c["correct"] / answered, 3) if answered else 1.0,
                "recall": round(c["correct"] / answerable, 3) if answerable else 0.0,
                **c,
            }
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--keep", type=Path, help="reuse/keep the data directory here")
    parser.add_argument("--split", choices=("dev", "test", "all"), default="dev")
    parser.add_argument("--folds", type=int, default=5)
    parser.add_argument("--drop", action="append", default=[], help="a feature left out")
    parser.add_argument(
        "--min-precision", type=float, default=0.5, help="of the answers given, right at least"
    )
    parser.add_argument("--cache", type=Path, help="keep the readings here between runs")
    args = parser.parse_args()
    columns = np.array([i for i, f in enumerate(FEATURES) if f not in args.drop])
    asked = read_all(args.keep, args.split, args.cache)
    units = sum(len(a.found) for a in asked)
    positives = int(sum(a.labels.sum() for a in asked))
    reachable = sum(a.labels.any() for a in asked)
    answerable = sum(a.question.document is not None for a in asked)
    print(f"{len(asked)} questions, {units} units, {positives} right units; a right unit read")
    print(f"for {reachable} of {answerable} answerable questions (the ceiling of quoting)")

    held_out = cross_validated(asked, columns, args.folds)
    print(
        "ranking of the first right unit (cross-validated):",
        json.dumps(ranks(asked, columns, args.folds)),
    )
    threshold = best_threshold(held_out, args.min_precision)
    print(
        f"\ncross-validated ({args.folds} folds), best threshold {threshold}, AUC {auc(held_out)}:"
    )
    print("answering all:", json.dumps(outcomes(held_out, 0.0)))
    print(json.dumps(outcomes(held_out, threshold)))
    for row in curve(held_out):
        print(json.dumps(row))

    weights = fit(asked, columns)
    fitted = [score(a, weights) for a in asked]
    decision = decide_fit(fitted)
    with_decision(fitted, decision)
    threshold = best_threshold(fitted, args.min_precision)
    print(
        f"\nfitted on all {len(asked)}: threshold {threshold}",
        json.dumps(outcomes(fitted, threshold)),
    )
    print("WEIGHTS = np.array([" + ", ".join(f"{w:.3f}" for w in weights) + "])")
    print("DECISION_WEIGHTS = np.array([" + ", ".join(f"{w:.3f}" for w in decision) + "])")
    print(f"ANSWER_AT = {threshold}")
    for name, w in zip(FEATURES, weights, strict=True):
        print(f"  {name:18} {w:+.3f}")
    for name, w in zip(DECISION_FEATURES, decision, strict=True):
        print(f"  decision {name:18} {w:+.3f}")


if __name__ == "__main__":
    main()
