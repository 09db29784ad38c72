"""Choosing what to quote, by measured parts: how likely each unit of the passages is to state
the answer, and from that, whether to answer at all.

Each unit (`loci.answer.units`) of the passages search found is described by a few numbers: how
much of the question it holds — its words, each weighted by how rare it is among the units read
(a word every unit holds tells none apart) — alone, with its section's headings, and in the
units just before and after it; how close it is in meaning (the shipped embedder reads the
question and the units in one batch, where it reads their language); how close its passage is;
whether it holds the kind of answer asked for (a date, an amount, a name, a command) that the
question does not already say; whether it only leads into what follows; how its passage ranked.
A logistic model turns them into the probability that the unit states the answer.

A second model decides, from the best unit's odds and what the question shares with the brain
(how many of its words the brain never mentions at all, how much of it the best passage holds),
whether the answer that quotes it will be right: below `ANSWER_AT`, Loci refuses.

Both models' weights were fitted on the dev half of bench/answers by `bench/answer_fit.py`
(which prints them, with the curve of answering against refusing), not set by hand, so a rule
that seemed to fix one case earns its weight on some 170 questions or gets none.
docs/benchmarks-journal.md has the figures on the test half.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from loci.answer.answer_type import holds, wanted
from loci.answer.grading import Grade, Relevance, question_words, text_keys
from loci.answer.sources import Source
from loci.answer.units import Unit, units, words
from loci.embed.base import Vectors
from loci.function_words import FUNCTION_WORDS
from loci.search.lexical import query_terms
from loci.store.text_analysis import is_segmented

FEATURES = (
    "bias",
    "words",  # share of the question's words the unit holds
    "rare_words",  # … each weighted by its rarity among the units read
    "in_section",  # … the unit with its headings, its document's title and name
    "before",  # … the unit just before it in its passage
    "after",  # … the unit just after it
    "passage_words",  # … its whole passage
    "meaning",  # cosine of question and unit, where the embedder reads both (else 0)
    "read",  # 1 where the embedder read it: "meaning" counts there
    "closeness",  # its passage's closeness to the question, against the brain's background
    "kind_held",  # holds the kind of answer asked for, new to the question
    "kind_missing",  # a kind was asked for and the unit holds none
    "lead_in",  # ends with ":": it introduces what follows
    "rank",  # 1 / its passage's rank
    "field",
    "row",
    "list",
    "length",  # its words, up to 40, over 40
)
DECISION_FEATURES = (
    "bias",
    "best",  # the best unit's log-odds
    "missing",  # share of the question's words no unit read holds at all
)
# Fitted on the dev half of bench/answers by bench/answer_fit.py.
WEIGHTS = np.array(
    [-5.671, 0.456, 1.319, 2.218, 0.201, -0.323, 0.651, 1.839, -0.490, 0.497, 0.758, -2.131,
     -0.796, 1.642, -0.033, -0.906, -0.054, 0.467],
    dtype=np.float64,
)  # fmt: skip
DECISION_WEIGHTS = np.array([1.059, 0.099, -3.319], dtype=np.float64)
# The decision's probability from which Loci answers. On dev questions its weights never saw
# (5-fold cross-validation) answers are right 45-56% of the time at any threshold from 0.3 to
# 0.5: the decision tells near-miss questions apart only a little (AUC 0.65), so the threshold
# mostly sets how often Loci answers. Issue 29 weighs a wrong answer and a missed refusal above a
# missed answer; at 0.40, against the answerer this replaced, the dev half has 46 answers right
# (32 before), 42 wrong (77), 40 right refusals (24) and 43 wrong ones (38) of 171.
ANSWER_AT = 0.40
PARTLY_AT = 0.30  # … from which a passage is shown as partly relevant
CLOSENESS_FLOOR, CLOSENESS_FULL = 1.0, 3.0  # as in grading: no credit, full credit
# Units embedded per ask, the most promising by their rare words (dev: 12 rank as 16 and 48 do,
# 10 and 8 worse), each by its first characters: the embedding is most of an ask's cost.
MAX_EMBEDDED = 12
EMBEDDED_CHARS = 240


@dataclass(frozen=True)
class Candidate:
    unit: Unit
    source: Source
    features: tuple[float, ...]
    probability: float  # that the unit states the answer


@dataclass(frozen=True)
class Quoted:
    """The units that might state the answer, best first, and the decision's inputs."""

    found: list[Candidate]
    decision_features: tuple[float, ...]
    answer_probability: float  # that an answer quoting them is right


