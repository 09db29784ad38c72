"""Answers without a model: the units most likely to state the answer, each with its citation.

Used when no chat model is configured, or when the model fails or times out. It quotes rather
than paraphrases, so it can be wrong only by choosing the wrong units, never by inventing. What
to quote is chosen by `loci.answer.quoting`; this module composes the answer from its choice.
"""

from __future__ import annotations

from collections.abc import Sequence

from loci.answer.answer_type import holds, wanted
from loci.answer.grading import question_words, text_keys
from loci.answer.quoting import Candidate
from loci.answer.sources import Source
from loci.answer.units import units

MAX_UNITS = 4
MAX_PER_SOURCE = 2
# A unit less than 0.3 as likely as the best is not quoted beside it: dev answers right 67 of
# 109 (70 with no floor, at the cost of unrelated lines; 56 at a half)...
KEEP_SHARE = 0.3
# ... unless it holds words of the question that the units quoted so far do not (the other
# half of "the garage code and the shed padlock code"), and is at least this share as likely.
NEW_WORDS_SHARE = 0.1
SENTENCE_WORDS = 4  # a sentence of a summary or a study card: fewer are headings and labels


def sentences(text: str, headings: Sequence[str] = ()) -> list[str]:
    """The statements of a passage, for a summary or a study card: its sentences, never its
    headings, code, settings or table rows."""
    return [
        u.text
        for u in units(text, headings)
        if u.kind == "sentence" and len(u.text.split()) >= SENTENCE_WORDS
    ]


def extractive_answer(question: str, found: Sequence[Candidate]) -> str:
    """The units most likely to state the answer (`loci.answer.quoting`), best first, each
    with its citation: the best; the unit after it when the best only leads into it or lacks
    the kind of answer asked for and its neighbour holds it ("Seat 23F, window." then "Booking
    code: VK9QZL."); then up to three more, from other places, nearly as likely or holding
    words of the question the others do not."""
    if not found:
        return ""
    best = found[0]
    kind = wanted(question)
    following = {(c.source.number, c.unit.position): c for c in found}
    first = best.unit.text
    after = following.get((best.source.number, best.unit.position + 1))
    if after is not None and (
        first.endswith((":", "："))
        or (
            kind is not None
            and not holds(first, kind, question)
            and holds(after.unit.text, kind, question)
        )
    ):
        first = f"{first} {after.unit.text}"
    chosen: list[tuple[str, int]] = [(first, best.source.number)]
    asked = question_words(question)
    covered = {i for i, (word, _) in enumerate(asked) if word & text_keys(first)}
    per_source = {best.source.number: 1}
    for candidate in found[1:]:
        if len(chosen) >= MAX_UNITS or candidate.probability < best.probability * NEW_WORDS_SHARE:
            break
        text, number = candidate.unit.text, candidate.source.number
        if per_source.get(number, 0) >= MAX_PER_SOURCE or any(
            text in quoted or quoted in text for quoted, _ in chosen
        ):
            continue
        held = {i for i, (word, _) in enumerate(asked) if word & text_keys(text)}
        if candidate.probability < best.probability * KEEP_SHARE and held <= covered:
            continue
        covered |= held
        per_source[number] = per_source.get(number, 0) + 1
        chosen.append((text, number))
    lines = [f"- {text} [{number}]" for text, number in chosen]
    return "From your documents:\n\n" + "\n".join(lines)


def extractive_summary(sources: Sequence[Source], limit: int = 8) -> str:
    """A document's outline from the lead sentence of evenly spaced passages."""
    if not sources:
        return ""
    step = max(1, len(sources) // limit)
    picked = list(sources)[::step][:limit]
    lines = []
    for source in picked:
        lead = next(iter(sentences(source.hit.text, source.hit.citation.heading_path)), "")
        if lead:
            heading = source.hit.citation.heading_path
            prefix = f"**{heading[-1]}** — " if heading else ""
            lines.append(f"- {prefix}{lead} [{source.number}]")
    return "Summary from the document's own sentences:\n\n" + "\n".join(lines)
