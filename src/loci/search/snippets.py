"""Short excerpts of a chunk around the query's terms, with the matches marked.

Matching is by word prefix so that "running" is marked for the query term "run" the way the
porter-stemmed BM25 leg matched it; marks are `**…**` (Markdown bold), which the CLI renders.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

STEM_PREFIX = 5  # long enough to avoid junk matches, short enough to join inflections
CONTEXT_BEFORE = 40


def _stem_key(word: str) -> str:
    return word.lower()[:STEM_PREFIX]


def term_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching whole words that start with any term's stem key."""
    keys = sorted({_stem_key(t) for t in terms if t}, key=len, reverse=True)
    if not keys:
        return None
    # A short term must match the whole word; a long one matches its inflections too.
    alternatives = [re.escape(k) + (r"\w*" if len(k) >= STEM_PREFIX else "") for k in keys]
    return re.compile(r"(?<!\w)(?:" + "|".join(alternatives) + r")(?!\w)", re.IGNORECASE)


def make_snippet(text: str, terms: Sequence[str], width: int = 240) -> str:
    """The `width`-character window of `text` holding the most matched terms, marked."""
    pattern = term_pattern(terms)
    matches = list(pattern.finditer(text)) if pattern else []
    if not matches:
        flat = " ".join(text[: width * 2].split())
        return flat[:width] + ("…" if len(flat) > width or len(text) > width * 2 else "")
    # Pick the window start that covers the most matches (two pointers over match positions).
    best_start, best_count, j = matches[0].start(), 0, 0
    for i, m in enumerate(matches):
        while matches[j].start() < m.start() - width + CONTEXT_BEFORE:
            j += 1
        if i - j + 1 > best_count:
            best_count, best_start = i - j + 1, matches[j].start()
    start = max(0, best_start - CONTEXT_BEFORE)
    if start > 0:  # snap to a word boundary so the excerpt does not open mid-word
        space = text.rfind(" ", 0, start + 1)
        start = space + 1 if space >= 0 and start - space < 20 else start
    end = min(len(text), start + width)
    assert pattern is not None
    marked = pattern.sub(lambda m: f"**{m.group()}**", text[start:end])
    marked = " ".join(marked.split())
    return ("…" if start > 0 else "") + marked + ("…" if end < len(text) else "")
