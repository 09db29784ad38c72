"""Step 6 (corrective RAG): is each passage relevant, partially relevant or not, and is
that enough to answer, worth one broader search, or nothing at all?

Without a model the grade comes from two signals search already has that do not depend on the
other hits: how many of the question's content words the passage contains, and how close it is
in meaning — its cosine read against how close unrelated passages of the same brain come
(`loci.search.closeness`), so the grade holds for any embedder and in a script the embedder
cannot read (where every raw cosine is high). Fused scores are relative to the other hits and
cannot say "nothing here".
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from loci.answer import prompts
from loci.answer.answer_type import asking_words
from loci.answer.dates import date_keys
from loci.answer.sources import Source, blocks
from loci.errors import LLMMalformed
from loci.llm.client import Chat, parse_json_object
from loci.search.lexical import STOPWORDS, query_terms, word_pattern
from loci.sentences import script_language
from loci.store.stemming import ENGLISH, analyze
from loci.store.text_analysis import is_segmented, segment

Relevance = Literal["relevant", "partially_relevant", "irrelevant"]
Decision = Literal["sufficient", "needs_expansion", "no_relevant_sources"]
RELEVANT_AT = 0.6
PARTIAL_AT = 0.34
# Closeness: no credit as close as the closest tenth of unrelated pairs, full credit at the
# closest thousandth (for the bundled model in a small brain: cosine 0.2 and 0.6).
CLOSENESS_FLOOR, CLOSENESS_FULL = 1.0, 3.0
# Sharing a word is not sharing a topic: "Who services the boiler?" shares "service" with a car
# invoice (cosine 0.16). Below the floor, the words a passage shares count for half — where the
# embedder can read the passage at all (Latin script: the bundled model is English).
OFF_TOPIC_WORDS = 0.5
STEM = 5
FUZZY_LENGTH = 6  # a word this long matches one a letter shorter ("choose": "chose")
# Chinese characters that ask or join rather than name a topic: question words, particles, the
# copula, measure and modal words.
CJK_FUNCTION = frozenset(
    "哪个什么怎样如何为吗呢吧啊的了是在有和与或也都就还这那些么能会可以要几多少谁"
)


@dataclass(frozen=True)
class Grade:
    source: int
    relevance: Relevance
    score: float
    reasoning: str


def text_keys(text: str) -> set[str]:
    """What a word of `text` may be matched by: its first letters and its Porter stem.
    Analysed as the question's terms are, so a Japanese passage's bigrams meet the question's;
    the prefix alone would keep "fire" from "fires" and "tax" from "taxes"."""
    words = [w.lower() for w in re.findall(r"[^\W_]+", segment(text))]
    keys = {w[:STEM] for w in words} | set(analyze(text, ENGLISH)) | date_keys(text)
    keys |= {"~" + word for word in words if len(word) >= FUZZY_LENGTH - 1}
    return keys


def _near_keys(word: str) -> set[str]:
    """A long word's keys that a text word one letter off meets ("choose" and "chose",
    "colour" and "color", a typo): the word and every way of dropping one of its letters."""
    if len(word) < FUZZY_LENGTH:
        return set()
    return {"~" + word} | {"~" + word[:i] + word[i + 1 :] for i in range(len(word))}


def coverage(question: str, text: str) -> float:
    """The share of the question's content words that the text contains, a word counting when
    its first letters or its stem are found there. In Japanese or Chinese, the share of its
    characters: one is found when a pair of characters holding it is."""
    units = question_words(question)
    if not units:
        return 0.0
    found = text_keys(text)
    return sum(weight for keys, weight in units if keys & found) / sum(w for _, w in units)


@functools.lru_cache(maxsize=64)
def question_words(question: str) -> tuple[tuple[frozenset[str], float], ...]:
    """What a text must hold to cover the question, each with its weight: a content word (1),
    or a character of a space-less script (a half: about two make a word), found by either
    pair it is in. Counting pairs instead, the half of them that straddle two words ("个命" in
    "哪个命令") would be missing from every passage. Read once for a question an answer checks
    against every sentence of its passages."""
    units: list[tuple[frozenset[str], float]] = []
    characters: list[str] = []  # of each unit: its character in a space-less script, or ""
    seen: set[str] = set()
    asking = asking_words(question)  # "much" of "how much": asks for an amount, not a topic
    previous = ""  # the last pair of the run being read
    for piece in segment(question).split():
        if not is_segmented(piece):
            previous = ""
            for word in word_pattern().findall(piece):
                word = word.lower().replace("’", "'")
                if word not in STOPWORDS and word not in seen and word not in asking:
                    seen.add(word)
                    keys = {word[:STEM], *analyze(word, ENGLISH), *_near_keys(word)}
                    units.append((frozenset(keys), 1.0))
                    characters.append("")
            continue
        if previous and previous[-1] == piece[0] and len(piece) == 2:
            units[-1] = (units[-1][0] | {piece}, 0.5)  # the shared character: either pair
            units.append((frozenset({piece}), 0.5))
            characters.append(piece[1])
        elif len(piece) == 2:
            units += [(frozenset({piece}), 0.5), (frozenset({piece}), 0.5)]
            characters += [piece[0], piece[1]]
        else:
            units.append((frozenset({piece}), 0.5))  # a lone character
            characters.append(piece)
        previous = piece
    # What a Chinese or Japanese question asks with (哪个, 什么, 吗; Japanese's particles and
    # endings, in hiragana) is no more the topic than English's stopwords.
    units = [
        unit
        for unit, character in zip(units, characters, strict=True)
        if not (character and (character in CJK_FUNCTION or "\u3040" <= character <= "\u309f"))
    ]
    if not units:  # nothing but stopwords: they are the question
        units = [(frozenset({t[:STEM], *analyze(t, ENGLISH)}), 1.0) for t in query_terms(question)]
    # A date asked for is found however the text writes it ("February 2026": "2026-02").
    dates = date_keys(question)
    if dates:
        units.append((frozenset(dates), 1.0))
    return tuple(units)


def _relevance(score: float) -> Relevance:
    if score >= RELEVANT_AT:
        return "relevant"
    return "partially_relevant" if score >= PARTIAL_AT else "irrelevant"


def grade_by_scores(question: str, sources: Sequence[Source]) -> list[Grade]:
    """Grades from the words a passage shares and how close it is in meaning: what a summary
    or a comparison is graded by without a model (a factual question is graded by the units
    that might state its answer, `loci.answer.quoting`)."""
    grades = []
    for source in sources:
        covered = coverage(question, source.hit.text)
        near = source.hit.closeness
        semantic = 0.0
        if near is not None:
            span = CLOSENESS_FULL - CLOSENESS_FLOOR
            semantic = min(max((near - CLOSENESS_FLOOR) / span, 0.0), 1.0)
            if near < CLOSENESS_FLOOR and script_language(source.hit.text) == "en":
                covered *= OFF_TOPIC_WORDS
        score = round(max(covered, semantic), 3)
        reasoning = f"{covered:.0%} of the question's words"
        if source.hit.vector_score is not None:
            reasoning += f", similarity {source.hit.vector_score:.2f}"
        if near is not None:
            reasoning += f" (closeness {near:.1f})"
        grades.append(Grade(source.number, _relevance(score), score, reasoning))
    return grades


def grade_with_model(
    chat: Chat, question: str, sources: Sequence[Source], timeout_s: float | None = None
) -> list[Grade]:
    """One call grades every passage; a passage the model skipped counts as irrelevant."""
    reply = chat.complete(
        [
            {"role": "system", "content": prompts.GRADE},
            {"role": "user", "content": f"{blocks(list(sources))}\n\nQuestion: {question}"},
        ],
        json_object=True,
        timeout_s=timeout_s,
    )
    raw = parse_json_object(reply.text).get("grades")
    by_number: dict[int, Grade] = {}
    for item in raw if isinstance(raw, list) else []:
        try:
            number = int(item["source"])
            relevance = item["relevance"]
            score = float(item.get("score", 0.0))
        except (KeyError, TypeError, ValueError):
            continue
        if relevance not in ("relevant", "partially_relevant", "irrelevant"):
            continue
        reasoning = str(item.get("reasoning", ""))[:300]
        by_number[number] = Grade(number, relevance, min(max(score, 0.0), 1.0), reasoning)
    if not by_number:
        raise LLMMalformed("the grader returned no usable grades")
    return [
        by_number.get(s.number, Grade(s.number, "irrelevant", 0.0, "not graded")) for s in sources
    ]


def decide(grades: Sequence[Grade], expanded: bool) -> Decision:
    """Answer only from a relevant passage: partly relevant ones are worth one broader search,
    never an answer of their own (an answer under "0 relevant" quoted unrelated text)."""
    if any(g.relevance == "relevant" for g in grades):
        return "sufficient"
    if any(g.relevance == "partially_relevant" for g in grades) and not expanded:
        return "needs_expansion"
    return "no_relevant_sources"
