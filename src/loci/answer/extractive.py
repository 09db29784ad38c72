"""Answers without a model: the best sentences of the best passages, each with its citation.

Used when no chat model is configured, or when the model fails or times out. It quotes rather
than paraphrases, so it can be wrong only by choosing the wrong sentence, never by inventing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from loci.answer.grading import Grade, coverage
from loci.answer.sources import Source

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(«“])|\n{2,}|\n(?=[-*•] )")
MAX_SENTENCES = 4
MAX_PER_SOURCE = 2
MAX_SENTENCE_CHARS = 400
BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
MIN_WORDS = 4  # shorter "sentences" are headings and labels, not statements


def sentences(text: str, headings: Sequence[str] = ()) -> list[str]:
    """The statements of a passage: its heading lines and short labels left out."""
    parts = [BULLET.sub("", " ".join(p.split())) for p in SENTENCE_END.split(text)]
    skip = {" ".join(h.split()) for h in headings}
    return [p[:MAX_SENTENCE_CHARS] for p in parts if len(p.split()) >= MIN_WORDS and p not in skip]


def extractive_answer(
    question: str,
    sources: Sequence[Source],
    grades: Sequence[Grade],
    focus: str | None = None,
) -> str:
    """Up to four sentences from the passages graded useful: those sharing most words with the
    question (with `focus`, the words of the latest question count double — a follow-up's
    search carries the earlier question along, its answer should not)."""
    grade_of = {g.source: g for g in grades}
    usable = [s for s in sources if grade_of.get(s.number, _unknown(s)).relevance != "irrelevant"]
    candidates: list[tuple[float, float, int, int, str]] = []
    for rank, source in enumerate(usable):
        source_score = grade_of.get(source.number, _unknown(source)).score
        for position, sentence in enumerate(_statements(source)):
            on_topic = coverage(question, sentence)
            if focus:
                on_topic = (2 * coverage(focus, sentence) + on_topic) / 3
            # Better-graded passages and earlier sentences win ties.
            score = on_topic + 0.1 * source_score - 0.01 * rank - 0.005 * position
            candidates.append((score, on_topic, source.number, position, sentence))
    if not candidates:
        return ""
    ranked = sorted(candidates, key=lambda c: -c[0])
    floor = ranked[0][1] / 2  # nothing much weaker than the best match
    chosen: list[tuple[int, int, str]] = []
    per_source: dict[int, int] = {}
    for _, on_topic, number, position, sentence in ranked:
        if len(chosen) >= MAX_SENTENCES:
            break
        if per_source.get(number, 0) >= MAX_PER_SOURCE or (chosen and on_topic <= floor):
            continue
        per_source[number] = per_source.get(number, 0) + 1
        chosen.append((number, position, sentence))
    lines = [f"- {sentence} [{number}]" for number, _, sentence in chosen]
    return "From your documents:\n\n" + "\n".join(lines)


def extractive_summary(sources: Sequence[Source], limit: int = 8) -> str:
    """A document's outline from the lead sentence of evenly spaced passages."""
    if not sources:
        return ""
    step = max(1, len(sources) // limit)
    picked = list(sources)[::step][:limit]
    lines = []
    for source in picked:
        lead = next(iter(_statements(source)), "")
        if lead:
            heading = source.hit.citation.heading_path
            prefix = f"**{heading[-1]}** — " if heading else ""
            lines.append(f"- {prefix}{lead} [{source.number}]")
    return "Summary from the document's own sentences:\n\n" + "\n".join(lines)


def _statements(source: Source) -> list[str]:
    return sentences(source.hit.text, source.hit.citation.heading_path)


def _unknown(source: Source) -> Grade:
    return Grade(source.number, "partially_relevant", 0.5, "")
