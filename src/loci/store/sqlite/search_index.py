"""The SQLite store's search engine: per brain, an in-memory BM25 index (lexical_index.py) with
its document-level twin (document_index.py), a vector matrix (vector_matrix.py) and, for a large
brain, an HNSW graph over it (vector_ann.py), each saved beside the database (lexical_files.py,
vector_files.py, vector_ann.py) so a new process loads it instead of rebuilding, and each caught
up from the chunk change log (chunk_log.py) that every process writing the database appends to.

Nothing here is canonical: an index or matrix that is missing, stale or unreadable is rebuilt from
the chunks table, and FTS5's `bm25()` answers the BM25 leg whenever the index is not ready. The
store owns one `SearchIndex` and hands its search legs to it; `forget` drops a deleted brain's.

Locks: a short lock guards the collections of indexes; a brain's own lock is held while its index
is built or caught up, so a build never blocks another brain's searches. Matrices share one lock,
graphs another. A search reads an index or matrix without a lock: catching up swaps lists, masks
and tails whole and never edits an array a search may be reading. A graph is edited in place,
under its own lock, which its searches take too.
"""

from __future__ import annotations

import json
import logging
import math
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from loci.context_line import index_title
from loci.embed.base import Vectors
from loci.models import DocumentTextScores, PassageContext, SearchFilters, TextCeiling
from loci.store import lexical_files, vector_ann, vector_files
from loci.store.document_index import DocumentIndex
from loci.store.lexical_files import IndexIdentity, index_path
from loci.store.lexical_index import SEGMENT_ROWS, IndexRow, LexicalIndex
from loci.store.sqlite import chunk_log
from loci.store.sqlite.connection import Database
from loci.store.sqlite.document_rows import document_rows, documents_of
from loci.store.sqlite.rows import FTS_WEIGHTS, filter_sql, fts_phrase, index_weights
from loci.store.stemming import (
    AUTO,
    analyze,
    query_phrases,
    query_stemmers,
    query_tokens,
    stemmer_for,
)
from loci.store.vector_ann import AnnIndex, ann_path
from loci.store.vector_background import SAMPLE, VectorBackground
from loci.store.vector_files import MatrixIdentity, matrix_path
from loci.store.vector_matrix import VectorMatrix

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
# From this many vectors a brain's vector scan goes through an int8 copy first (see
# vector_matrix.py): 4x fewer bytes to read, then exact float32 scores for the best candidates.
VECTOR_INT8_MIN_CHUNKS = 50_000
# Vectors that changed since the matrix was built are scanned exactly in a tail; it is folded
# into a rebuild once it holds more than this many rows or a twentieth of the matrix.
MATRIX_TAIL_ROWS = 5_000
# From this many vectors a brain's vector leg takes its candidates from an HNSW graph
# (vector_ann.py) and scores them exactly, instead of scanning every vector: at 100k vectors the
# scan reads 38 MB per query, the graph a few thousand nodes. None: always the exact scan.
VECTOR_ANN_MIN_CHUNKS = 50_000
# A graph over up to this many vectors is built by the search that needs it (seconds); a larger
# one on a background thread (minutes at a million) while the exact scan answers.
ANN_SYNC_BUILD_MAX = 20_000
# Candidates asked of the graph: this many times the results wanted, and at least this many more.
ANN_OVERFETCH = 2
ANN_SPARE = 20
# A filtered search whose allowed chunks are fewer than this share of the brain scans them
# exactly: the graph would have to propose most of the brain to find enough of them. Above it
# the graph is asked for more candidates in proportion, and more again while too few pass.
ANN_MIN_ALLOWED_SHARE = 0.05
# Past this share of the brain, a search asks the exact scan instead of widening further.
ANN_MAX_CANDIDATE_SHARE = 0.25


