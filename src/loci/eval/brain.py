"""Evaluating a brain you use against questions you wrote (see `loci.eval.questions`).

Each question is searched as `loci search` would (hybrid, top k passages). It passes when one of
its expected documents is among those passages' documents and, if it names a phrase, one of the
passages contains it. Over the judged questions: the pass rate with its Wilson 95 % band, and
over those that name a document, Recall@k and MRR of the document ranking (the passages'
documents, first appearance). Latency is the search's, per question.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from loci.eval.metrics import mrr_at, percentile, recall_at, wilson_interval
from loci.eval.questions import Expectation, Question
from loci.models import Brain, Document, Hit
from loci.search.engine import SearchRequest
from loci.service import Loci

Verdict = Literal["pass", "fail", "unjudged"]


@dataclass(frozen=True)
class QuestionResult:
    line: int
    question: str
    verdict: Verdict
    document_found: bool | None  # None: no document expected
    rank: int | None  # of the first expected document among the hits' documents
    reciprocal_rank: float | None  # 1 / rank, 0 when not found; None: no document expected
    text_found: bool | None  # None: no phrase expected
    missing: tuple[str, ...]  # expected documents the brain does not have (name or id)
    top: tuple[str, ...]  # the hits' documents, best first
    latency_ms: float


@dataclass(frozen=True)
class Band:
    level: float
    low: float
    high: float


@dataclass(frozen=True)
class BrainEvaluation:
    brain: str
    k: int
    questions: int
    judged: int
    passed: int
    failed: int
    unjudged: int
    pass_rate: float | None  # None: nothing was judged
    confidence: Band
    with_document: int  # questions that name a document: Recall@k and MRR are over these
    recall_at_k: float | None
    mrr: float | None
    p50_ms: float
    p95_ms: float
    results: tuple[QuestionResult, ...]


def evaluate_brain(
    loci: Loci, brain: Brain, questions: Sequence[Question], k: int = 10
) -> BrainEvaluation:
    documents = loci.store.list_documents(brain.id)
    # The first search loads the embedding model (seconds); it is not the search's latency.
    if questions:
        loci.searching.search(brain, SearchRequest(questions[0].question, limit=1))
    results = [_run(loci, brain, q, k, documents) for q in questions]
    judged = [r for r in results if r.verdict != "unjudged"]
    passed = sum(r.verdict == "pass" for r in judged)
    low, high = wilson_interval(passed, len(judged))
    ranked = [r for r in results if r.reciprocal_rank is not None]
    recalls = [1.0 if r.document_found else 0.0 for r in ranked]
    reciprocal = [r.reciprocal_rank or 0.0 for r in ranked]
    latencies = [r.latency_ms for r in results]
    return BrainEvaluation(
        brain=brain.name,
        k=k,
        questions=len(results),
        judged=len(judged),
        passed=passed,
        failed=len(judged) - passed,
        unjudged=len(results) - len(judged),
        pass_rate=passed / len(judged) if judged else None,
        confidence=Band(0.95, low, high),
        with_document=len(ranked),
        recall_at_k=sum(recalls) / len(recalls) if recalls else None,
        mrr=sum(reciprocal) / len(reciprocal) if reciprocal else None,
        p50_ms=percentile(latencies, 50),
        p95_ms=percentile(latencies, 95),
        results=tuple(results),
    )


def _run(
    loci: Loci, brain: Brain, question: Question, k: int, documents: Sequence[Document]
) -> QuestionResult:
    start = time.perf_counter()
    hits = loci.searching.search(brain, SearchRequest(question.question, limit=k))
    latency = (time.perf_counter() - start) * 1000
    ranking = list(dict.fromkeys(str(h.citation.document_id) for h in hits))
    names = {str(h.citation.document_id): h.citation.name for h in hits}
    expect = question.expect
    wanted, missing = _resolve(expect, documents)
    document_found = rank = reciprocal = None
    if expect.documents:
        judged = {doc_id: 1 for doc_id in wanted}
        # Any one expected document answers the question, so a question's recall is 1 when
        # one is found (not the share of them found); MRR is the first one's reciprocal rank.
        document_found = recall_at(ranking, judged, k) > 0
        reciprocal = mrr_at(ranking, judged, k)
        rank = next((i for i, d in enumerate(ranking, start=1) if d in wanted), None)
    text_found = _contains(hits, expect.text) if expect.text is not None else None
    checks = [c for c in (document_found, text_found) if c is not None]
    verdict: Verdict = "unjudged" if not checks else "pass" if all(checks) else "fail"
    return QuestionResult(
        line=question.line,
        question=question.question,
        verdict=verdict,
        document_found=document_found,
        rank=rank,
        reciprocal_rank=reciprocal,
        text_found=text_found,
        missing=missing,
        top=tuple(names[d] for d in ranking),
        latency_ms=latency,
    )


def _resolve(
    expect: Expectation, documents: Sequence[Document]
) -> tuple[set[str], tuple[str, ...]]:
    """Expected names, titles or ids → the brain's document ids (as text), and those it lacks."""
    wanted: set[str] = set()
    missing = []
    for name in expect.documents:
        key = name.casefold()
        found = {
            str(d.id)
            for d in documents
            if name == str(d.id)
            or key in (d.name.casefold(), (d.title or "").casefold(), _stem(d.name).casefold())
        }
        if not found:
            missing.append(name)
        wanted |= found
    return wanted, tuple(missing)


def _stem(name: str) -> str:
    return name.rsplit(".", 1)[0] if "." in name else name


def _contains(hits: Sequence[Hit], phrase: str) -> bool:
    # Case and spacing are not what a phrase is about: a passage that wraps a line still says it.
    wanted = " ".join(phrase.casefold().split())
    passages = [p for h in hits for p in (h, *h.more)]  # a document's other passages count
    return any(wanted in " ".join(p.text.casefold().split()) for p in passages)
