"""Whether a search found anything close: a search for "xylophone quantum zebra" still returns the
nearest passages, and a reader (or an agent) should be told they are only that.

Results are weak when no passage holds any of the question's words and none is close in meaning:
its cosine to the question under `WEAK_COSINE`. MiniLM puts unrelated text around 0–0.2 and a
passage on the question's topic above ~0.45; the nonsense query above scores 0.08 on the example
folder, its real questions 0.46 and more.
"""

from __future__ import annotations

from collections.abc import Iterable

from loci.models import Hit

WEAK_COSINE = 0.3


def weak(hits: Iterable[Hit]) -> bool:
    """True when none of `hits` matched the question's words or came within `WEAK_COSINE`
    (and when there are none)."""
    closest = 0.0
    for hit in hits:
        if hit.text_rank is not None:
            return False
        closest = max(closest, hit.vector_score or 0.0)
    return closest < WEAK_COSINE
