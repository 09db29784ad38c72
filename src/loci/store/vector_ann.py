"""An approximate nearest-neighbour index over a large brain's vectors: an HNSW graph (usearch)
that proposes candidates, which are then scored exactly against the stored float32 vectors.

The exact scan (vector_matrix.py) reads every vector of the brain per query, so its cost grows
with the brain; the graph visits a few thousand. It holds the vectors as int8 (a quarter of
float32's bytes; one scale for the whole brain, taken from its vectors, so rounding costs
little), keyed by chunk id, and compares them by inner product, which ranks unit vectors as
cosine does. Only the ranking of candidates comes from it: every score a search returns is the
exact float32 one, so the only error is a true neighbour the graph did not propose (recall
measured in docs/benchmarks.md and asserted in tests/test_vector_ann.py).

Like the matrix it is derived and follows the chunk change log: a changed chunk is removed from
the graph and, if it still has a vector, added again. Removed nodes stay in the graph as
tombstones that searches walk past; once they are a noticeable share the graph is rebuilt.

Saved beside the matrix, one file per brain and model: magic, the JSON header's length, the
header (the brain's identity, the model and its dimensions, the log position, the scale, and a
digest of what follows), then usearch's own serialization. A file that does not fit or whose
digest differs is ignored and the graph rebuilt: a damaged graph could send a search anywhere.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import tempfile
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from loci.embed.base import Vectors
from loci.private_files import make_private_dir
from loci.store.vector_files import MatrixIdentity, matrix_path

if TYPE_CHECKING:
    from usearch.index import Index

log = logging.getLogger(__name__)

FORMAT = 1
MAGIC = b"LOCIANN1"
MAX_HEADER = 65_536
# The graph's shape: links per node and the breadth of the search that places a new node. More
# of either is a better graph built more slowly; these keep recall@10 at ~0.99 with the search
# breadth below on real MiniLM vectors (bench/peers.py).
CONNECTIVITY = 16
EXPANSION_ADD = 64
# How many nodes a search keeps in view, at least: the candidates it returns are rescored, so
# breadth buys recall and nothing else.
EXPANSION_SEARCH = 128
# Rebuild once removed nodes are this share of the live ones: tombstones slow every search.
MAX_DEAD_SHARE = 0.25
# A scale that maps the largest component of the sampled vectors to this, leaving headroom for
# vectors added later; components beyond it are clipped (the candidate's score stays exact).
INT8_HEADROOM = 100.0


def ann_path(folder: Path, brain_id: int, model: str) -> Path:
    """Beside the brain's saved matrix, under the same name with another suffix."""
    return matrix_path(folder, brain_id, model).with_suffix(".hnsw")


def paths_of(folder: Path, brain_id: int) -> list[Path]:
    return sorted(folder.glob(f"vectors-brain-{brain_id}-*.hnsw"))


@dataclass
class AnnIndex:
    seq: int  # the last chunk-log entry reflected
    scale: float  # int8 value per unit of a vector component
    graph: Index
    dead: int = 0  # nodes removed since the graph was built
    changed: int = 0  # chunks changed since the graph was saved
    # usearch allows concurrent searches but not a removal during one: catching up takes it.
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    @classmethod
    def build(
        cls,
        seq: int,
        dims: int,
        sample: Vectors,
        blocks: Iterable[tuple[npt.NDArray[np.int64], Vectors]],
    ) -> AnnIndex:
        """A graph over the vectors of `blocks` ((chunk ids, vectors) in turn), quantized with
        a scale taken from `sample`."""
        high = float(np.abs(sample).max()) if len(sample) else 1.0
        index = cls(seq, INT8_HEADROOM / (high or 1.0), _new_graph(dims))
        for ids, vectors in blocks:
            if len(ids):
                index.graph.add(ids.astype(np.uint64), index.quantize(vectors))
        return index

    @property
    def size(self) -> int:
        return int(self.graph.size)

    @property
    def dims(self) -> int:
        return int(self.graph.ndim)

    def quantize(self, vectors: Vectors) -> npt.NDArray[np.int8]:
        scaled = np.rint(np.asarray(vectors, np.float32) * self.scale)
        quantized: npt.NDArray[np.int8] = np.clip(scaled, -127, 127).astype(np.int8)
        return quantized

    def update(self, seq: int, changed: Iterable[int], current: dict[int, Vectors]) -> None:
        """Remove the `changed` chunks and add the `current` vectors of those that remain."""
        gone = np.fromiter(changed, np.uint64)
        with self.lock:
            if len(gone):
                removed = self.graph.remove(gone)
                self.dead += int(np.sum(removed))
                self.changed += len(gone)
            if current:
                keys = np.fromiter(current, np.uint64, len(current))
                self.graph.add(keys, self.quantize(np.stack(list(current.values()))))
            self.seq = seq

    @property
    def worn(self) -> bool:
        """Whether tombstones are a large enough share of the graph to rebuild it."""
        return self.dead > max(1_000, MAX_DEAD_SHARE * self.size)

    def candidates(self, query: Vectors, count: int) -> npt.NDArray[np.int64]:
        """The chunk ids of (about) the `count` nearest vectors, nearest first."""
        count = min(count, self.size)
        if count <= 0:
            return np.zeros(0, np.int64)
        with self.lock:
            # usearch declares this setter apart from its getter, which mypy does not follow
            self.graph.expansion_search = max(EXPANSION_SEARCH, count)  # type: ignore[misc]
            # One thread: a single query gains nothing from a pool, and starting one per
            # search costs more than the search on a busy machine.
            found = self.graph.search(self.quantize(query.reshape(-1)), count, threads=1)
        return np.asarray(found.keys, np.int64)