@dataclass(frozen=True)
class Reader:
    """What the quoting reads with: the embedder (None: meaning is not used) and which
    languages it reads (None: every language)."""

    embed: Callable[[Sequence[str]], Vectors] | None = None
    languages: frozenset[str] | None = frozenset()
    # The question's vector and the units', where the model reads questions its own way (e5's
    # "query: " beside "passage: "); None: the question as the units are, in one batch with them.
    embed_question: Callable[[str, Sequence[str]], tuple[Vectors, Vectors]] | None = None

    def question_and(self, question: str, texts: Sequence[str]) -> tuple[Vectors, Vectors]:
        """The question's vector and the texts' vectors."""
        if self.embed_question is not None:
            return self.embed_question(question, texts)
        assert self.embed is not None
        vectors = self.embed([question, *texts])
        return vectors[0], vectors[1:]

    def reads(self, language: str | None) -> bool:
        if self.embed is None:
            return False
        return self.languages is None or language is None or language in self.languages


def quote(
    question: str,
    sources: Sequence[Source],
    reader: Reader,
    *,
    question_language: str | None = None,
    languages: Sequence[str | None] = (),
    weights: np.ndarray = WEIGHTS,
    decision_weights: np.ndarray = DECISION_WEIGHTS,
) -> Quoted:
    """Every unit of `sources` with its probability, best first, and the probability that an
    answer quoting them is right. `languages`: each source's."""
    found = candidates(
        question,
        sources,
        reader,
        question_language=question_language,
        languages=languages,
        weights=weights,
    )
    inputs = decision_features(question, found, weights)
    return Quoted(found, inputs, _logistic(float(np.dot(decision_weights, inputs))))


def candidates(
    question: str,
    sources: Sequence[Source],
    reader: Reader,
    *,
    question_language: str | None = None,
    languages: Sequence[str | None] = (),
    weights: np.ndarray = WEIGHTS,
) -> list[Candidate]:
    """Every unit of `sources` with its features and probability, best first."""
    kind = wanted(question)
    asked = question_words(question)
    read: list[_Read] = []
    for rank, source in enumerate(sources, start=1):
        language = languages[rank - 1] if rank - 1 < len(languages) else None
        citation = source.hit.citation
        section = _section_keys(source)
        passage = _share(asked, text_keys(source.hit.text), None)
        reads = reader.reads(language) and reader.reads(question_language)
        near = _closeness(source.hit.closeness)
        for unit in units(source.hit.text, citation.heading_path, language):
            keys = text_keys(unit.text)
            read.append(_Read(unit, source, rank, keys, section, passage, near, reads))
    rarity = _rarity(asked, [r.keys for r in read])
    rows: list[list[float]] = []
    for i, r in enumerate(read):
        held = kind is not None and holds(r.unit.text, kind, question)
        rows.append(
            [
                1.0,
                _share(asked, r.keys, None),
                _share(asked, r.keys, rarity),
                _share(asked, r.keys | r.section, rarity),
                _neighbour(asked, read, i, -1, rarity),
                _neighbour(asked, read, i, +1, rarity),
                r.passage,
                0.0,  # meaning and read: filled in for the units the embedder reads
                0.0,
                r.near,
                float(held),
                float(kind is not None and not held),
                float(r.unit.text.endswith((":", "："))),
                1.0 / r.rank,
                float(r.unit.kind == "field"),
                float(r.unit.kind == "row"),
                float(r.unit.kind == "list"),
                min(words(r.unit.text), 40) / 40,
            ]
        )
    _add_meaning(question, [r.unit.text for r in read], rows, [r.reads for r in read], reader)
    scored = [
        Candidate(r.unit, r.source, tuple(values), _logistic(float(np.dot(weights, values))))
        for r, values in zip(read, rows, strict=True)
    ]
    return sorted(scored, key=lambda c: -c.probability)


@dataclass(frozen=True)
class _Read:
    """A unit as read, with what its features are made of."""

    unit: Unit
    source: Source
    rank: int
    keys: set[str]
    section: set[str]  # the keys of its headings, title and file name
    passage: float  # the share of the question's words its passage holds
    near: float  # its passage's closeness, 0 to 1
    reads: bool  # the embedder reads it and the question


def decision_features(
    question: str, found: Sequence[Candidate], weights: np.ndarray = WEIGHTS
) -> tuple[float, ...]:
    """What the decision reads: how good the best unit is, and how much of the question the
    passages read (with their headings, titles and file names) hold at all — an unanswerable
    question often asks for something they never say: "warranty" of a manual that states
    none. Other inputs tried (the most of the question one unit or passage holds, the words the
    brain never mentions, the kind of answer held) added nothing on held-out questions
    (docs/benchmarks-journal.md); nor did pairs of its words no one unit holds together, which
    took a weight against their sense."""
    if not found:
        return (1.0, -10.0, 1.0)
    asked = question_words(question)
    held: set[str] = set()
    for candidate in found:
        held |= text_keys(candidate.unit.text)
    for source in {id(c.source): c.source for c in found}.values():
        held |= _section_keys(source)
    total = sum(w for _, w in asked) or 1.0
    missing = sum(w for word, w in asked if not word & held) / total
    return (1.0, max(float(np.dot(weights, found[0].features)), -10.0), missing)


