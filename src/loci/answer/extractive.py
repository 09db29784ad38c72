"""Answers without a model: the best sentences of the best passages, each with its citation.

Used when no chat model is configured, or when the model fails or times out. It quotes rather
than paraphrases, so it can be wrong only by choosing the wrong sentence, never by inventing.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from loci.answer.answer_type import holds, wanted
from loci.answer.quoting import Candidate
from loci.answer.sources import Source
from loci.sentences import split_sentences
from loci.store.text_analysis import is_segmented

MAX_UNITS = 4
MAX_PER_SOURCE = 2
# A unit less than 0.3 as likely as the best is not quoted beside it: dev answers right 67 of
# 109 (70 with no floor, at the cost of unrelated lines; 56 at a half).
KEEP_SHARE = 0.3
MAX_SENTENCE_CHARS = 400
BULLET = re.compile(r"^(?:[-*•]|\d+[.)])\s+")
MIN_WORDS = 4  # shorter "sentences" are headings and labels, not statements
PARAGRAPH = re.compile(r"\n\s*\n")
# A line that starts an item of its own: a list item or a table row (never glued to the last).
ITEM_START = re.compile(r"^\s*(?:[-*•|]|\d+[.)])\s")
YAML_LINE = re.compile(r"^\s*(?:-\s+)?[\w\"' .-]{1,40}:(?:\s|$)")
DELIMITERS = (",", ";", "\t", "|")
MAX_CELL_CHARS = 40
ADMONITION = re.compile(r"^\s*:::")  # a VitePress or Docusaurus container opens or closes
STRONG = re.compile(r"\*\*")  # bold; "__" stays: "__init__.py" is a name, not emphasis
FENCE = re.compile(r"^\s*(```|~~~)\s*(\S*)")  # a code fence, and its language if it names one


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


def extractive_answer(question: str, found: Sequence[Candidate]) -> str:
    """The units most likely to state the answer (`loci.answer.quoting`), best first, each
    with its citation: the best; the unit after it when the best only leads into it or lacks
    the kind of answer asked for and its neighbour holds it ("Seat 23F, window." then "Booking
    code: VK9QZL."); then up to two more, from other places, nearly as likely."""
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
    per_source = {best.source.number: 1}
    floor = best.probability * KEEP_SHARE
    for candidate in found[1:]:
        if len(chosen) >= MAX_UNITS or candidate.probability < floor:
            break
        text, number = candidate.unit.text, candidate.source.number
        if per_source.get(number, 0) >= MAX_PER_SOURCE or any(
            text in quoted or quoted in text for quoted, _ in chosen
        ):
            continue
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
        lead = next(iter(_statements(source)), "")
        if lead:
            heading = source.hit.citation.heading_path
            prefix = f"**{heading[-1]}** — " if heading else ""
            lines.append(f"- {prefix}{lead} [{source.number}]")
    return "Summary from the document's own sentences:\n\n" + "\n".join(lines)


def _statements(source: Source) -> list[str]:
    return sentences(source.hit.text, source.hit.citation.heading_path)
