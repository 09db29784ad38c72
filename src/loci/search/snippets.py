"""Short excerpts of a chunk around the query's terms, with the matches marked.

Matching is by word prefix so that "running" is marked for the query term "run" the way the
porter-stemmed BM25 leg matched it; marks are `**…**` (Markdown bold), which the CLI renders.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from loci.search.lexical import WORD

STEM_PREFIX = 5  # long enough to avoid junk matches, short enough to join inflections


def _stem_key(word: str) -> str:
    return word.lower()[:STEM_PREFIX] if len(word) > STEM_PREFIX else word.lower()


def make_snippet(text: str, terms: Sequence[str], width: int = 240) -> str:
    """The `width`-character window of `text` holding the most matched terms, marked."""
    keys = {_stem_key(t) for t in terms}
    matches = [m for m in WORD.finditer(text) if _stem_key(m.group()) in keys]
    flat = " ".join(text.split())
    if not matches:
        return flat[:width] + ("…" if len(flat) > width else "")
    # Pick the window start that covers the most matches (two pointers over match positions).
    best_start, best_count, j = matches[0].start(), 0, 0
    for i, m in enumerate(matches):
        while matches[j].start() < m.start() - width + 40:
            j += 1
        if i - j + 1 > best_count:
            best_count, best_start = i - j + 1, matches[j].start()
    start = max(0, best_start - 40)
    # Snap to a word boundary so the excerpt does not open mid-word.
    if start > 0:
        space = text.rfind(" ", 0, start + 1)
        start = space + 1 if space >= 0 and start - space < 20 else start
    end = min(len(text), start + width)
    window = text[start:end]
    marked = re.sub(
        WORD, lambda m: f"**{m.group()}**" if _stem_key(m.group()) in keys else m.group(), window
    )
    marked = " ".join(marked.split())
    return ("…" if start > 0 else "") + marked + ("…" if end < len(text) else "")
