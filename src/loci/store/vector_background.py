"""How a brain's vectors lie, so a query's similarities can be read against them.

A cosine of 0.6 means little by itself: for an English model reading English, unrelated passages
sit near 0.1 and 0.6 is a close match; for the same model reading a script it cannot read
(Arabic, for the bundled MiniLM), every passage sits near 0.6 and the best of thousands is only
the luck of the draw; another embedder puts unrelated text at 0.7. Two readings come from an
evenly spread sample of at most SAMPLE of the brain's vectors:

- the mean and second moment of the unit vectors give, for any query q, the mean and spread of
  its cosine to every passage — q·m and q·M·q − (q·m)² — in O(d²), without scanning the brain
  (fusion's trust in the vector leg, `loci.search.confidence`);
- the cosines between sampled passages of *different* documents (PAIRED of the sampled rows)
  say how close unrelated text comes in this brain, with this embedder: `unrelated` keeps the
  cosine that a share 10^-k of those pairs reach, for k in steps of 1/STEPS, so a cosine can be
  read as "as close as one pair of unrelated passages in 10^k" (`loci.search.closeness`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from loci.embed.base import Vectors

SAMPLE = 2048
MIN_VECTORS = 50  # below this a brain's spread says too little to judge a query by
# Below this many pairs of passages from different documents, how close unrelated text comes
# is not known well enough to read a cosine by (50 passages of 5 documents give ~1,000).
MIN_PAIRS = 1000
STEPS = 20  # points of `unrelated` per decade of rarity
# Rows of the sample paired for `unrelated`: ~500,000 pairs resolve rarities to one in 50,000,
# past anything read by (closeness 1-3), at a quarter of the cost of pairing the whole sample.
PAIRED = 1024


@dataclass(frozen=True)
class VectorBackground:
    mean: npt.NDArray[np.float64]  # (d,) mean of the unit vectors
    second: npt.NDArray[np.float64]  # (d, d) mean of x xᵀ
    vectors: int  # how many vectors the brain holds
    documents: int  # how many documents they belong to
    # unrelated[i]: the cosine reached by a share 10^(-i / STEPS) of the sampled pairs of
    # passages from different documents; empty when there were too few pairs.
    unrelated: npt.NDArray[np.float64] = field(default_factory=lambda: np.zeros(0))

    @classmethod
    def of(
        cls,
        sample: Vectors,
        vectors: int,
        documents: int,
        sample_documents: npt.NDArray[np.int64] | None = None,
    ) -> VectorBackground | None:
        """From `sample` (rows of the brain's vectors; `sample_documents`, each row's
        document); None when there are too few."""
        if len(sample) < MIN_VECTORS:
            return None
        rows = np.asarray(sample, np.float64)
        unrelated = np.zeros(0)
        if sample_documents is not None:
            paired = spread_rows(len(rows), PAIRED)
            unrelated = unrelated_levels(rows[paired], np.asarray(sample_documents)[paired])
        return cls(rows.mean(axis=0), rows.T @ rows / len(rows), vectors, documents, unrelated)

    def similarity(self, query: Vectors) -> tuple[float, float]:
        """The mean and standard deviation of the query's cosine to the brain's vectors."""
        q = np.asarray(query, np.float64).reshape(-1)
        mean = float(q @ self.mean)
        variance = float(q @ self.second @ q) - mean * mean
        return mean, math.sqrt(max(variance, 0.0))


def unrelated_levels(
    rows: npt.NDArray[np.float64], documents: npt.NDArray[np.int64]
) -> npt.NDArray[np.float64]:
    """The cosines that a share 10^(-i / STEPS) of the pairs of `rows` from different
    documents reach, for i = 0, 1, … as far as the pairs resolve (their rarest tenth-of-one).
    Rows are unit vectors; an empty array when there are fewer than MIN_PAIRS pairs."""
    upper = np.triu(documents[:, None] != documents[None, :], k=1)
    pairs = int(upper.sum())
    if pairs < MIN_PAIRS:
        return np.zeros(0)
    single = rows.astype(np.float32)
    cosines = (single @ single.T)[upper]
    # Resolve down to the share held by ten pairs: rarer than that, a quantile is noise.
    decades = math.log10(pairs / 10)
    shares = 10.0 ** (-np.arange(int(decades * STEPS) + 1) / STEPS)
    return np.asarray(np.quantile(cosines, 1.0 - shares), np.float64)


def spread_rows(count: int, size: int = SAMPLE) -> npt.NDArray[np.int64]:
    """At most `size` row numbers of `count` rows, evenly spread over them (rows are in chunk
    order, so over the brain's documents), always the same ones for the same count."""
    if count <= size:
        return np.arange(count, dtype=np.int64)
    return np.linspace(0, count - 1, size).astype(np.int64)
