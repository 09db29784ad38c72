"""The SQLite store's search legs: BM25 (the in-process index, saved beside the database, with
FTS5 as the fallback) and, through `VectorLeg` (vector_leg.py), the vector scan (a matrix saved
beside the database too, int8 pre-scan for large brains).

A mixin of `SqliteStore`: the state it keeps (indexes, matrices, their locks) is set up by
`_init_search_legs`, and `_forget_brain` drops a deleted brain's.
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from loci.models import Chunk, Document, SearchFilters
from loci.store import lexical_files
from loci.store.lexical_files import IndexIdentity, index_path
from loci.store.lexical_index import SEGMENT_ROWS, IndexRow, LexicalIndex
from loci.store.sqlite import chunk_log
from loci.store.sqlite.connection import Database
from loci.store.sqlite.rows import (
    FTS_WEIGHTS,
    chunk_of,
    document_of,
    filter_sql,
    fts_phrase,
    index_weights,
)
from loci.store.sqlite.vector_leg import VECTOR_INT8_MIN_CHUNKS, VectorLeg

__all__ = ["LEXICAL_INDEX_MIN_CHUNKS", "VECTOR_INT8_MIN_CHUNKS", "SearchLegs"]

log = logging.getLogger(__name__)

# From this many chunks a brain's BM25 leg runs on the in-memory index (lexical_index.py: BM25 at
# k1 0.9, b 0.4, which FTS5 cannot do) instead of FTS5's bm25() (k1 1.2, b 0.75, and it scores
# every matching row). None keeps FTS5 for every brain.
LEXICAL_INDEX_MIN_CHUNKS = 1
# A brain up to this size builds its index on its first search (1.5 s for 11k passages); a larger
# one with no saved index answers from FTS5 while a background thread builds it.
SYNC_BUILD_MAX_CHUNKS = 50_000
# A caught-up index is saved again once this many chunks (or a twentieth of it) changed since
# the file was written: catching up from the log is cheap, writing a big index is not.
SAVE_AFTER_CHANGES = 1_000
# Segments added by catching up are small; merge them once this many pile up.
MAX_SMALL_SEGMENTS = 8
# When an index is saved, the brain's change log is pruned up to it but keeps at least this many
# entries (or a tenth of the brain's chunks): a process that lags by less catches up from the log
# instead of reloading, and a matrix rebuilt after MATRIX_TAIL_ROWS changes stays usable.
LOG_RETAIN = 10_000


class SearchLegs(VectorLeg):
    db: Database

    def _init_search_legs(
        self,
        path: Path,
        lexical_index_min_chunks: int | None,
        vector_int8_min_chunks: int | None,
        bm25: tuple[float, float],
    ) -> None:
        self._index_dir = path.parent / "index"  # saved BM25 indexes and vector matrices
        self._init_vector_leg(vector_int8_min_chunks)
        self.lexical_index_min_chunks = lexical_index_min_chunks
        self._lexical: dict[int, LexicalIndex] = {}
        self._lexical_identity: dict[int, IndexIdentity] = {}  # what each index was built for
        # The short lock guards the two collections; a brain's own lock is held while its
        # index is built or caught up, so a build never blocks another brain's searches.
        self._lexical_lock = threading.Lock()
        self._brain_locks: dict[int, threading.Lock] = {}
        self._building: set[int] = set()  # brains whose BM25 index a background thread builds
        self._sizes: dict[int, tuple[int, int]] = {}  # brain -> (generation, chunk count)
        self.bm25 = bm25
        self._unsaved: dict[int, int] = {}  # brain -> chunks changed since its index was saved

    def _forget_brain(self, brain_id: int) -> None:
        """Drop a deleted brain's matrices, index and saved files (derived: nothing lost)."""
        self._forget_matrices(brain_id)
        with self._lexical_lock:
            self._lexical.pop(brain_id, None)
            self._lexical_identity.pop(brain_id, None)
        index_path(self._index_dir, brain_id).unlink(missing_ok=True)

    def text_search(
        self, brain_id: int, terms: Sequence[str], limit: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        if not terms:
            return []
        if self._uses_lexical_index(brain_id):
            index = self._ready_lexical_index(brain_id)
            if index is not None:
                tokens = index.query_tokens(terms)
                return index.search(tokens, limit, self._allowed_chunks(brain_id, filters))
        return self.fts_search(brain_id, terms, limit, filters)

    def text_ceiling(self, brain_id: int, terms: Sequence[str]) -> float | None:
        if not terms or not self._uses_lexical_index(brain_id):
            return None  # FTS5's bm25() keeps its statistics to itself
        index = self._ready_lexical_index(brain_id)
        return index.ceiling(index.query_tokens(terms)) if index is not None else None

    def _ready_lexical_index(self, brain_id: int) -> LexicalIndex | None:
        """The brain's BM25 index, caught up, if this process has it, a saved one can be
        loaded, or the brain is small enough to build it now. Otherwise start building it on a
        background thread and return None: a first build takes minutes at a million chunks,
        and FTS5 answers (slower, ranking nearly the same) in the meantime."""
        small = self._sizes[brain_id][1] <= SYNC_BUILD_MAX_CHUNKS
        if brain_id in self._lexical or small or index_path(self._index_dir, brain_id).exists():
            return self.lexical_index(brain_id)
        with self._lexical_lock:
            if brain_id in self._building:
                return None
            self._building.add(brain_id)
        threading.Thread(
            target=self._build_lexical_index, args=(brain_id,), name="loci-bm25-build", daemon=True
        ).start()
        return None

    def _build_lexical_index(self, brain_id: int) -> None:
        try:
            self.lexical_index(brain_id)
        except Exception:  # a closed store or a vanished brain: FTS5 keeps answering
            log.warning("building the BM25 index of brain %s failed", brain_id, exc_info=True)
        finally:
            with self._lexical_lock:
                self._building.discard(brain_id)

    def fts_search(
        self, brain_id: int, terms: Sequence[str], limit: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """The BM25 leg through FTS5's bm25(): exact, and what small brains always use."""
        if not terms:
            return []
        match = f"brain : b{brain_id} AND ({' OR '.join(fts_phrase(t) for t in terms)})"
        where, params = filter_sql(filters)
        weights = ",".join(str(w) for w in FTS_WEIGHTS)
        if where:
            sql = (
                f"SELECT f.rowid, bm25(chunks_fts, {weights}) AS s FROM chunks_fts f"
                " JOIN chunks c ON c.id = f.rowid JOIN documents d ON d.id = c.document_id"
                f" WHERE chunks_fts MATCH ? AND c.brain_id = ? {where} ORDER BY s LIMIT ?"
            )
            args: tuple[Any, ...] = (match, brain_id, *params, limit)
        else:
            sql = (
                f"SELECT rowid, bm25(chunks_fts, {weights}) AS s FROM chunks_fts"
                " WHERE chunks_fts MATCH ? ORDER BY s LIMIT ?"
            )
            args = (match, limit)
        return [(int(r[0]), -float(r[1])) for r in self.db.conn.execute(sql, args)]

    def _uses_lexical_index(self, brain_id: int) -> bool:
        threshold = self.lexical_index_min_chunks
        if threshold is None:
            return False
        generation = int(
            self.db.scalar("SELECT generation FROM brains WHERE id = ?", (brain_id,)) or 0
        )
        known = self._sizes.get(brain_id)
        if known is None or known[0] != generation:
            count = int(
                self.db.scalar("SELECT count(*) FROM chunks WHERE brain_id = ?", (brain_id,))
            )
            known = self._sizes[brain_id] = (generation, count)
        return known[1] >= threshold

    def _index_rows(self, brain_id: int, chunk_ids: Sequence[int] | None) -> list[IndexRow]:
        """What FTS5 indexed for these chunks (all of the brain's if None), by chunk id."""
        # The FTS title is the one replace_index used: the document's title, else its name.
        sql = (
            "SELECT c.id, coalesce(nullif(d.title, ''), d.name), c.heading_path, c.text"
            " FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.brain_id = ?"
        )
        params: tuple[Any, ...] = (brain_id,)
        if chunk_ids is not None:
            sql += " AND c.id IN (SELECT value FROM json_each(?))"
            params += (json.dumps(list(chunk_ids)),)
        return [
            (int(cid), str(title), " / ".join(json.loads(headings)), str(text))
            for cid, title, headings, text in self.db.conn.execute(sql + " ORDER BY c.id", params)
        ]

    def lexical_index(self, brain_id: int) -> LexicalIndex:
        """The brain's BM25 index, built now if need be and brought up to date from chunk_log."""
        with self._lexical_lock:
            brain_lock = self._brain_locks.setdefault(brain_id, threading.Lock())
        with brain_lock:
            index = self._lexical.get(brain_id)
            conn = self.db.conn
            with conn:  # one read snapshot: the log position and the rows agree
                seq = chunk_log.position(self.db, brain_id)
                floor = chunk_log.floor(self.db, brain_id)
                identity = self._index_identity(brain_id)
                path = index_path(self._index_dir, brain_id)
                save = False
                # Older than the pruned floor, the log no longer says what changed since.
                if index is not None and (
                    index.seq < floor or self._lexical_identity.get(brain_id) != identity
                ):
                    index = None
                if index is None:
                    index = lexical_files.load(path, identity, self.db.tokenize, seq)
                    if index is not None and index.seq < floor:
                        index = None
                if index is None:
                    index = LexicalIndex(self.db.tokenize, identity.weights, 0, *self.bm25)
                    index.add(self._index_rows(brain_id, None))
                    save = True
                elif seq > index.seq:
                    changed = chunk_log.changed(self.db, brain_id, index.seq, seq)
                    self._unsaved[brain_id] = self._unsaved.get(brain_id, 0) + len(changed)
                    due = max(SAVE_AFTER_CHANGES, index.size // 20)
                    save = self._unsaved[brain_id] >= due
                    # Whatever happened to a chunk, it is dropped and re-read if it still exists.
                    index.remove(changed)
                    index.add(self._index_rows(brain_id, changed))
                    small = index.small_segments(SEGMENT_ROWS // 10)
                    if len(small) > MAX_SMALL_SEGMENTS:
                        merged = [int(i) for s in small for i in s.chunk_ids[s.live]]
                        index.segments = [s for s in index.segments if s not in small]
                        index.add(self._index_rows(brain_id, merged))
                index.seq = seq
                self._lexical[brain_id] = index
                self._lexical_identity[brain_id] = identity
            if save:
                self._save_index(path, self._lexical[brain_id], identity)
            return self._lexical[brain_id]

    def _index_identity(self, brain_id: int) -> IndexIdentity:
        created = self.db.scalar("SELECT created_at FROM brains WHERE id = ?", (brain_id,))
        return IndexIdentity(brain_id, str(created), index_weights(), *self.bm25)

    def _save_index(self, path: Path, index: LexicalIndex, identity: IndexIdentity) -> None:
        try:
            lexical_files.save(path, index, identity)
            self._unsaved[identity.brain_id] = 0
        except OSError:  # a read-only or full disk: the index in memory still serves
            log.warning("could not save the BM25 index to %s", path, exc_info=True)
            return
        self._prune_log(identity.brain_id, index.seq)

    def _prune_log(self, brain_id: int, saved: int) -> None:
        """Drop the brain's log entries up to `saved`, the position of a file just written,
        so a process that finds itself behind the floor reloads that file and catches up."""
        chunks = int(self.db.scalar("SELECT count(*) FROM chunks WHERE brain_id = ?", (brain_id,)))
        dropped = chunk_log.prune(self.db, brain_id, saved, max(LOG_RETAIN, chunks // 10))
        if dropped:
            log.debug("pruned %d change-log entries of brain %s", dropped, brain_id)

    def _allowed_chunks(
        self, brain_id: int, filters: SearchFilters
    ) -> npt.NDArray[np.int64] | None:
        """The brain's chunk ids that pass `filters`, or None when nothing is filtered."""
        if filters.empty:
            return None
        where, params = filter_sql(filters)
        return np.fromiter(
            (
                int(r[0])
                for r in self.db.conn.execute(
                    "SELECT c.id FROM chunks c JOIN documents d ON d.id = c.document_id"
                    f" WHERE c.brain_id = ? {where}",
                    (brain_id, *params),
                )
            ),
            np.int64,
        )

    def chunks_with_documents(self, chunk_ids: Sequence[int]) -> dict[int, tuple[Chunk, Document]]:
        found: dict[int, tuple[Chunk, Document]] = {}
        unique = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ",".join("?" * len(batch))
            chunk_rows = self.db.rows(f"SELECT * FROM chunks WHERE id IN ({marks})", tuple(batch))
            doc_ids = sorted({r["document_id"] for r in chunk_rows})
            docs = (
                {
                    r["id"]: document_of(r)
                    for r in self.db.rows(
                        f"SELECT * FROM documents WHERE id IN ({','.join('?' * len(doc_ids))})",
                        tuple(doc_ids),
                    )
                }
                if doc_ids
                else {}
            )
            for r in chunk_rows:
                found[r["id"]] = (chunk_of(r), docs[r["document_id"]])
        return found

    def chunk_documents(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        found: dict[int, int] = {}
        unique = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ",".join("?" * len(batch))
            for chunk_id, document_id in self.db.conn.execute(
                f"SELECT id, document_id FROM chunks WHERE id IN ({marks})", tuple(batch)
            ):
                found[int(chunk_id)] = int(document_id)
        return found
