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
from collections.abc import Callable, Sequence
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
# A capitalised word after the question's first: a name ("Notion", "IntelliJ", "Dr. Patel").
NAME = re.compile(r"(?<=\S )(?!I\b)[A-Z][\w-]*\w")  # "Foam's": Foam
# In a Japanese or Chinese question, any word in Latin letters: "Termux", "GPU", "rustup".
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9.+-]*[A-Za-z0-9]")
UNMENTIONED_NAME_CAP = 0.2  # passages that never name what is asked about: irrelevant


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
    words = re.findall(r"[^\W_]+", segment(text))
    return {w.lower()[:STEM] for w in words} | set(analyze(text, ENGLISH)) | date_keys(text)


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
                    units.append((frozenset({word[:STEM], *analyze(word, ENGLISH)}), 1.0))
            continue
        if previous and previous[-1] == piece[0] and len(piece) == 2:
            units[-1] = (units[-1][0] | {piece}, 0.5)  # the shared character: either pair
            units.append((frozenset({piece}), 0.5))
        elif len(piece) == 2:
            units += [(frozenset({piece}), 0.5), (frozenset({piece}), 0.5)]
        else:
            units.append((frozenset({piece}), 0.5))  # a lone character
        previous = piece
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


def unmentioned_names(
    question: str, passages: Sequence[str], mentions: Callable[[str], bool]
) -> list[str]:
    """The names in `question` (capitalised words after its first: "Notion", "IntelliJ"; in a
    Japanese or Chinese question, its words in Latin letters) that
    none of `passages` mentions and the brain does not hold at all (`mentions`). Passages on
    syncing in a brain that never names Notion do not answer "Can Foam sync with Notion?",
    however many of its other words they share. A name the brain holds elsewhere ("Foam" in
    a vault about Foam, absent from its code of conduct) says nothing against them."""
    said = {stem for text in passages for stem in analyze(text, ENGLISH)}
    # By the question's script, not by whether it holds a CJK word: "What does 寿司 mean?" is
    # English, and its words are not names.
    in_cjk = script_language(question) in ("ja", "zh")
    names = (LATIN_WORD if in_cjk else NAME).findall(question)
    missing = []
    for name in dict.fromkeys(names):
        if not set(analyze(name, ENGLISH)) <= said and not mentions(name):
            missing.append(name)
    return missing


def grade_by_scores(
    question: str, sources: Sequence[Source], mentions: Callable[[str], bool] | None = None
) -> list[Grade]:
    """Grades from the words a passage shares and how close it is in meaning; with `mentions`,
    passages that never name what the question names are irrelevant."""
    passages = [source.hit.text for source in sources]
    missing = unmentioned_names(question, passages, mentions) if mentions and sources else []
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
        if missing:
            score = min(score, UNMENTIONED_NAME_CAP)
            reasoning += f"; no passage names {', '.join(missing)}"
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
