"""An in-memory matrix of one brain's chunk vectors, for cosine search with NumPy.

Vectors are unit length, so cosine is a dot product. Brute force over float32 is 14 ms at 100k
and ~110 ms at 1M vectors on two cores (DESIGN.md), faster than sqlite-vec's scan, and exact.
The matrix is rebuilt when the brain's generation counter moves (any index change bumps it).

A large matrix (from `int8_min_rows` vectors) also keeps an int8 copy, packed by NumKong for its
SIMD integer dot products: a scan of a quarter of the bytes picks the best `RESCORE` candidates,
and those are scored again exactly in float32. It is not an approximate graph index: the only
error is int8 rounding, small next to the gap between the 100th and the 1000th best vector, so
the results are those of the exact scan (recall@100 1.0 measured, docs/benchmarks.md).
"""

from __future__ import annotations

from dataclasses import dataclass

import numkong
import numpy as np
import numpy.typing as npt

from loci.embed.base import Vectors

RESCORE = 1000  # int8 candidates scored again in float32, at least 10x the request


@dataclass
class Int8Scan:
    scale: float  # int8 value per unit of a vector component
    packed: numkong.PackedMatrix

    @classmethod
    def build(cls, matrix: Vectors) -> Int8Scan:
        high = float(np.abs(matrix).max()) or 1.0
        scale = 127.0 / high
        quantized = np.clip(np.rint(matrix * scale), -127, 127).astype(np.int8)
        return cls(scale, numkong.dots_pack(quantized, dtype="int8"))

    def scores(self, query: Vectors) -> npt.NDArray[np.int32]:
        q = np.clip(np.rint(query * self.scale), -127, 127).astype(np.int8).reshape(1, -1)
        return np.asarray(numkong.dots_packed(q, self.packed)).reshape(-1)


@dataclass
class VectorMatrix:
    generation: int
    ids: npt.NDArray[np.int64]
    matrix: Vectors
    int8: Int8Scan | None = None

    @classmethod
    def build(
        cls,
        generation: int,
        ids: list[int],
        blobs: list[bytes],
        dims: int,
        int8_min_rows: int | None = None,
    ) -> VectorMatrix:
        if not ids:
            return cls(generation, np.zeros(0, np.int64), np.zeros((0, dims), np.float32))
        flat = np.frombuffer(b"".join(blobs), dtype=np.float32)
        matrix = flat.reshape(len(ids), dims)
        int8 = None
        if int8_min_rows is not None and len(ids) >= int8_min_rows:
            int8 = Int8Scan.build(matrix)
        return cls(generation, np.asarray(ids, dtype=np.int64), matrix, int8)

    def top(
        self, query: Vectors, limit: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        if len(self.ids) == 0 or limit <= 0:
            return []
        query = query.reshape(-1).astype(np.float32)
        rows = np.arange(len(self.ids))
        if allowed is not None:
            mask = np.isin(self.ids, np.fromiter(allowed, dtype=np.int64, count=len(allowed)))
            rows = rows[mask]
            if len(rows) == 0:
                return []
        if self.int8 is not None and len(rows) > RESCORE:
            rough = self.int8.scores(query)[rows]
            keep = max(RESCORE, 10 * limit)
            if len(rows) > keep:
                rows = rows[np.argpartition(-rough, keep - 1)[:keep]]
            scores = self.matrix[rows] @ query
        else:
            scores = self.matrix @ query
            if allowed is not None:
                scores = scores[rows]
        k = min(limit, len(rows))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self.ids[rows[i]]), float(scores[i])) for i in best]
