"""An in-memory matrix of one brain's chunk vectors, for cosine search with NumPy.

Vectors are unit length, so cosine is a dot product. Brute force over float32 is 14 ms at 100k
and ~110 ms at 1M vectors on two cores (measured here), faster than sqlite-vec's scan, and exact.
The matrix follows the store's chunk change log: a chunk that changed is masked out of the main
matrix and, if it still exists, appended to a small tail that is always scanned exactly; once the
tail or the masked rows grow past a fraction of the matrix, the store rebuilds it from SQLite.

A large matrix (from `int8_min_rows` vectors) also keeps an int8 copy, packed by NumKong for its
SIMD integer dot products: a scan of a quarter of the bytes picks the best `RESCORE` candidates,
and those are scored again exactly in float32. It is not an approximate graph index: the only
error is int8 rounding, small next to the gap between the 100th and the 1000th best vector, so
the results are those of the exact scan (recall@100 1.0 measured, docs/benchmarks-journal.md).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import numkong
import numpy as np
import numpy.typing as npt

from loci.embed.base import Vectors
from loci.store.vector_background import spread_rows

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
    seq: int  # the last chunk-log entry reflected
    ids: npt.NDArray[np.int64]
    matrix: Vectors
    int8: Int8Scan | None = None
    live: npt.NDArray[np.bool_] | None = None  # None: every row of `matrix` is live
    # (ids, vectors) appended since the build; one attribute, swapped whole, so a search on
    # another thread never sees ids and vectors of different updates.
    tail: tuple[npt.NDArray[np.int64], Vectors] | None = None

    @classmethod
    def build(
        cls,
        seq: int,
        ids: list[int],
        blobs: list[bytes],
        dims: int,
        int8_min_rows: int | None = None,
    ) -> VectorMatrix:
        if not ids:
            return cls(seq, np.zeros(0, np.int64), np.zeros((0, dims), np.float32))
        return cls.of(seq, np.asarray(ids, dtype=np.int64), _stack(blobs, dims), int8_min_rows)

    @classmethod
    def of(
        cls,
        seq: int,
        ids: npt.NDArray[np.int64],
        matrix: Vectors,
        int8_min_rows: int | None = None,
    ) -> VectorMatrix:
        """A matrix over these rows (a memory-mapped file's, say), with its int8 copy if large."""
        int8 = None
        if int8_min_rows is not None and len(ids) >= int8_min_rows:
            int8 = Int8Scan.build(matrix)
        return cls(seq, ids, matrix, int8)

    @property
    def dims(self) -> int:
        return int(self.matrix.shape[1])

    @property
    def stale_rows(self) -> int:
        """Rows masked out of the main matrix plus rows in the tail: what a rebuild would fold."""
        dead = 0 if self.live is None else int(len(self.live) - np.count_nonzero(self.live))
        return dead + (len(self.tail[0]) if self.tail is not None else 0)

    @property
    def rows(self) -> int:
        """Live vectors: the main matrix's unmasked rows and the tail's."""
        main = len(self.ids) if self.live is None else int(np.count_nonzero(self.live))
        return main + (len(self.tail[0]) if self.tail is not None else 0)

    def sample(self, size: int) -> tuple[npt.NDArray[np.int64], Vectors]:
        """At most `size` live vectors and their chunk ids, spread evenly over the main matrix
        and the tail."""
        ids, main = self.ids, self.matrix
        if self.live is not None:
            ids, main = ids[self.live], main[self.live]
        if self.tail is not None and len(self.tail[0]):
            rows = spread_rows(len(main), size)
            ids = np.concatenate([ids[rows], self.tail[0]])
            main = np.concatenate([main[rows], self.tail[1]])
        rows = spread_rows(len(main), size)
        return ids[rows], main[rows]

    def live_blocks(self, size: int = 65_536) -> Iterator[tuple[npt.NDArray[np.int64], Vectors]]:
        """Every live vector with its chunk id, in blocks of at most `size` rows (a mapped
        matrix is read a block at a time, never copied whole)."""
        live, tail = self.live, self.tail  # as they are now: a catch-up swaps them whole
        for start in range(0, len(self.ids), size):
            ids, block = self.ids[start : start + size], self.matrix[start : start + size]
            if live is not None:
                keep = live[start : start + size]
                ids, block = ids[keep], block[keep]
            yield ids, np.asarray(block)
        if tail is not None and len(tail[0]):
            yield tail

    def rescore(
        self, query: Vectors, chunk_ids: npt.NDArray[np.int64], limit: int
    ) -> list[tuple[int, float]]:
        """The best `limit` of these chunks by their exact score (those without a live vector
        left out). A changed chunk is masked out of the main matrix and lives in the tail, so
        each chunk is found in one of them only."""
        wanted = np.unique(np.asarray(chunk_ids, np.int64))
        q = query.reshape(-1).astype(np.float32)
        ids, scores = np.zeros(0, np.int64), np.zeros(0, np.float32)
        if len(wanted) and len(self.ids):
            # One gather of the rows (the main matrix is in id order), not a row at a time:
            # each row of a mapped matrix read alone costs more than the dot product.
            at = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
            hit = self.ids[at] == wanted
            if self.live is not None:
                hit &= self.live[at]
            rows = at[hit]
            ids, scores = self.ids[rows], np.asarray(self.matrix[rows]) @ q
        tail = self.tail
        if tail is not None and len(tail[0]) and len(wanted):
            rows = np.flatnonzero(np.isin(tail[0], wanted))
            ids = np.concatenate([ids, tail[0][rows]])
            scores = np.concatenate([scores, tail[1][rows] @ q])
        order = np.argsort(-scores, kind="stable")[: max(limit, 0)]
        return [(int(ids[i]), float(scores[i])) for i in order]

    def vectors_of(self, chunk_ids: Sequence[int]) -> dict[int, Vectors]:
        """The live vectors of these chunks (ids without one are left out)."""
        wanted = np.asarray(list(dict.fromkeys(chunk_ids)), np.int64)
        found: dict[int, Vectors] = {}
        if len(wanted) and len(self.ids):
            # The main matrix is built in id order (search_index.py), so a binary search finds
            # its rows.
            at = np.minimum(np.searchsorted(self.ids, wanted), len(self.ids) - 1)
            hit = self.ids[at] == wanted
            if self.live is not None:
                hit &= self.live[at]
            for chunk, row in zip(wanted[hit].tolist(), at[hit].tolist(), strict=True):
                found[chunk] = self.matrix[row]
        if self.tail is not None and len(self.tail[0]):
            tail_ids, tail = self.tail
            for row in np.flatnonzero(np.isin(tail_ids, wanted)):
                found[int(tail_ids[row])] = tail[row]  # newer than the main matrix's copy
        return found

    def update(self, seq: int, changed: list[int], ids: list[int], blobs: list[bytes]) -> None:
        """Mask the `changed` chunks out and append the current vectors of those that remain."""
        gone = np.asarray(changed, np.int64)
        hit = np.isin(self.ids, gone)
        if hit.any():
            self.live = ~hit if self.live is None else self.live & ~hit
        dims = self.dims
        if blobs and not len(self.ids) and self.tail is None:
            # Built before any vector existed (a brain whose chunks await their vectors):
            # its width was a guess, the first vectors say what it is.
            dims = len(blobs[0]) // 4
            self.matrix = np.zeros((0, dims), np.float32)
        tail_ids, tail = self.tail or (np.zeros(0, np.int64), np.zeros((0, dims), np.float32))
        keep = ~np.isin(tail_ids, gone)
        tail_ids, tail = tail_ids[keep], tail[keep]
        if ids:
            tail = np.concatenate([tail, _stack(blobs, dims)])
            tail_ids = np.concatenate([tail_ids, np.asarray(ids, np.int64)])
        self.tail, self.seq = (tail_ids, tail), seq

    def top(
        self, query: Vectors, limit: int, allowed: set[int] | None = None
    ) -> list[tuple[int, float]]:
        if limit <= 0:
            return []
        query = query.reshape(-1).astype(np.float32)
        wanted = (
            None if allowed is None else np.fromiter(allowed, dtype=np.int64, count=len(allowed))
        )
        found = self._top_main(query, limit, wanted)
        if self.tail is not None and len(self.tail[0]):
            tail_ids, tail = self.tail
            rows = np.arange(len(tail_ids))
            if wanted is not None:
                rows = rows[np.isin(tail_ids, wanted)]
            scores = tail[rows] @ query
            found += [(int(tail_ids[r]), float(s)) for r, s in zip(rows, scores, strict=True)]
            found.sort(key=lambda pair: -pair[1])
        return found[:limit]

    def _top_main(
        self, query: Vectors, limit: int, wanted: npt.NDArray[np.int64] | None
    ) -> list[tuple[int, float]]:
        if len(self.ids) == 0:
            return []
        mask = self.live
        if wanted is not None:
            allowed = np.isin(self.ids, wanted)
            mask = allowed if mask is None else mask & allowed
        rows = np.arange(len(self.ids)) if mask is None else np.flatnonzero(mask)
        if len(rows) == 0:
            return []
        if self.int8 is not None and len(rows) > RESCORE:
            rough = self.int8.scores(query)
            if mask is not None:
                rough = rough[rows]
            keep = max(RESCORE, 10 * limit)
            if len(rows) > keep:
                rows = rows[np.argpartition(-rough, keep - 1)[:keep]]
            scores = self.matrix[rows] @ query
        else:
            scores = self.matrix @ query
            if mask is not None:
                scores = scores[rows]
        k = min(limit, len(rows))
        best = np.argpartition(-scores, k - 1)[:k]
        best = best[np.argsort(-scores[best], kind="stable")]
        return [(int(self.ids[rows[i]]), float(scores[i])) for i in best]


def _stack(blobs: list[bytes], dims: int) -> Vectors:
    return np.frombuffer(b"".join(blobs), dtype=np.float32).reshape(len(blobs), dims)
