"""A passage that holds every word of the question is never beaten by a weak meaning-only match.

Fusion weighs the two legs equally, so a passage the vector leg alone found, at a cosine that
says little (0.175 in a real case), could outrank the PDF holding the exact phrase asked for
("voluntary excess"). After fusion, such weak vector-only hits — not close in meaning
(`loci.search.weak.close`, read against the brain; any vector-only hit where no closeness can be
read) — are placed just under the lowest hit that holds all of the question's words;
everything else keeps its fused order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from loci.search.closeness import Closeness
from loci.search.fusion import Fused
from loci.search.snippets import term_pattern
from loci.search.weak import close

BELOW = 1e-6


def words_first(
    scored: Sequence[tuple[float, Fused]],
    terms: Sequence[str],
    text_of: Callable[[int], str | None],
    closeness: Closeness | None,
) -> list[tuple[float, Fused]]:
    """`scored` (best first) with weak vector-only hits moved under the passages holding every
    term; `text_of` gives a chunk's text (None: unknown, never counted as holding them);
    `closeness` reads the vector leg's cosines."""
    if not terms or not scored:
        return list(scored)
    patterns = [term_pattern([t]) for t in terms]
    complete = [
        score for score, f in scored
        if f.ranks[0] is not None and _holds_all(text_of(f.item_id), patterns)
    ]  # fmt: skip
    if not complete:
        return list(scored)
    floor = min(complete)
    moved: list[tuple[float, Fused]] = []
    for score, f in scored:
        near = closeness.of(f.scores[1]) if closeness is not None else None
        weak_meaning_only = f.ranks[0] is None and not close(near)
        if weak_meaning_only and score >= floor:
            score = floor - BELOW * (len(moved) + 1)
        moved.append((score, f))
    return sorted(moved, key=lambda pair: -pair[0])


def _holds_all(text: str | None, patterns: Sequence[re.Pattern[str] | None]) -> bool:
    if text is None:
        return False
    return all(p is not None and p.search(text) for p in patterns)
