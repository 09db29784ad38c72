"""How a brain's vectors lie, so a query's similarities can be read against them.

A cosine of 0.6 means little by itself: for an English model reading English, unrelated passages
sit near 0.1 and 0.6 is a close match; for the same model reading a script it cannot read
(Arabic, for the bundled MiniLM), every passage sits near 0.6 and the best of thousands is only
the luck of the draw. The mean and second moment of the brain's unit vectors give, for any
query q, the mean and spread of its cosine to every passage — q·m and q·M·q − (q·m)² — in
O(d²), without scanning the brain. Both are taken from an evenly spread sample of at most
SAMPLE vectors: the spread is then known to within a few percent.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from loci.embed.base import Vectors

SAMPLE = 2048
MIN_VECTORS = 50  # below this a brain's spread says too little to judge a query by


@dataclass(frozen=True)
class VectorBackground:
    mean: npt.NDArray[np.float64]  # (d,) mean of the unit vectors
    second: npt.NDArray[np.float64]  # (d, d) mean of x xᵀ
    vectors: int  # how many vectors the brain holds
    documents: int  # how many documents they belong to

    @classmethod
    def of(cls, sample: Vectors, vectors: int, documents: int) -> VectorBackground | None:
        """From `sample` (rows of the brain's vectors); None when there are too few."""
        if len(sample) < MIN_VECTORS:
            return None
        rows = np.asarray(sample, np.float64)
        return cls(rows.mean(axis=0), rows.T @ rows / len(rows), vectors, documents)

    def similarity(self, query: Vectors) -> tuple[float, float]:
        """The mean and standard deviation of the query's cosine to the brain's vectors."""
        q = np.asarray(query, np.float64).reshape(-1)
        mean = float(q @ self.mean)
        variance = float(q @ self.second @ q) - mean * mean
        return mean, math.sqrt(max(variance, 0.0))


def spread_sample(matrix: Vectors, size: int = SAMPLE) -> Vectors:
    """At most `size` rows of `matrix`, evenly spread over it (rows are in chunk order, so
    over the brain's documents), always the same ones for the same matrix."""
    if len(matrix) <= size:
        return matrix
    return matrix[np.linspace(0, len(matrix) - 1, size).astype(np.int64)]
