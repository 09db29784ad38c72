"""The SQLite store's vector leg: a brain's vectors as an in-memory matrix (vector_matrix.py),
saved beside the database (vector_files.py) so a new process maps the file instead of reading
every vector out of SQLite, and caught up from `chunk_log` either way.

A mixin of `SqliteStore` (through `SearchLegs`); its state is set up by `_init_vector_leg`.
"""

from __future__ import annotations

import json
import logging
import threading
from pathlib import Path
from typing import Any

from loci.embed.base import Vectors
from loci.models import SearchFilters
from loci.store import vector_files
from loci.store.sqlite import chunk_log
from loci.store.sqlite.connection import Database
from loci.store.sqlite.rows import filter_sql
from loci.store.vector_files import MatrixIdentity, matrix_path
from loci.store.vector_matrix import VectorMatrix

log = logging.getLogger(__name__)

# From this many vectors a brain's vector scan goes through an int8 copy first (see
# vector_matrix.py): 4x fewer bytes to read, then exact float32 scores for the best candidates.
VECTOR_INT8_MIN_CHUNKS = 50_000
# Vectors that changed since the matrix was built are scanned exactly in a tail; it is folded
# into a rebuild once it holds more than this many rows or a twentieth of the matrix.
MATRIX_TAIL_ROWS = 5_000


class VectorLeg:
    db: Database
    _index_dir: Path

    def _init_vector_leg(self, vector_int8_min_chunks: int | None) -> None:
        # (brain id, brain creation time, model) -> matrix: a brain deleted and created again
        # under the same id (by another process) does not inherit the old one's.
        self._matrices: dict[tuple[int, str, str], VectorMatrix] = {}
        self._matrix_lock = threading.Lock()
        self.vector_int8_min_chunks = vector_int8_min_chunks

    def _forget_matrices(self, brain_id: int) -> None:
        with self._matrix_lock:
            for key in [k for k in self._matrices if k[0] == brain_id]:
                del self._matrices[key]
        for path in vector_files.paths_of(self._index_dir, brain_id):
            path.unlink(missing_ok=True)

    def vector_search(
        self, brain_id: int, model: str, query: Vectors, limit: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        matrix = self._matrix(brain_id, model)
        allowed: set[int] | None = None
        if not filters.empty:
            where, params = filter_sql(filters)
            allowed = {
                int(r[0])
                for r in self.db.conn.execute(
                    "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id"
                    f" WHERE c.brain_id = ? {where}",
                    (brain_id, *params),
                )
            }
        return matrix.top(query, limit, allowed)

    def _matrix(self, brain_id: int, model: str) -> VectorMatrix:
        """The brain's vectors of `model`: this process's copy, else the saved file, else built
        from SQLite (and saved); brought up to date from chunk_log."""
        built: tuple[MatrixIdentity, VectorMatrix] | None = None
        result: VectorMatrix
        # One read snapshot: the log position and the rows agree.
        with self._matrix_lock, self.db.conn:
            seq = chunk_log.position(self.db, brain_id)
            floor = chunk_log.floor(self.db, brain_id)
            brain = self.db.row(
                "SELECT created_at, embedder_model, embedder_dims FROM brains WHERE id = ?",
                (brain_id,),
            ) or {"created_at": None, "embedder_model": None, "embedder_dims": None}
            identity = MatrixIdentity(brain_id, str(brain["created_at"]), model)
            key = (brain_id, identity.brain_created, model)
            cached = self._matrices.get(key)
            if cached is not None and cached.seq < floor:
                cached = None  # the log no longer says what changed since: rebuild
            if cached is None:
                # The brain's own model has known dimensions; a file of others is stale.
                dims = brain["embedder_dims"] if brain["embedder_model"] == model else None
                path = matrix_path(self._index_dir, brain_id, model)
                saved = vector_files.load(path, identity, dims, seq, floor)
                if saved is not None:
                    cached = VectorMatrix.of(
                        saved.seq, saved.ids, saved.matrix, self.vector_int8_min_chunks
                    )
            if cached is not None and cached.seq < seq:
                changed = chunk_log.changed(self.db, brain_id, cached.seq, seq)
                ids, blobs = self._vectors_of(brain_id, model, changed)
                cached.update(seq, changed, ids, blobs)
                # Fold the tail and masked rows in once they are a noticeable share.
                if cached.stale_rows > max(MATRIX_TAIL_ROWS, len(cached.ids) // 20):
                    cached = None
            if cached is None or cached.seq != seq:
                ids, blobs = self._vectors_of(brain_id, model, None)
                width = len(blobs[0]) // 4 if blobs else 1
                cached = VectorMatrix.build(seq, ids, blobs, width, self.vector_int8_min_chunks)
                built = (identity, cached)
            for old in [k for k in self._matrices if k[0] == brain_id and k[2] == model]:
                if old != key:
                    del self._matrices[old]  # a previous brain under this id
            self._matrices[key] = result = cached
        if built is not None and len(built[1].ids):
            # Outside the lock (a big matrix takes seconds to write); its arrays never change.
            self._save_matrix(*built)
        return result

    def _save_matrix(self, identity: MatrixIdentity, matrix: VectorMatrix) -> None:
        path = matrix_path(self._index_dir, identity.brain_id, identity.model)
        try:
            vector_files.save(path, identity, matrix.seq, matrix.ids, matrix.matrix)
        except OSError:  # a read-only or full disk: the matrix in memory still serves
            log.warning("could not save the vector matrix to %s", path, exc_info=True)

    def _vectors_of(
        self, brain_id: int, model: str, chunk_ids: list[int] | None
    ) -> tuple[list[int], list[bytes]]:
        """(chunk ids, vector blobs) of the brain's chunks, or of the `chunk_ids` that exist."""
        sql = (
            "SELECT c.id, v.vector FROM chunks c JOIN vectors v"
            " ON v.model = ? AND v.hash = c.embed_hash WHERE c.brain_id = ?"
        )
        params: tuple[Any, ...] = (model, brain_id)
        if chunk_ids is not None:
            sql += " AND c.id IN (SELECT value FROM json_each(?))"
            params += (json.dumps(chunk_ids),)
        ids: list[int] = []
        blobs: list[bytes] = []
        for chunk_id, blob in self.db.conn.execute(sql + " ORDER BY c.id", params):
            ids.append(chunk_id)
            blobs.append(blob)
        return ids, blobs
