"""Answers without a model: the best sentences of the best passages, each with its citation.

Used when no chat model is configured, or when the model fails or times out. It quotes rather
than paraphrases, so it can be wrong only by choosing the wrong sentence, never by inventing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from loci.answer.answer_type import holds, wanted
from loci.answer.grading import Grade, coverage
from loci.answer.sources import Source
from loci.sentences import split_sentences
from loci.store.text_analysis import is_segmented

MAX_SENTENCES = 4
MAX_PER_SOURCE = 2
MAX_SENTENCE_CHARS = 400
BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
MIN_WORDS = 4  # shorter "sentences" are headings and labels, not statements
ANSWER_TYPE_BONUS = 0.5  # a sentence with the amount or date asked for beats one sharing words
PARAGRAPH = re.compile(r"\n\s*\n")
# A line that starts an item of its own: a list item or a table row (never glued to the last).
ITEM_START = re.compile(r"^\s*(?:[-*•|]|\d+[.)])\s")
YAML_LINE = re.compile(r"^\s*(?:-\s+)?[\w\"' .-]{1,40}:(?:\s|$)")
DELIMITERS = (",", ";", "\t", "|")
MAX_CELL_CHARS = 40
ADMONITION = re.compile(r"^\s*:::")  # a VitePress or Docusaurus container opens or closes
STRONG = re.compile(r"\*\*")  # bold; "__" stays: "__init__.py" is a name, not emphasis
FENCE = re.compile(r"^\s*(```|~~~)\s*(\S*)")  # a code fence, and its language if it names one
LEAD_IN_MALUS = 0.2  # "… include:" introduces the statements that follow; it states nothing


def sentences(text: str, headings: Sequence[str] = ()) -> list[str]:
    """The statements of a passage: its heading lines, short labels and data blocks (a CSV table,
    YAML settings) left out. A sentence may wrap over lines; a list item starts a new one."""
    skip = {" ".join(h.split()) for h in headings}
    found: list[str] = []
    for paragraph in PARAGRAPH.split(_without_code(text)):
        if is_data_block(paragraph):
            continue
        for line in _logical_lines(paragraph):
            if line.startswith("|"):
                continue  # a table's row: data, like the tables above
            # Bold marks go: "**Keeps the server dumb.** File-level sync …" is two sentences,
            # and a split inside the marks would leave "**" hanging on each.
            for sentence in split_sentences(STRONG.sub("", line)):
                cleaned = BULLET.sub("", " ".join(sentence.split()))
                if _words(cleaned) >= MIN_WORDS and cleaned not in skip:
                    found.append(cleaned[:MAX_SENTENCE_CHARS])
    return found


def _words(sentence: str) -> int:
    """About how many words `sentence` has: Japanese, Chinese or Thai write no spaces between
    them, so a run of such script counts a word per two characters."""
    return sum(max(1, len(w) // 2) if is_segmented(w) else 1 for w in sentence.split())


def _without_code(text: str) -> str:
    """The text with its fenced code blocks cut out: code is cited, never quoted as a sentence.
    A passage may begin or end inside a block. With an odd number of fences, a first one
    without a language ("```" alone) closes a block the passage began inside."""
    lines = text.splitlines()
    fences = {i: m[2] for i, line in enumerate(lines) if (m := FENCE.match(line))}
    inside = len(fences) % 2 == 1 and next(iter(fences.values())) == ""
    kept: list[str] = []
    for i, line in enumerate(lines):
        if i in fences:
            inside = not inside
            kept.append("")  # the block ends a paragraph
        elif ADMONITION.match(line):
            kept.append("")  # "::: tip IMPORTANT": a container's fence and title, not prose
        elif not inside:
            kept.append(line)
    return "\n".join(kept)


def is_data_block(paragraph: str) -> bool:
    """Lines of `key: value` settings, or rows of delimited cells: data to cite, never a sentence
    of an answer (an answer once quoted a Home Assistant configuration as one)."""
    lines = [line for line in paragraph.splitlines() if line.strip()]
    if len(lines) < 2:
        return False
    if sum(1 for line in lines if YAML_LINE.match(line)) >= 0.8 * len(lines):
        return True
    for delimiter in DELIMITERS:
        counts = {line.count(delimiter) for line in lines}
        if len(counts) == 1 and min(counts) >= 2:
            cells = [c for line in lines for c in line.split(delimiter)]
            if sum(len(c.strip()) <= MAX_CELL_CHARS for c in cells) >= 0.9 * len(cells):
                return True
    return False


def _logical_lines(paragraph: str) -> list[str]:
    """A paragraph's lines joined back where a sentence wrapped, split where an item starts."""
    lines: list[str] = []
    for line in paragraph.splitlines():
        if not line.strip():
            continue
        if lines and not ITEM_START.match(line):
            lines[-1] += " " + line.strip()
        else:
            lines.append(line.strip())
    return lines


def extractive_answer(
    question: str,
    sources: Sequence[Source],
    grades: Sequence[Grade],
    focus: str | None = None,
) -> str:
    """Up to four sentences from the passages graded useful: those sharing most words with the
    question (with `focus`, the words of the latest question count double — a follow-up's
    search carries the earlier question along, its answer should not), and first those that
    hold the kind of answer it asks for (an amount, a date, a name)."""
    kind = wanted(focus or question)
    grade_of = {g.source: g for g in grades}
    usable = [s for s in sources if grade_of.get(s.number, _unknown(s)).relevance != "irrelevant"]
    candidates: list[tuple[float, float, int, int, str]] = []
    for rank, source in enumerate(usable):
        source_score = grade_of.get(source.number, _unknown(source)).score
        statements = _statements(source)
        matches = [coverage(question, sentence) for sentence in statements]
        for position, (sentence, on_topic) in enumerate(zip(statements, matches, strict=True)):
            if focus:
                on_topic = (2 * coverage(focus, sentence) + on_topic) / 3
            # In a passage that matches the question, the sentence holding what it asks for
            # ("Total 310.50 GBP" for "how much …") answers it, even if it shares no word.
            if kind is not None and max(matches) > 0 and holds(sentence, kind, focus or question):
                on_topic += ANSWER_TYPE_BONUS
            if sentence.endswith((":", "：")):
                on_topic -= LEAD_IN_MALUS
            # Better-graded passages and earlier sentences win ties.
            score = on_topic + 0.1 * source_score - 0.01 * rank - 0.005 * position
            candidates.append((score, on_topic, source.number, position, sentence))
    if not candidates:
        if not usable:
            return ""
        # The passages that match hold no sentence (settings, a table): point at the best one
        # rather than quote a block of it or answer nothing.
        best = usable[0]
        return (
            "Nothing in the passages reads as an answer; the closest match is data rather than "
            f"a sentence: {best.label()} [{best.number}]."
        )
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