class SearchIndex:
    def __init__(
        self,
        db: Database,
        folder: Path,
        *,
        lexical_index_min_chunks: int | None = LEXICAL_INDEX_MIN_CHUNKS,
        vector_int8_min_chunks: int | None = VECTOR_INT8_MIN_CHUNKS,
        vector_ann_min_chunks: int | None = VECTOR_ANN_MIN_CHUNKS,
        bm25: tuple[float, float],
    ) -> None:
        """`folder` holds the saved files; brain sizes from which the BM25 leg runs on the
        in-memory index, the vector leg scans an int8 copy first and from which it asks an HNSW
        graph for candidates (None keeps the plain path: FTS5's bm25(), a float32 scan, no
        graph); `bm25` is the index's (k1, b)."""
        self.db = db
        self.folder = folder
        self.lexical_index_min_chunks = lexical_index_min_chunks
        self.vector_int8_min_chunks = vector_int8_min_chunks
        self.vector_ann_min_chunks = vector_ann_min_chunks
        self.bm25 = bm25
        self._lexical: dict[int, LexicalIndex] = {}
        self._documents: dict[int, DocumentIndex] = {}  # built, loaded and caught up with it
        self._lexical_identity: dict[int, IndexIdentity] = {}  # what each index was built for
        self._lexical_lock = threading.Lock()
        self._brain_locks: dict[int, threading.Lock] = {}
        self._building: set[int] = set()  # brains whose BM25 index a background thread builds
        self._sizes: dict[int, tuple[int, int]] = {}  # brain -> (generation, chunk count)
        self._unsaved: dict[int, int] = {}  # brain -> chunks changed since its index was saved
        # (brain id, brain creation time, model) -> matrix: a brain deleted and created again
        # under the same id (by another process) does not inherit the old one's.
        self._matrices: dict[tuple[int, str, str], VectorMatrix] = {}
        self._matrix_lock = threading.Lock()
        # (brain id, model) -> (the matrix it was taken from, its live rows then, background)
        self._backgrounds: dict[
            tuple[int, str], tuple[VectorMatrix, int, VectorBackground | None]
        ] = {}
        # (brain id, brain creation time, model) -> graph, as for matrices
        self._anns: dict[tuple[int, str, str], AnnIndex] = {}
        self._ann_building: set[tuple[int, str, str]] = set()
        self._ann_lock = threading.Lock()

    def forget(self, brain_id: int) -> None:
        """Drop a deleted brain's matrices, index and saved files (derived: nothing lost)."""
        with self._matrix_lock:
            for key in [k for k in self._matrices if k[0] == brain_id]:
                del self._matrices[key]
            for known in [k for k in self._backgrounds if k[0] == brain_id]:
                del self._backgrounds[known]
        with self._ann_lock:
            for graph in [k for k in self._anns if k[0] == brain_id]:
                del self._anns[graph]
        for path in vector_files.paths_of(self.folder, brain_id):
            path.unlink(missing_ok=True)
        for path in vector_ann.paths_of(self.folder, brain_id):
            path.unlink(missing_ok=True)
        with self._lexical_lock:
            self._lexical.pop(brain_id, None)
            self._documents.pop(brain_id, None)
            self._lexical_identity.pop(brain_id, None)
        index_path(self.folder, brain_id).unlink(missing_ok=True)

    # the BM25 leg -------------------------------------------------------------------------
    def text_search(
        self,
        brain_id: int,
        terms: Sequence[str],
        limit: int,
        filters: SearchFilters,
        languages: Sequence[str] = (),
    ) -> list[tuple[int, float]]:
        if not terms:
            return []
        if self._uses_lexical_index(brain_id):
            index = self._ready_lexical_index(brain_id)
            if index is not None:
                tokens = query_tokens(terms, self._query_stemmers(brain_id, languages))
                return index.search(tokens, limit, self._allowed_chunks(brain_id, filters))
        return self.fts_search(brain_id, terms, limit, filters, languages)

    def text_ceiling(
        self, brain_id: int, terms: Sequence[str], languages: Sequence[str] = ()
    ) -> TextCeiling | None:
        if not terms or not self._uses_lexical_index(brain_id):
            return None  # FTS5's bm25() keeps its statistics to itself
        index = self._ready_lexical_index(brain_id)
        if index is None:
            return None
        return index.text_ceiling(query_tokens(terms, self._query_stemmers(brain_id, languages)))

    def document_text_scores(
        self,
        brain_id: int,
        terms: Sequence[str],
        chunk_ids: Sequence[int],
        languages: Sequence[str] = (),
    ) -> DocumentTextScores | None:
        if not terms or not self._uses_lexical_index(brain_id):
            return None  # FTS5 keeps no document statistics
        if self._ready_lexical_index(brain_id) is None:
            return None
        documents = self._documents.get(brain_id)
        if documents is None:
            return None
        tokens = query_tokens(terms, self._query_stemmers(brain_id, languages))
        return DocumentTextScores(
            documents.passage_scores(tokens, chunk_ids), documents.ceiling(tokens)
        )

    def _query_stemmers(self, brain_id: int, languages: Sequence[str]) -> list[str]:
        brain_language = str(
            self.db.scalar("SELECT text_language FROM brains WHERE id = ?", (brain_id,)) or AUTO
        )
        return query_stemmers(brain_language, languages)

    def fts_search(
        self,
        brain_id: int,
        terms: Sequence[str],
        limit: int,
        filters: SearchFilters,
        languages: Sequence[str] = (),
    ) -> list[tuple[int, float]]:
        """The BM25 leg through FTS5's bm25(): exact, and what small brains always use."""
        phrases = query_phrases(terms, self._query_stemmers(brain_id, languages))
        if not phrases:
            return []
        match = f"brain : b{brain_id} AND ({' OR '.join(fts_phrase(p) for p in phrases)})"
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
            known = self._sizes[brain_id] = (generation, self._chunk_count(brain_id))
        return known[1] >= threshold

    def _ready_lexical_index(self, brain_id: int) -> LexicalIndex | None:
        """The brain's BM25 index, caught up, if this process has it, a saved one can be
        loaded, or the brain is small enough to build it now. Otherwise start building it on a
        background thread and return None: a first build takes minutes at a million chunks,
        and FTS5 answers (slower, ranking nearly the same) in the meantime."""
        small = self._sizes[brain_id][1] <= SYNC_BUILD_MAX_CHUNKS
        if brain_id in self._lexical or small or index_path(self.folder, brain_id).exists():
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

    def lexical_index(self, brain_id: int) -> LexicalIndex:
        """The brain's BM25 index, built now if need be and brought up to date from chunk_log."""
        with self._lexical_lock:
            brain_lock = self._brain_locks.setdefault(brain_id, threading.Lock())
        with brain_lock:
            index = self._lexical.get(brain_id)
            documents = self._documents.get(brain_id)
            with self.db.conn:  # one read snapshot: the log position and the rows agree
                seq = chunk_log.position(self.db, brain_id)
                floor = chunk_log.floor(self.db, brain_id)
                identity = self._index_identity(brain_id)
                path = index_path(self.folder, brain_id)
                save = False
                # Older than the pruned floor, the log no longer says what changed since.
                if (
                    index is None
                    or documents is None
                    or index.seq < floor
                    or self._lexical_identity.get(brain_id) != identity
                ):
                    index = documents = None
                    loaded = lexical_files.load(path, identity, analyze, seq)
                    if loaded is not None and loaded[0].seq >= floor:
                        index, documents = loaded
                if index is None or documents is None:
                    index = LexicalIndex(analyze, identity.weights, 0, *self.bm25)
                    index.add(self._index_rows(brain_id, None))
                    documents = DocumentIndex(analyze, identity.weights, *self.bm25)
                    documents.add(document_rows(self.db, brain_id, None))
                    save = True
                elif seq > index.seq:
                    save = self._catch_up(brain_id, index, documents, seq)
                index.seq = seq
                self._lexical[brain_id] = current = index
                self._documents[brain_id] = current_documents = documents
                self._lexical_identity[brain_id] = identity
            if save:
                self._save_index(path, current, current_documents, identity)
            return current

    def _catch_up(
        self, brain_id: int, index: LexicalIndex, documents: DocumentIndex, seq: int
    ) -> bool:
        """Re-read what changed since the index's position; True when it is due to be saved."""
        changed = chunk_log.changed(self.db, brain_id, index.seq, seq, with_vectors=False)
        self._unsaved[brain_id] = self._unsaved.get(brain_id, 0) + len(changed)
        due = self._unsaved[brain_id] >= max(SAVE_AFTER_CHANGES, index.size // 20)
        # Whatever happened to a chunk, it is dropped and re-read if it still exists.
        index.remove(changed)
        index.add(self._index_rows(brain_id, changed))
        # A document is re-read whole when any of its passages changed: the ones it had (a
        # deleted passage is known only to the index) and the ones it has now.
        touched = set(documents.owners_of(changed).values()) | documents_of(self.db, changed)
        documents.remove(sorted(touched))
        documents.add(document_rows(self.db, brain_id, sorted(touched)))
        small = index.small_segments(SEGMENT_ROWS // 10)
        if len(small) > MAX_SMALL_SEGMENTS:
            merged = [int(i) for s in small for i in s.ids[s.live]]
            index.segments = [s for s in index.segments if s not in small]
            index.add(self._index_rows(brain_id, merged))
        small = documents.lexical.small_segments(SEGMENT_ROWS // 10)
        if len(small) > MAX_SMALL_SEGMENTS:
            merged = [int(i) for s in small for i in s.ids[s.live]]
            documents.remove(merged)
            documents.add(document_rows(self.db, brain_id, merged))
        return due

    def _index_rows(self, brain_id: int, chunk_ids: Sequence[int] | None) -> list[IndexRow]:
        """What FTS5 indexed for these chunks (all of the brain's if None), by chunk id."""
        # The FTS title is the one replace_index used (`loci.context_line.index_title`).
        sql = (
            "SELECT c.id, d.title, d.name, d.kind, c.heading_path, c.text,"
            " b.text_language, c.language FROM chunks c JOIN documents d ON d.id = c.document_id"
            " JOIN brains b ON b.id = c.brain_id WHERE c.brain_id = ?"
        )
        params: tuple[Any, ...] = (brain_id,)
        if chunk_ids is not None:
            sql += " AND c.id IN (SELECT value FROM json_each(?))"
            params += (json.dumps(list(chunk_ids)),)
        return [
            (
                int(cid),
                index_title(title or None, str(name), str(kind)),
                " / ".join(json.loads(headings)),
                str(text),
                stemmer_for(str(brain_language), language),
            )
            for cid, title, name, kind, headings, text, brain_language, language in (
                self.db.conn.execute(sql + " ORDER BY c.id", params)
            )
        ]

    def _index_identity(self, brain_id: int) -> IndexIdentity:
        row = self.db.row("SELECT created_at, text_language FROM brains WHERE id = ?", (brain_id,))
        created, language = (row["created_at"], row["text_language"]) if row else ("", AUTO)
        return IndexIdentity(brain_id, str(created), index_weights(), *self.bm25, str(language))

    def _save_index(
        self, path: Path, index: LexicalIndex, documents: DocumentIndex, identity: IndexIdentity
    ) -> None:
        try:
            lexical_files.save(path, index, documents, identity)
            self._unsaved[identity.brain_id] = 0
        except OSError:  # a read-only or full disk: the index in memory still serves
            log.warning("could not save the BM25 index to %s", path, exc_info=True)
            return
        self._prune_log(identity.brain_id, index.seq)

    def _prune_log(self, brain_id: int, saved: int) -> None:
        """Drop the brain's log entries up to `saved`, the position of a file just written,
        so a process that finds itself behind the floor reloads that file and catches up."""
        retain = max(LOG_RETAIN, self._chunk_count(brain_id) // 10)
        dropped = chunk_log.prune(self.db, brain_id, saved, retain)
        if dropped:
            log.debug("pruned %d change-log entries of brain %s", dropped, brain_id)

    # the vector leg -----------------------------------------------------------------------
    def vector_search(
        self, brain_id: int, model: str, query: Vectors, limit: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        matrix = self.matrix(brain_id, model)
        allowed = self._allowed_chunks(brain_id, filters)
        graph = self.ann(brain_id, model, matrix)
        if graph is not None:
            found = self._ann_top(graph, matrix, query, limit, allowed)
            if found is not None:
                return found
        return matrix.top(query, limit, None if allowed is None else set(allowed.tolist()))

    def _ann_top(
        self,
        graph: AnnIndex,
        matrix: VectorMatrix,
        query: Vectors,
        limit: int,
        allowed: npt.NDArray[np.int64] | None,
    ) -> list[tuple[int, float]] | None:
        """The best `limit` of the `allowed` chunks from the graph's candidates, scored
        exactly; None when the exact scan should answer (few chunks allowed, or the graph
        proposed too few of them)."""
        rows = max(matrix.rows, 1)
        share = 1.0 if allowed is None else len(allowed) / rows
        if share < ANN_MIN_ALLOWED_SHARE:
            return None
        count = math.ceil(max(ANN_OVERFETCH * limit, limit + ANN_SPARE) / share)
        while True:
            candidates = graph.candidates(query, count)
            if allowed is not None:
                candidates = candidates[np.isin(candidates, allowed)]
            found = matrix.rescore(query, candidates, limit)
            if len(found) >= limit or count >= graph.size:
                return found
            count *= 4
            if count > ANN_MAX_CANDIDATE_SHARE * rows:
                # Too few of the allowed chunks near the query: only a scan finds the rest.
                return None

    def vector_background(self, brain_id: int, model: str) -> VectorBackground | None:
        matrix = self.matrix(brain_id, model)
        rows = matrix.rows
        cached = self._backgrounds.get((brain_id, model))
        # Taken again only when the brain changed by a twentieth: a background moves slowly.
        if cached is not None and cached[0] is matrix and abs(rows - cached[1]) <= rows // 20:
            return cached[2]
        documents = int(
            self.db.scalar(
                "SELECT count(DISTINCT document_id) FROM chunks WHERE brain_id = ?", (brain_id,)
            )
        )
        ids, sample = matrix.sample(SAMPLE)
        owner = self._chunk_documents(ids.tolist())
        owners = np.asarray([owner.get(i, -1 - n) for n, i in enumerate(ids.tolist())], np.int64)
        background = VectorBackground.of(sample, rows, documents, owners)
        self._backgrounds[(brain_id, model)] = (matrix, rows, background)
        return background

    def passage_contexts(
        self, brain_id: int, model: str, query: Vectors, chunk_ids: Sequence[int]
    ) -> dict[int, PassageContext]:
        heads: dict[int, int] = {}  # chunk -> its document's first chunk
        unique = list(dict.fromkeys(chunk_ids))
        for start in range(0, len(unique), 500):  # under SQLite's limit of parameters
            batch = unique[start : start + 500]
            marks = ", ".join("?" for _ in batch)
            for row in self.db.rows(
                "SELECT c.id AS id, o.id AS head FROM chunks c JOIN chunks o"
                f" ON o.document_id = c.document_id AND o.idx = 0 WHERE c.id IN ({marks})",
                tuple(batch),
            ):
                heads[int(row["id"])] = int(row["head"])
        vectors = self.matrix(brain_id, model).vectors_of([*heads, *heads.values()])
        q = query.reshape(-1)
        return {
            chunk: PassageContext(
                float(vectors[chunk] @ q),
                head,
                float(vectors[head] @ q),
                float(vectors[chunk] @ vectors[head]),
            )
            for chunk, head in heads.items()
            if chunk in vectors and head in vectors
        }

    def _chunk_documents(self, chunk_ids: list[int]) -> dict[int, int]:
        found: dict[int, int] = {}
        for start in range(0, len(chunk_ids), 500):  # under SQLite's limit of parameters
            batch = chunk_ids[start : start + 500]
            marks = ", ".join("?" for _ in batch)
            for row in self.db.rows(
                f"SELECT id, document_id FROM chunks WHERE id IN ({marks})", tuple(batch)
            ):
                found[int(row["id"])] = int(row["document_id"])
        return found

    def matrix(self, brain_id: int, model: str) -> VectorMatrix:
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
            # The brain's own model has known dimensions; a file of others is stale.
            dims = brain["embedder_dims"] if brain["embedder_model"] == model else None
            if cached is None:
                path = matrix_path(self.folder, brain_id, model)
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
                width = len(blobs[0]) // 4 if blobs else (dims or 1)
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

    def ann(self, brain_id: int, model: str, matrix: VectorMatrix) -> AnnIndex | None:
        """The brain's HNSW graph of `model`, caught up with `matrix`, when the brain is large
        enough for one and it is ready: this process's, else the saved file, else built now
        (up to ANN_SYNC_BUILD_MAX vectors) or on a background thread (None meanwhile)."""
        threshold = self.vector_ann_min_chunks
        if threshold is None or matrix.rows < threshold or not len(matrix.ids):
            return None
        seq = matrix.seq  # read first: the matrix may be caught up again meanwhile
        due: tuple[MatrixIdentity, AnnIndex] | None = None
        with self._ann_lock, self.db.conn:
            floor = chunk_log.floor(self.db, brain_id)
            created = self.db.scalar("SELECT created_at FROM brains WHERE id = ?", (brain_id,))
            identity = MatrixIdentity(brain_id, str(created), model)
            key = (brain_id, identity.brain_created, model)
            graph = self._anns.get(key)
            if graph is not None and (graph.seq < floor or graph.dims != matrix.dims):
                graph = None  # the log no longer says what changed since, or another width
            if graph is None:
                path = ann_path(self.folder, brain_id, model)
                graph = vector_ann.load(path, identity, matrix.dims, seq, floor)
            if graph is None or graph.worn:
                if key not in self._ann_building:
                    if matrix.rows <= ANN_SYNC_BUILD_MAX:
                        graph = self._build_ann(matrix)
                        due = (identity, graph)
                    else:
                        self._ann_building.add(key)
                        threading.Thread(
                            target=self._build_ann_later,
                            args=(identity, key, matrix),
                            name="loci-ann-build",
                            daemon=True,
                        ).start()
                if graph is None:
                    return None
            if graph.seq < seq:
                changed = chunk_log.changed(self.db, brain_id, graph.seq, seq)
                graph.update(seq, changed, matrix.vectors_of(changed))
                if graph.changed >= max(SAVE_AFTER_CHANGES, graph.size // 20):
                    due = (identity, graph)
            for old in [k for k in self._anns if k[0] == brain_id and k[2] == model]:
                if old != key:
                    del self._anns[old]  # a previous brain under this id
            self._anns[key] = graph
        if due is not None:
            self._save_ann(*due)  # outside the lock: seconds at a million vectors
        return graph

    @staticmethod
    def _build_ann(matrix: VectorMatrix) -> AnnIndex:
        seq = matrix.seq  # before the rows: a catch-up meanwhile is applied again, harmlessly
        _, sample = matrix.sample(SAMPLE)
        return AnnIndex.build(seq, matrix.dims, sample, matrix.live_blocks())

    def _build_ann_later(
        self, identity: MatrixIdentity, key: tuple[int, str, str], matrix: VectorMatrix
    ) -> None:
        try:
            graph = self._build_ann(matrix)
            with self._ann_lock:
                known = self._anns.get(key)
                if known is None or known.worn or known.seq < graph.seq:
                    self._anns[key] = graph  # the next search catches it up
            self._save_ann(identity, graph)
        except Exception:  # a closed store or a vanished brain: the exact scan keeps answering
            log.warning("building the vector graph of brain %s failed", key[0], exc_info=True)
        finally:
            with self._ann_lock:
                self._ann_building.discard(key)

    def _save_ann(self, identity: MatrixIdentity, graph: AnnIndex) -> None:
        path = ann_path(self.folder, identity.brain_id, identity.model)
        try:
            vector_ann.save(path, identity, graph)
        except OSError:  # a read-only or full disk: the graph in memory still serves
            log.warning("could not save the vector graph to %s", path, exc_info=True)

    def _save_matrix(self, identity: MatrixIdentity, matrix: VectorMatrix) -> None:
        path = matrix_path(self.folder, identity.brain_id, identity.model)
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

    # both legs ----------------------------------------------------------------------------
    def _chunk_count(self, brain_id: int) -> int:
        return int(self.db.scalar("SELECT count(*) FROM chunks WHERE brain_id = ?", (brain_id,)))

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
