"""Choosing what to quote, by measured parts: how likely each unit of the passages is to state
the answer, and from that whether to answer at all.

Each unit (`loci.answer.units`) of the passages search found is described by a few numbers —
how many of the question's words it holds, alone and with its section's heading; how close it
is in meaning (the shipped embedder reads the question and the units in one batch, where it
reads their language); how close its passage is; whether it holds the kind of answer asked for
(a date, an amount, a name, a command) that the question does not already say; whether it only
leads into what follows; how the passage ranked; and how much of the question the brain never
mentions at all. A logistic model turns them into the probability that the unit states the
answer. Its weights were fitted on the dev half of bench/answers (`bench/answer_fit.py` prints
them; docs/benchmarks.md shows how well they do on the test half), not set by hand, so a rule
that seemed to fix one case earns its weight on some 150 questions or gets none.

The best unit's probability is the one decision to answer or to refuse: below `ANSWER_AT`,
nothing in the passages states an answer, whatever words they share with the question.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from loci.answer.answer_type import AnswerType, holds, wanted
from loci.answer.grading import coverage
from loci.answer.sources import Source
from loci.answer.units import Unit, units, words
from loci.embed.base import Vectors

FEATURES = (
    "bias",
    "words",  # share of the question's content words the unit holds
    "words_in_section",  # … the unit with its headings and its document's title
    "passage_words",  # … its whole passage
    "meaning",  # cosine of question and unit, where the embedder reads both (else 0)
    "read",  # 1 where the embedder reads question and unit: "meaning" counts there
    "closeness",  # its passage's closeness to the question, against the brain's background
    "kind_held",  # holds the kind of answer asked for, new to the question
    "kind_missing",  # a kind was asked for and the unit holds none
    "lead_in",  # ends with ":": it introduces what follows
    "rank",  # 1 / its passage's rank
    "unknown",  # share of the question's words the brain never mentions
    "field",
    "row",
    "list",
    "length",  # its words, up to 40, over 40
)
# Fitted on the dev half of bench/answers by bench/answer_fit.py (logistic regression on every
# unit of the passages an ask reads; a unit is right when it holds a fact of the answer).
WEIGHTS = np.array(
    [-3.0, 2.0, 0.5, 0.5, 2.0, 0.0, 0.5, 1.0, -0.5, -0.5, 0.5, -3.0, 0.3, 0.3, 0.3, 0.0],
    dtype=np.float64,
)
ANSWER_AT = 0.5  # the best unit's probability from which Loci answers (fitted with the weights)
PARTLY_AT = 0.25  # a passage whose best unit reaches this is shown as partly relevant
CLOSENESS_FLOOR, CLOSENESS_FULL = 1.0, 3.0  # as in grading: no credit, full credit
MAX_EMBEDDED = 48  # units embedded per ask, the most promising by their words first


@dataclass(frozen=True)
class Candidate:
    unit: Unit
    source: Source
    features: tuple[float, ...]
    probability: float


@dataclass(frozen=True)
class Reader:
    """What the quoting reads with: the embedder (None: meaning is not used) and which
    languages it reads (None: every language)."""

    embed: Callable[[Sequence[str]], Vectors] | None = None
    languages: frozenset[str] | None = frozenset()

    def reads(self, language: str | None) -> bool:
        if self.embed is None:
            return False
        return self.languages is None or language is None or language in self.languages


def candidates(
    question: str,
    sources: Sequence[Source],
    reader: Reader,
    *,
    unknown: float = 0.0,
    question_language: str | None = None,
    languages: Sequence[str | None] = (),
    weights: np.ndarray = WEIGHTS,
) -> list[Candidate]:
    """Every unit of `sources` with its features and probability, best first. `unknown`: the
    share of the question's words the brain never mentions; `languages`: each source's."""
    kind = wanted(question)
    rows: list[tuple[Unit, Source, list[float]]] = []
    readable: list[int] = []
    for rank, source in enumerate(sources, start=1):
        language = languages[rank - 1] if rank - 1 < len(languages) else None
        citation = source.hit.citation
        section = " ".join([*citation.heading_path, citation.title or "", citation.name])
        passage = coverage(question, source.hit.text)
        near = _closeness(source.hit.closeness)
        reads = reader.reads(language) and reader.reads(question_language)
        for unit in units(source.hit.text, citation.heading_path, language):
            values = _features(question, kind, unit, section, passage, near, rank, unknown)
            if reads:
                readable.append(len(rows))
            rows.append((unit, source, values))
    _add_meaning(question, rows, readable, reader)
    scored = [
        Candidate(unit, source, tuple(values), _probability(values, weights))
        for unit, source, values in rows
    ]
    return sorted(scored, key=lambda c: -c.probability)


def _features(
    question: str,
    kind: AnswerType | None,
    unit: Unit,
    section: str,
    passage: float,
    near: float,
    rank: int,
    unknown: float,
) -> list[float]:
    held = kind is not None and holds(unit.text, kind, question)
    return [
        1.0,
        coverage(question, unit.text),
        coverage(question, f"{section} {unit.text}"),
        passage,
        0.0,  # meaning: filled in for the units the embedder reads
        0.0,
        near,
        float(held),
        float(kind is not None and not held),
        float(unit.text.endswith((":", "："))),
        1.0 / rank,
        unknown,
        float(unit.kind == "field"),
        float(unit.kind == "row"),
        float(unit.kind == "list"),
        min(words(unit.text), 40) / 40,
    ]


def _add_meaning(
    question: str, rows: list[tuple[Unit, Source, list[float]]], readable: list[int], reader: Reader
) -> None:
    """The cosine of question and unit, for the most promising units the embedder reads: one
    batch per ask (the question and the units)."""
    if reader.embed is None or not readable:
        return
    words_at, meaning_at, read_at = (FEATURES.index(f) for f in ("words", "meaning", "read"))
    chosen = sorted(readable, key=lambda i: -rows[i][2][words_at])[:MAX_EMBEDDED]
    vectors = reader.embed([question, *(rows[i][0].text for i in chosen)])
    similarity = vectors[1:] @ vectors[0]
    for i, value in zip(chosen, similarity, strict=True):
        rows[i][2][meaning_at] = float(value)
        rows[i][2][read_at] = 1.0


def _closeness(near: float | None) -> float:
    if near is None:
        return 0.0
    return min(max((near - CLOSENESS_FLOOR) / (CLOSENESS_FULL - CLOSENESS_FLOOR), 0.0), 1.0)


def _probability(values: Sequence[float], weights: np.ndarray) -> float:
    z = float(np.dot(weights, values))
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))
