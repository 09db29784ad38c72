"""Whether a search found anything close: a search for "xylophone quantum zebra" still returns the
nearest passages, and a reader (or an agent) should be told they are only that.

Results are weak when no passage holds any of the question's words and none is close in meaning:
its closeness (`loci.search.closeness`: read against how close unrelated passages of the same
brain come to each other) under `WEAK_CLOSENESS` — no closer than one pair of unrelated passages
in a hundred. A raw cosine cutoff held only for the bundled model reading English: in a brain it
cannot read every cosine is ~0.6, and other embedders run in other ranges. Where no closeness
can be read (a small brain, another embedder), the words alone decide.
"""

from __future__ import annotations

from collections.abc import Iterable

from loci.models import Hit

WEAK_CLOSENESS = 2.0


def weak(hits: Iterable[Hit]) -> bool:
    """True when none of `hits` matched the question's words or reached `WEAK_CLOSENESS`
    (and when there are none)."""
    return not any(hit.text_rank is not None or close(hit.closeness) for hit in hits)


def close(closeness: float | None) -> bool:
    """Close in meaning: at or past `WEAK_CLOSENESS` (unknown closeness is not close)."""
    return closeness is not None and closeness >= WEAK_CLOSENESS