def _section_keys(source: Source) -> set[str]:
    """The words of a passage's headings, its document's title and file name."""
    citation = source.hit.citation
    return text_keys(" ".join([*citation.heading_path, citation.title or "", citation.name]))


def _share(
    asked: tuple[tuple[frozenset[str], float], ...], keys: set[str], rarity: list[float] | None
) -> float:
    """The share of the question's words `keys` holds, each weighted (by `rarity`, if given)."""
    if not asked:
        return 0.0
    weight = [w * (rarity[i] if rarity else 1.0) for i, (_, w) in enumerate(asked)]
    total = sum(weight)
    if total <= 0:
        return 0.0
    return sum(weight[i] for i, (word, _) in enumerate(asked) if word & keys) / total


def _rarity(asked: tuple[tuple[frozenset[str], float], ...], held: list[set[str]]) -> list[float]:
    """Each question word's inverse document frequency among the units read: a word every
    unit holds (the product's name in its own manual) tells none of them apart."""
    n = len(held)
    return [
        math.log((n + 1) / (sum(1 for keys in held if word & keys) + 1)) + 1.0 for word, _ in asked
    ]


def _neighbour(
    asked: tuple[tuple[frozenset[str], float], ...],
    read: list[_Read],
    i: int,
    step: int,
    rarity: list[float],
) -> float:
    j = i + step
    if not 0 <= j < len(read) or read[j].source is not read[i].source:
        return 0.0
    return _share(asked, read[j].keys, rarity)


def _add_meaning(
    question: str,
    texts: list[str],
    rows: list[list[float]],
    readable: list[bool],
    reader: Reader,
) -> None:
    """The cosine of question and unit, for the most promising units the embedder reads: one
    batch per ask (the question and the units)."""
    if reader.embed is None:
        return
    at = FEATURES.index
    promising = sorted(
        (i for i, ok in enumerate(readable) if ok), key=lambda i: -rows[i][at("rare_words")]
    )[:MAX_EMBEDDED]
    if not promising:
        return
    asked, vectors = reader.question_and(question, [texts[i][:EMBEDDED_CHARS] for i in promising])
    for i, value in zip(promising, vectors @ asked, strict=True):
        rows[i][at("meaning")] = float(value)
        rows[i][at("read")] = 1.0


def _closeness(near: float | None) -> float:
    if near is None:
        return 0.0
    return min(max((near - CLOSENESS_FLOOR) / (CLOSENESS_FULL - CLOSENESS_FLOOR), 0.0), 1.0)


def _logistic(z: float) -> float:
    return 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))


def unknown_words(question: str, mentions: Callable[[str], bool] | None) -> list[str]:
    """The question's words that nothing in the brain holds (`mentions`: a one-hit text
    search): "passport" asked of a brain that never says it."""
    if mentions is None:
        return []
    # A pair of Chinese or Japanese characters is how search reads the question, not a word a
    # person would recognise as theirs: only whole words are named, as the question spells them.
    missing = [
        t
        for t in query_terms(question)
        if not is_segmented(t) and t not in FUNCTION_WORDS and not mentions(t)
    ]
    spelled = {w.lower(): w for w in reversed(re.findall(r"[^\W_][\w'’-]*", question))}
    return [spelled.get(t, t) for t in missing]


def grades(sources: Sequence[Source], quoted: Quoted) -> list[Grade]:
    """Each source graded by its best unit. The source of the best unit is relevant when an
    answer quoting it is likely right (`ANSWER_AT`), partly relevant when it might be
    (`PARTLY_AT`); any other source by its own best unit's odds against the best's. A unit of a
    passage read only for context (the rest of a short document) counts for the first source of
    its document."""
    numbers = {s.number for s in sources}
    first_of: dict[int, int] = {}
    for source in sources:
        first_of.setdefault(source.hit.citation.document_id, source.number)
    best: dict[int, Candidate] = {}
    for candidate in quoted.found:
        number = candidate.source.number
        if number not in numbers:
            number = first_of.get(candidate.source.hit.citation.document_id, number)
        if number in numbers and number not in best:
            best[number] = candidate  # found is sorted: the first is its best
    top = quoted.found[0].probability if quoted.found else 0.0
    graded = []
    for source in sources:
        unit = best.get(source.number)
        share = unit.probability / top if unit is not None and top > 0 else 0.0
        p = quoted.answer_probability * share
        reasoning = f"{p:.0%}" + (f", best: “{_short(unit.unit.text)}”" if unit else "")
        graded.append(Grade(source.number, _relevance(p), round(p, 3), reasoning))
    return graded


def _relevance(p: float) -> Relevance:
    if p >= ANSWER_AT:
        return "relevant"
    return "partially_relevant" if p >= PARTLY_AT else "irrelevant"


def _short(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0] + " …"
