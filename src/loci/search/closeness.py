"""How close a passage is to a question in meaning, read against the brain it is in.

A raw cosine cannot say "close": the bundled MiniLM puts unrelated English near 0.1 and a passage
on the question's topic above 0.45, but in a brain it cannot read (Arabic letters) every passage
sits near 0.6, and another embedder puts unrelated text at 0.7. What unrelated text reaches *in
this brain, with this embedder* is known from the brain itself: the cosines between passages of
different documents (`loci.store.vector_background`). A passage's **closeness** is k when its
cosine to the question is reached by only one such pair in 10^k: 1 is "as close as the closest
tenth of unrelated pairs", 2 "the closest hundredth". The scale is the brain's, so the same
closeness means the same rarity under any embedder and in any script — measured in
docs/benchmarks-journal.md: nonsense questions stay under 1.6 on English, letter-substituted and
compressed-cosine brains alike, while real questions' best passages sit at 2.3–3.8 (median)
wherever the model reads the text.

A brain too small to know its own pairs (under 50 passages, or under ~1,000 pairs across
documents) falls back to the levels measured for the bundled model (`MODEL_LEVELS`: one
unrelated pair in ten reaches 0.2, one in a hundred 0.3, one in a thousand 0.6 — the fixed
cutoffs Loci used before); with another embedder such a brain has no reading, and closeness is
None (words alone decide).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np
import numpy.typing as npt

from loci.store.vector_background import STEPS, VectorBackground

# The bundled model's identity (loci.embed.local.MODEL_ID, not imported: that module loads ONNX).
BUNDLED_MODEL = "sentence-transformers/all-MiniLM-L6-v2"
# (closeness, cosine) for the bundled model where a brain cannot say: the cutoffs it was given
# by hand before closeness was read from brains (weak under 0.3; graded from 0.2 to 0.6).
MODEL_LEVELS = ((0.0, 0.0), (1.0, 0.2), (2.0, 0.3), (3.0, 0.6))


@dataclass(frozen=True)
class Closeness:
    """Cosine -> closeness for one brain and embedder."""

    levels: npt.NDArray[np.float64]  # cosine at closeness i / STEPS, non-decreasing
    source: Literal["brain", "model"]  # the brain's own pairs, or the model's known levels

    def of(self, cosine: float | None) -> float | None:
        """The closeness of a passage at `cosine` (None: the vector leg did not score it).
        Past the rarest level the brain resolves, it stays at that level."""
        if cosine is None:
            return None
        steps = np.arange(len(self.levels)) / STEPS
        value = float(np.interp(cosine, self.levels, steps, left=0.0, right=float(steps[-1])))
        return round(value, 3)


def closeness_scale(background: VectorBackground | None, model: str) -> Closeness | None:
    """The brain's own scale when it has enough pairs, else the model's known one, else None."""
    if background is not None and len(background.unrelated) >= 2:
        # Strictly increasing for interpolation: pairs' cosines can repeat a level.
        rising = background.unrelated + np.arange(len(background.unrelated)) * 1e-9
        return Closeness(rising, "brain")
    if model == BUNDLED_MODEL:
        return _bundled()
    return None


@cache
def _bundled() -> Closeness:
    points = np.asarray(MODEL_LEVELS)
    steps = np.arange(int(points[-1, 0] * STEPS) + 1) / STEPS
    return Closeness(np.interp(steps, points[:, 0], points[:, 1]), "model")