def usearch_index() -> type[Index]:
    """usearch's Index class, imported when a brain first needs a graph. ONNX Runtime is
    imported first: with usearch 2.26's extension already loaded, importing ONNX Runtime 1.32
    (the local embedder) crashes the process (measured here; the other order is fine)."""
    import onnxruntime  # noqa: F401  (for its side effect: see above)
    from usearch.index import Index

    return Index


def _new_graph(dims: int) -> Index:
    return usearch_index()(
        ndim=dims,
        metric="ip",
        dtype="i8",
        connectivity=CONNECTIVITY,
        expansion_add=EXPANSION_ADD,
        expansion_search=EXPANSION_SEARCH,
    )


def save(path: Path, identity: MatrixIdentity, index: AnnIndex) -> None:
    with index.lock:
        body = index.graph.save()
        assert body is not None  # without a path usearch returns the bytes
        meta = _header(identity, index.dims, index.seq, index.scale, _digest(body))
    header = json.dumps(meta).encode()
    make_private_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(MAGIC + len(header).to_bytes(8, "little") + header)
            stream.write(body)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    index.changed = 0


def _digest(body: bytes | bytearray) -> str:
    return hashlib.sha256(body).hexdigest()


def _header(
    identity: MatrixIdentity, dims: int, seq: int, scale: float, digest: str
) -> dict[str, object]:
    return {
        "format": FORMAT,
        "brain_id": identity.brain_id,
        "brain_created": identity.brain_created,
        "model": identity.model,
        "dims": dims,
        "seq": seq,
        "scale": scale,
        "sha256": digest,
    }


def load(
    path: Path, identity: MatrixIdentity, dims: int, log_position: int, floor: int
) -> AnnIndex | None:
    """The saved graph if it is this brain's and model's, of `dims`, at a log position the log
    can catch up from (not ahead of `log_position`, not older than `floor`); else None."""
    try:
        data = path.read_bytes()
        if data[: len(MAGIC)] != MAGIC or len(data) < len(MAGIC) + 8:
            raise ValueError("not a saved vector graph")
        length = int.from_bytes(data[len(MAGIC) : len(MAGIC) + 8], "little")
        if length > MAX_HEADER:
            raise ValueError(f"a {length}-byte header")
        start = len(MAGIC) + 8
        meta = json.loads(data[start : start + length])
        seq, scale, digest = int(meta["seq"]), float(meta["scale"]), str(meta["sha256"])
        expected = _header(identity, dims, seq, scale, digest)
        if meta != expected or not floor <= seq <= log_position:
            return None
        if not math.isfinite(scale) or scale <= 0:
            raise ValueError(f"scale {scale}")
        body = bytearray(data[start + length :])
        del data
        if _digest(body) != digest:
            raise ValueError("its digest does not match: the file is damaged")
        graph = usearch_index().restore(body)
        if graph is None or graph.ndim != dims or str(graph.dtype) != str(_new_graph(dims).dtype):
            raise ValueError("not a usearch index of these vectors")
        return AnnIndex(seq, scale, graph)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, RuntimeError, json.JSONDecodeError):
        log.warning("ignoring the unreadable vector graph file %s", path.name, exc_info=True)
        return None
