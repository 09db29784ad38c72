"""A brain's vector matrix kept beside the database, so a new process maps it instead of
reading every vector out of SQLite (~1.5 GB of blobs at a million chunks).

Like the saved BM25 index (lexical_files.py) the file is derived: it names the brain (id and
creation time, so a brain made again under a reused id does not inherit it), the model and its
dimensions, and the change-log position it reflects. A file that does not match is ignored and
the matrix rebuilt; one behind the log is caught up like a matrix in memory; one older than the
log's pruned floor is ignored, since the log no longer says what changed since.

One file holds identity, chunk ids and vectors, so a rename swaps all three together (a reader
sees a whole file or the previous one). Layout: magic, the JSON header's length, the header,
then the ids (int64) and the matrix (float32, row-major), each aligned to 64 bytes. The matrix
is memory-mapped read-only (`np.memmap`, what `np.load(mmap_mode="r")` does for one array):
pages come from the file as the scan touches them and stay shared in the page cache between
processes. A mapping stays valid when another process replaces or deletes the file.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from loci.embed.base import Vectors
from loci.private_files import make_private_dir

log = logging.getLogger(__name__)

FORMAT = 1
MAGIC = b"LOCIVEC1"
ALIGN = 64
MAX_HEADER = 65_536  # the JSON header is ~200 bytes; more means a damaged file


@dataclass(frozen=True)
class MatrixIdentity:
    """What a saved matrix must match to be used."""

    brain_id: int
    brain_created: str
    model: str


@dataclass(frozen=True)
class SavedMatrix:
    seq: int  # the change-log position the file reflects
    ids: npt.NDArray[np.int64]
    matrix: Vectors  # memory-mapped, read-only


def matrix_path(folder: Path, brain_id: int, model: str) -> Path:
    # Model ids may hold any character; the file name carries a digest, the header the name.
    digest = hashlib.sha256(model.encode()).hexdigest()[:16]
    return folder / f"vectors-brain-{brain_id}-{digest}.f32"


def paths_of(folder: Path, brain_id: int) -> list[Path]:
    """Every saved matrix of a brain (one per model it was searched with)."""
    return sorted(folder.glob(f"vectors-brain-{brain_id}-*.f32"))


def _aligned(n: int) -> int:
    return -(-n // ALIGN) * ALIGN


def save(
    path: Path,
    identity: MatrixIdentity,
    seq: int,
    ids: npt.NDArray[np.int64],
    matrix: Vectors,
) -> None:
    rows, dims = matrix.shape
    header = json.dumps(
        {
            "format": FORMAT,
            "brain_id": identity.brain_id,
            "brain_created": identity.brain_created,
            "model": identity.model,
            "dims": int(dims),
            "rows": int(rows),
            "seq": seq,
        }
    ).encode()
    ids_at = _aligned(len(MAGIC) + 8 + len(header))
    matrix_at = _aligned(ids_at + 8 * rows)
    make_private_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(MAGIC + len(header).to_bytes(8, "little") + header)
            stream.write(b"\0" * (ids_at - stream.tell()))
            stream.write(np.ascontiguousarray(ids, "<i8").tobytes())
            stream.write(b"\0" * (matrix_at - stream.tell()))
            # In slices, so a big matrix is not copied whole into one bytes object.
            for start in range(0, rows, 65_536):
                stream.write(np.ascontiguousarray(matrix[start : start + 65_536], "<f4").data)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def load(
    path: Path, identity: MatrixIdentity, dims: int | None, log_position: int, floor: int
) -> SavedMatrix | None:
    """The saved matrix if it is this brain's and model's (of `dims`, when known) and its
    position is one the log can catch up from: not ahead of it, not older than its floor."""
    try:
        with path.open("rb") as stream:
            start = stream.read(len(MAGIC) + 8)
            if len(start) != len(MAGIC) + 8 or start[: len(MAGIC)] != MAGIC:
                raise ValueError("not a saved vector matrix")
            header = int.from_bytes(start[len(MAGIC) :], "little")
            if header > MAX_HEADER:
                raise ValueError(f"a {header}-byte header")
            meta = json.loads(stream.read(header))
            size = os.fstat(stream.fileno()).st_size
        seq, rows, width = int(meta["seq"]), int(meta["rows"]), int(meta["dims"])
        expected = {
            "format": FORMAT,
            "brain_id": identity.brain_id,
            "brain_created": identity.brain_created,
            "model": identity.model,
            "dims": width if dims is None else dims,
            "rows": rows,
            "seq": seq,
        }
        if meta != expected or not floor <= seq <= log_position:
            return None
        ids_at = _aligned(len(MAGIC) + 8 + header)
        matrix_at = _aligned(ids_at + 8 * rows)
        if size != matrix_at + 4 * rows * width:
            raise ValueError(f"{size} bytes, not the {matrix_at + 4 * rows * width} expected")
        if rows == 0:
            return SavedMatrix(seq, np.zeros(0, np.int64), np.zeros((0, width), np.float32))
        ids = np.fromfile(path, "<i8", rows, offset=ids_at).astype(np.int64)
        matrix = np.memmap(path, np.float32, "r", matrix_at, (rows, width))
        return SavedMatrix(seq, ids, matrix)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError, json.JSONDecodeError):
        log.warning("ignoring the unreadable vector matrix file %s", path.name, exc_info=True)
        return None
