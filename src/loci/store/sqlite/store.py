"""The embedded default store: one SQLite file (WAL, FTS5) plus an in-memory vector matrix."""

from __future__ import annotations

import functools
import json
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import fields
from pathlib import Path
from typing import Any, TypeVar

import apsw
import numpy as np
import numpy.typing as npt

from loci.embed.base import Vectors
from loci.errors import Conflict, InvalidInput, NotFound, StoreError
from loci.models import (
    Brain,
    BrainStats,
    Chunk,
    Document,
    DocumentKind,
    DocumentStatus,
    IndexedChunk,
    Job,
    NewDocument,
    SearchFilters,
    Visibility,
)
from loci.store import lexical_files
from loci.store.lexical_files import IndexIdentity, index_path
from loci.store.lexical_index import K1, SEGMENT_ROWS, B, IndexRow, LexicalIndex
from loci.store.sqlite.accounts import SqliteAccounts
from loci.store.sqlite.connection import Database, Row
from loci.store.sqlite.conversations import SqliteConversations
from loci.store.sqlite.graph import SqliteGraph
from loci.store.sqlite.integrations import SqliteIntegrations
from loci.store.sqlite.migrations import migrate
from loci.store.vector_matrix import VectorMatrix

log = logging.getLogger(__name__)

NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
# bm25() weights per FTS column: brain token, title, heading path, body.
FTS_WEIGHTS = (0.0, 2.0, 1.0, 1.0)
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
# From this many vectors a brain's vector scan goes through an int8 copy first (see
# vector_matrix.py): 4x fewer bytes to read, then exact float32 scores for the best candidates.
VECTOR_INT8_MIN_CHUNKS = 50_000
# Vectors that changed since the matrix was built are scanned exactly in a tail; it is folded
# into a rebuild once it holds more than this many rows or a twentieth of the matrix.
MATRIX_TAIL_ROWS = 5_000
# Segments added by catching up are small; merge them once this many pile up.
MAX_SMALL_SEGMENTS = 8


def fts_phrase(term: str) -> str:
    """One FTS5 string literal: double quotes inside are doubled, so no term is ever syntax."""
    return '"' + term.replace('"', '""') + '"'


T = TypeVar("T")
JSON_COLUMNS = frozenset({"tags", "metadata", "heading_path"})
TUPLE_COLUMNS = frozenset({"tags", "heading_path"})
RENAMED = {"idx": "index"}


@functools.cache
def _field_names(cls: type) -> frozenset[str]:  # model classes are hashable
    return frozenset(f.name for f in fields(cls))


def _from_row(cls: type[T], row: Row) -> T:
    """Build a model dataclass from a row: JSON columns decoded, lists as tuples, extra columns
    (such as `brain_id` on chunks) dropped."""
    names = _field_names(cls)  # type: ignore[arg-type]
    values: dict[str, Any] = {}
    for column, value in row.items():
        name = RENAMED.get(column, column)
        if name not in names:
            continue
        if column in JSON_COLUMNS:
            value = json.loads(value)
            if column in TUPLE_COLUMNS:
                value = tuple(value)
        values[name] = value
    return cls(**values)


def _brain(row: Row) -> Brain:
    return _from_row(Brain, row)


def _document(row: Row) -> Document:
    return _from_row(Document, row)


def _chunk(row: Row) -> Chunk:
    return _from_row(Chunk, row)


def _job(row: Row) -> Job:
    return _from_row(Job, row)


def _index_weights() -> tuple[int, int, int]:
    title, headings, body = (int(w) for w in FTS_WEIGHTS[1:])
    return title, headings, body


def filter_sql(filters: SearchFilters) -> tuple[str, list[Any]]:
    """SQL conditions on documents `d` for the given filters, with their parameters."""
    clauses: list[str] = []
    params: list[Any] = []
    if filters.name:
        if any(ch in filters.name for ch in "*?["):
            clauses.append("(d.name GLOB ? OR coalesce(d.title, '') GLOB ?)")
        else:
            clauses.append("(d.name = ? OR d.title = ?)")
        params += [filters.name, filters.name]
    if filters.kinds:
        clauses.append(f"d.kind IN ({','.join('?' * len(filters.kinds))})")
        params += list(filters.kinds)
    for tag in filters.tags:
        clauses.append("EXISTS (SELECT 1 FROM json_each(d.tags) WHERE value = ?)")
        params.append(tag)
    if filters.created_after:
        clauses.append("d.created_at >= ?")
        params.append(filters.created_after)
    if filters.created_before:
        clauses.append("d.created_at < ?")
        params.append(filters.created_before)
    if filters.document_ids:
        clauses.append(f"d.id IN ({','.join('?' * len(filters.document_ids))})")
        params += list(filters.document_ids)
    return (" AND " + " AND ".join(clauses)) if clauses else "", params


class SqliteStore:
    def __init__(
        self,
        path: Path,
        *,
        lexical_index_min_chunks: int | None = LEXICAL_INDEX_MIN_CHUNKS,
        vector_int8_min_chunks: int | None = VECTOR_INT8_MIN_CHUNKS,
        bm25: tuple[float, float] = (K1, B),
    ) -> None:
        """Brain sizes from which the BM25 leg runs on the in-memory index and the vector leg
        scans an int8 copy first; None keeps the plain path (FTS5's bm25(), float32 scan).
        `bm25` is the index's (k1, b)."""
        self.db = Database(path)
        migrate(self.db)
        self.accounts = SqliteAccounts(self.db)
        self.conversations = SqliteConversations(self.db)
        self.graph = SqliteGraph(self.db, self._delete_rows, self._queue_job)
        self.integrations = SqliteIntegrations(self.db)
        self._matrices: dict[tuple[int, str], VectorMatrix] = {}
        self._matrix_lock = threading.Lock()
        self.lexical_index_min_chunks = lexical_index_min_chunks
        self.vector_int8_min_chunks = vector_int8_min_chunks
        self._lexical: dict[int, LexicalIndex] = {}
        # The short lock guards the two collections; a brain's own lock is held while its
        # index is built or caught up, so a build never blocks another brain's searches.
        self._lexical_lock = threading.Lock()
        self._brain_locks: dict[int, threading.Lock] = {}
        self._building: set[int] = set()  # brains whose BM25 index a background thread builds
        self._sizes: dict[int, tuple[int, int]] = {}  # brain -> (generation, chunk count)
        self.bm25 = bm25
        self._index_dir = path.parent / "index"  # saved BM25 indexes (lexical_files.py)
        self._unsaved: dict[int, int] = {}  # brain -> chunks changed since its index was saved

    # brains -------------------------------------------------------------------------------
    def ensure_brain(self, name: str) -> Brain:
        row = self.db.row("SELECT * FROM brains WHERE name = ?", (name,))
        if row is None:
            with self.db.write() as conn:
                conn.execute("INSERT OR IGNORE INTO brains(name) VALUES (?)", (name,))
            row = self.db.row("SELECT * FROM brains WHERE name = ?", (name,))
        assert row is not None
        return _brain(row)

    def get_brain(self, name: str) -> Brain:
        row = self.db.row("SELECT * FROM brains WHERE name = ?", (name,))
        if row is None:
            raise NotFound(f"no brain named {name!r}")
        return _brain(row)

    def get_brain_by_id(self, brain_id: int) -> Brain:
        row = self.db.row("SELECT * FROM brains WHERE id = ?", (brain_id,))
        if row is None:
            raise NotFound(f"no brain with id {brain_id}")
        return _brain(row)

    def list_brains(self) -> list[Brain]:
        return [_brain(r) for r in self.db.rows("SELECT * FROM brains ORDER BY name")]

    def create_brain(self, name: str, visibility: Visibility, owner_id: int | None) -> Brain:
        try:
            with self.db.write() as conn:
                conn.execute(
                    "INSERT INTO brains(name, visibility) VALUES (?, ?)", (name, visibility)
                )
                if owner_id is not None:
                    conn.execute(
                        "INSERT INTO brain_members(brain_id, user_id, role) VALUES (?,?,'owner')",
                        (conn.last_insert_rowid(), owner_id),
                    )
        except apsw.ConstraintError:
            raise Conflict(f"a brain named {name!r} already exists") from None
        return self.get_brain(name)

    def update_brain(
        self, brain_id: int, *, name: str | None = None, visibility: Visibility | None = None
    ) -> Brain:
        try:
            with self.db.write() as conn:
                if name is not None:
                    conn.execute("UPDATE brains SET name = ? WHERE id = ?", (name, brain_id))
                if visibility is not None:
                    conn.execute(
                        "UPDATE brains SET visibility = ? WHERE id = ?", (visibility, brain_id)
                    )
        except apsw.ConstraintError:
            raise Conflict(f"a brain named {name!r} already exists") from None
        return self.get_brain_by_id(brain_id)

    def delete_brain(self, brain_id: int) -> list[str]:
        """Delete a brain and everything in it; returns the content hashes no document uses
        any more, whose blobs the caller may delete."""
        with self.db.write() as conn:
            hashes = [
                r[0]
                for r in conn.execute(
                    "SELECT DISTINCT content_hash FROM documents WHERE brain_id = ?", (brain_id,)
                )
            ]
            ids = [
                r[0] for r in conn.execute("SELECT id FROM chunks WHERE brain_id = ?", (brain_id,))
            ]
            conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(i,) for i in ids])
            conn.execute("DELETE FROM brains WHERE id = ?", (brain_id,))  # cascades
            conn.execute(
                "DELETE FROM vectors WHERE NOT EXISTS"
                " (SELECT 1 FROM chunks WHERE chunks.embed_hash = vectors.hash)"
            )
            unused = [
                h
                for h in hashes
                if not conn.execute(
                    "SELECT 1 FROM documents WHERE content_hash = ? LIMIT 1", (h,)
                ).fetchall()
            ]
        with self._matrix_lock:
            for key in [k for k in self._matrices if k[0] == brain_id]:
                del self._matrices[key]
        with self._lexical_lock:
            self._lexical.pop(brain_id, None)
        index_path(self._index_dir, brain_id).unlink(missing_ok=True)  # derived: nothing lost
        return unused

    def brain_language(self, brain_id: int) -> str:
        self.get_brain_by_id(brain_id)
        return "english"  # FTS5's porter tokenizer: one language for every brain

    def set_brain_language(self, brain_id: int, language: str) -> None:
        self.get_brain_by_id(brain_id)
        if language != "english":
            raise InvalidInput(
                f"the SQLite backend stems English only (FTS5's porter tokenizer), not "
                f"{language!r}; the PostgreSQL backend takes any text-search language it has"
            )

    def set_brain_embedder(self, brain_id: int, model: str | None, dims: int | None) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE brains SET embedder_model = ?, embedder_dims = ? WHERE id = ?",
                (model, dims, brain_id),
            )

    # documents ----------------------------------------------------------------------------
    def find_by_hash(self, brain_id: int, content_hash: str) -> Document | None:
        row = self.db.row(
            "SELECT * FROM documents WHERE brain_id = ? AND content_hash = ?",
            (brain_id, content_hash),
        )
        return _document(row) if row else None

    def create_document(self, brain_id: int, new: NewDocument, job_kind: str) -> Document:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO documents(brain_id, kind, name, title, source_url, mime_type,"
                " size_bytes, content_hash, status, tags, metadata)"
                " VALUES (?,?,?,?,?,?,?,?, 'processing', ?, ?)",
                (
                    brain_id,
                    new.kind,
                    new.name,
                    new.title,
                    new.source_url,
                    new.mime_type,
                    new.size_bytes,
                    new.content_hash,
                    json.dumps(list(new.tags)),
                    json.dumps(new.metadata, default=str),
                ),
            )
            document_id = conn.last_insert_rowid()
            conn.execute(
                "INSERT INTO jobs(brain_id, document_id, kind) VALUES (?,?,?)",
                (brain_id, document_id, job_kind),
            )
        return self.get_document(brain_id, document_id)

    def get_document(self, brain_id: int, document_id: int) -> Document:
        row = self.db.row(
            "SELECT * FROM documents WHERE id = ? AND brain_id = ?", (document_id, brain_id)
        )
        if row is None:
            raise NotFound(f"no document {document_id} in this brain")
        return _document(row)

    def list_documents(
        self,
        brain_id: int,
        *,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        tag: str | None = None,
    ) -> list[Document]:
        sql = "SELECT * FROM documents d WHERE d.brain_id = ?"
        params: list[Any] = [brain_id]
        if status:
            sql += " AND d.status = ?"
            params.append(status)
        if kind:
            sql += " AND d.kind = ?"
            params.append(kind)
        if tag:
            sql += " AND EXISTS (SELECT 1 FROM json_each(d.tags) WHERE value = ?)"
            params.append(tag)
        sql += " ORDER BY d.id"
        return [_document(r) for r in self.db.rows(sql, tuple(params))]

    def delete_document(self, brain_id: int, document_id: int) -> bool:
        doc = self.get_document(brain_id, document_id)
        with self.db.write() as conn:
            self._delete_rows(conn, brain_id, document_id)
            others: Any = conn.execute(
                "SELECT count(*) FROM documents WHERE content_hash = ?", (doc.content_hash,)
            ).fetchall()[0][0]
        return bool(others == 0)

    def _delete_rows(self, conn: Any, brain_id: int, document_id: int) -> None:
        """A document's row, index and jobs, inside the caller's transaction (the graph store
        deletes a page and its indexed document in one)."""
        hashes = [
            r[0]
            for r in conn.execute(
                "SELECT DISTINCT embed_hash FROM chunks WHERE document_id = ?", (document_id,)
            )
        ]
        self._drop_index(conn, document_id)
        # Vectors are shared by hash; forget those no remaining chunk points at.
        conn.executemany(
            "DELETE FROM vectors WHERE hash = ?"
            " AND NOT EXISTS (SELECT 1 FROM chunks WHERE embed_hash = ?)",
            [(h, h) for h in hashes],
        )
        conn.execute("DELETE FROM jobs WHERE document_id = ?", (document_id,))
        conn.execute("DELETE FROM documents WHERE id = ?", (document_id,))
        conn.execute("UPDATE brains SET generation = generation + 1 WHERE id = ?", (brain_id,))

    def requeue_document(self, brain_id: int, document_id: int, job_kind: str) -> Document:
        self.get_document(brain_id, document_id)
        with self.db.write() as conn:
            conn.execute(
                f"UPDATE documents SET status = 'processing', status_reason = NULL,"
                f" updated_at = {NOW} WHERE id = ?",
                (document_id,),
            )
            self._queue_job(conn, brain_id, document_id, job_kind)
        return self.get_document(brain_id, document_id)

    @staticmethod
    def _queue_job(conn: Any, brain_id: int, document_id: int, job_kind: str) -> None:
        """A fresh job for the document; finished or idle ones go (a running one finishes)."""
        conn.execute(
            "DELETE FROM jobs WHERE document_id = ? AND status IN ('queued','failed','done')",
            (document_id,),
        )
        conn.execute(
            "INSERT INTO jobs(brain_id, document_id, kind) VALUES (?,?,?)",
            (brain_id, document_id, job_kind),
        )

    def replace_content(
        self, brain_id: int, document_id: int, expected_hash: str, new: NewDocument, job_kind: str
    ) -> tuple[Document, bool]:
        """Point a document at new canonical bytes if it still has `expected_hash` (else
        `Conflict`), and queue its re-indexing; True when no document uses the old bytes."""
        old = self.get_document(brain_id, document_id)
        try:
            with self.db.write() as conn:
                current = conn.execute(
                    "SELECT content_hash FROM documents WHERE id = ?", (document_id,)
                ).fetchall()
                if not current or current[0][0] != expected_hash:
                    raise Conflict(
                        "the document changed since you read it; reload it and apply your edit"
                    )
                conn.execute(
                    f"UPDATE documents SET name = ?, title = ?, size_bytes = ?, content_hash = ?,"
                    f" tags = ?, metadata = ?, status = 'processing', status_reason = NULL,"
                    f" updated_at = {NOW} WHERE id = ?",
                    (
                        new.name,
                        new.title,
                        new.size_bytes,
                        new.content_hash,
                        json.dumps(list(new.tags)),
                        json.dumps(new.metadata),
                        document_id,
                    ),
                )
                self._queue_job(conn, brain_id, document_id, job_kind)
                others = conn.execute(
                    "SELECT count(*) FROM documents WHERE content_hash = ?", (old.content_hash,)
                ).fetchall()[0][0]
        except apsw.ConstraintError:
            raise Conflict(
                "another document in this brain already has exactly this content"
            ) from None
        return self.get_document(brain_id, document_id), others == 0

    def list_jobs(self, brain_id: int, limit: int = 100) -> list[Job]:
        rows = self.db.rows(
            "SELECT * FROM jobs WHERE brain_id = ? ORDER BY id DESC LIMIT ?", (brain_id, limit)
        )
        return [_job(r) for r in rows]

    def document_ids(self, brain_id: int | None = None) -> list[int]:
        if brain_id is None:
            return [r["id"] for r in self.db.rows("SELECT id FROM documents ORDER BY id")]
        return [
            r["id"]
            for r in self.db.rows(
                "SELECT id FROM documents WHERE brain_id = ? ORDER BY id", (brain_id,)
            )
        ]

    # derived index ------------------------------------------------------------------------
    def cached_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, Vectors]:
        found: dict[str, Vectors] = {}
        unique = list(dict.fromkeys(hashes))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ",".join("?" * len(batch))
            for row in self.db.conn.execute(
                f"SELECT hash, vector FROM vectors WHERE model = ? AND hash IN ({marks})",
                (model, *batch),
            ):
                found[row[0]] = np.frombuffer(row[1], dtype=np.float32)
        return found

    def _drop_index(self, conn: Any, document_id: int) -> None:
        ids = [
            r[0]
            for r in conn.execute("SELECT id FROM chunks WHERE document_id = ?", (document_id,))
        ]
        conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(i,) for i in ids])
        conn.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
        conn.execute("DELETE FROM document_texts WHERE document_id = ?", (document_id,))

    def replace_index(
        self,
        document_id: int,
        chunks: Sequence[IndexedChunk],
        new_vectors: dict[str, Vectors],
        model: str,
        text: str,
        title: str | None,
        status_reason: str | None,
    ) -> None:
        with self.db.write() as conn:
            doc = conn.execute(
                "SELECT brain_id, name, title FROM documents WHERE id = ?", (document_id,)
            ).fetchall()
            if not doc:
                raise NotFound(f"document {document_id} was deleted while it was processed")
            brain_id, name, old_title = doc[0]
            display_title = title or old_title or name
            self._drop_index(conn, document_id)
            conn.executemany(
                "INSERT OR IGNORE INTO vectors(model, hash, vector) VALUES (?,?,?)",
                [(model, h, np.asarray(v, np.float32).tobytes()) for h, v in new_vectors.items()],
            )
            brain_token = f"b{brain_id}"
            for item in chunks:
                c = item.draft
                conn.execute(
                    "INSERT INTO chunks(brain_id, document_id, idx, text, heading_path, page,"
                    " line_start, line_end, char_start, char_end, token_count, content_hash,"
                    " embed_hash, region, ocr_confidence) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                    (
                        brain_id,
                        document_id,
                        c.index,
                        c.text,
                        json.dumps(list(c.heading_path)),
                        c.page,
                        c.line_start,
                        c.line_end,
                        c.char_start,
                        c.char_end,
                        c.token_count,
                        c.content_hash,
                        item.embed_hash,
                        c.region,
                        c.ocr_confidence,
                    ),
                )
                conn.execute(
                    "INSERT INTO chunks_fts(rowid, brain, title, headings, body)"
                    " VALUES (?,?,?,?,?)",
                    (
                        conn.last_insert_rowid(),
                        brain_token,
                        display_title,
                        " / ".join(c.heading_path),
                        c.text,
                    ),
                )
            conn.execute(
                "INSERT INTO document_texts(document_id, text) VALUES (?, ?)", (document_id, text)
            )
            # If new content was queued while a job indexed this version (an edit racing the
            # worker: one job running, a newer one queued), these chunks serve searches
            # meanwhile but the document is not ready: the queued job indexes what it holds now.
            conn.execute(
                "UPDATE documents SET status = CASE WHEN EXISTS (SELECT 1 FROM jobs"
                " WHERE document_id = ?1 AND status = 'queued') AND EXISTS (SELECT 1 FROM jobs"
                " WHERE document_id = ?1 AND status = 'running') THEN 'processing' ELSE 'ready'"
                f" END, status_reason = ?2, chunk_count = ?3, title = coalesce(?4, title),"
                f" updated_at = {NOW} WHERE id = ?1",
                (document_id, status_reason, len(chunks), title),
            )
            conn.execute("UPDATE brains SET generation = generation + 1 WHERE id = ?", (brain_id,))

    def fail_document(self, document_id: int, reason: str) -> None:
        with self.db.write() as conn:
            conn.execute(
                f"UPDATE documents SET status = 'failed', status_reason = ?, updated_at = {NOW}"
                " WHERE id = ?",
                (reason, document_id),
            )

    def merge_document_metadata(self, document_id: int, values: dict[str, Any]) -> None:
        with self.db.write() as conn:
            rows = conn.execute(
                "SELECT metadata FROM documents WHERE id = ?", (document_id,)
            ).fetchall()
            if not rows:
                return
            metadata = json.loads(str(rows[0][0] or "{}"))
            metadata.update(values)
            conn.execute(
                "UPDATE documents SET metadata = ? WHERE id = ?",
                (json.dumps(metadata, default=str), document_id),
            )

    def document_text(self, brain_id: int, document_id: int) -> str | None:
        self.get_document(brain_id, document_id)
        value = self.db.scalar(
            "SELECT text FROM document_texts WHERE document_id = ?", (document_id,)
        )
        return str(value) if value is not None else None

    def list_chunks(self, brain_id: int, document_id: int) -> list[Chunk]:
        self.get_document(brain_id, document_id)
        return [
            _chunk(r)
            for r in self.db.rows(
                "SELECT * FROM chunks WHERE document_id = ? ORDER BY idx", (document_id,)
            )
        ]

    def clear_brain_index(self, brain_id: int) -> None:
        with self.db.write() as conn:
            for (document_id,) in conn.execute(
                "SELECT id FROM documents WHERE brain_id = ?", (brain_id,)
            ).fetchall():
                self._drop_index(conn, int(str(document_id)))
            conn.execute("UPDATE brains SET generation = generation + 1 WHERE id = ?", (brain_id,))

    # search legs --------------------------------------------------------------------------
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
                seq = self._log_position(brain_id)
                identity = self._index_identity(brain_id)
                path = index_path(self._index_dir, brain_id)
                save = False
                if index is None:
                    index = lexical_files.load(path, identity, self.db.tokenize, seq)
                if index is None:
                    index = LexicalIndex(self.db.tokenize, identity.weights, 0, *self.bm25)
                    index.add(self._index_rows(brain_id, None))
                    save = True
                elif seq > index.seq:
                    changed = self._changed_chunks(brain_id, index.seq, seq)
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
            if save:
                self._save_index(path, self._lexical[brain_id], identity)
            return self._lexical[brain_id]

    def _index_identity(self, brain_id: int) -> IndexIdentity:
        created = self.db.scalar("SELECT created_at FROM brains WHERE id = ?", (brain_id,))
        return IndexIdentity(brain_id, str(created), _index_weights(), *self.bm25)

    def _save_index(self, path: Path, index: LexicalIndex, identity: IndexIdentity) -> None:
        try:
            lexical_files.save(path, index, identity)
            self._unsaved[identity.brain_id] = 0
        except OSError:  # a read-only or full disk: the index in memory still serves
            log.warning("could not save the BM25 index to %s", path, exc_info=True)

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

    def _matrix(self, brain_id: int, model: str) -> VectorMatrix:
        """The brain's vectors of `model`, brought up to date from chunk_log."""
        key = (brain_id, model)
        with self._matrix_lock:
            with self.db.conn:  # one read snapshot: the log position and the rows agree
                seq = self._log_position(brain_id)
                cached = self._matrices.get(key)
                if cached is not None and cached.seq < seq:
                    changed = self._changed_chunks(brain_id, cached.seq, seq)
                    ids, blobs = self._vectors_of(brain_id, model, changed)
                    cached.update(seq, changed, ids, blobs)
                    # Fold the tail and masked rows in once they are a noticeable share.
                    if cached.stale_rows > max(MATRIX_TAIL_ROWS, len(cached.ids) // 20):
                        cached = None
                if cached is None or cached.seq != seq:
                    ids, blobs = self._vectors_of(brain_id, model, None)
                    dims = len(blobs[0]) // 4 if blobs else 1
                    self._matrices[key] = VectorMatrix.build(
                        seq, ids, blobs, dims, self.vector_int8_min_chunks
                    )
            return self._matrices[key]

    def _log_position(self, brain_id: int) -> int:
        return int(
            self.db.scalar(
                "SELECT coalesce(max(seq), 0) FROM chunk_log WHERE brain_id = ?", (brain_id,)
            )
        )

    def _changed_chunks(self, brain_id: int, after: int, upto: int) -> list[int]:
        return [
            int(r[0])
            for r in self.db.conn.execute(
                "SELECT DISTINCT chunk_id FROM chunk_log WHERE brain_id = ? AND seq > ?"
                " AND seq <= ?",
                (brain_id, after, upto),
            )
        ]

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
                    r["id"]: _document(r)
                    for r in self.db.rows(
                        f"SELECT * FROM documents WHERE id IN ({','.join('?' * len(doc_ids))})",
                        tuple(doc_ids),
                    )
                }
                if doc_ids
                else {}
            )
            for r in chunk_rows:
                found[r["id"]] = (_chunk(r), docs[r["document_id"]])
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

    # jobs ---------------------------------------------------------------------------------
    def claim_jobs(
        self,
        owner: str,
        lease_s: float,
        limit: int = 1,
        only_documents: Sequence[int] | None = None,
    ) -> list[Job]:
        now = time.time()
        scope, params = "", []
        if only_documents is not None:
            # One JSON parameter instead of one per id: batches can exceed SQLite's limit.
            scope = " AND document_id IN (SELECT value FROM json_each(?))"
            params = [json.dumps(list(only_documents))]
        with self.db.write() as conn:
            ids = [
                row[0]
                for row in conn.execute(
                    "SELECT id FROM jobs WHERE ((status = 'queued' AND run_after <= ?)"
                    f" OR (status = 'running' AND lease_expires < ?)){scope}"
                    " ORDER BY run_after, id LIMIT ?",
                    (now, now, *params, limit),
                )
            ]
            conn.executemany(
                f"UPDATE jobs SET status = 'running', attempts = attempts + 1, lease_owner = ?,"
                f" lease_expires = ?, updated_at = {NOW} WHERE id = ?",
                [(owner, now + lease_s, job_id) for job_id in ids],
            )
        if not ids:
            return []
        marks = ",".join("?" * len(ids))
        rows = self.db.rows(f"SELECT * FROM jobs WHERE id IN ({marks}) ORDER BY id", tuple(ids))
        return [_job(r) for r in rows]

    def _fenced_update(
        self, job: Job, owner: str, *statements: tuple[str, tuple[Any, ...]]
    ) -> bool:
        """Run `statements` only if `owner` still holds this attempt's lease (the fence)."""
        with self.db.write() as conn:
            held = conn.execute(
                "SELECT 1 FROM jobs WHERE id = ? AND status = 'running' AND lease_owner = ?"
                " AND attempts = ?",
                (job.id, owner, job.attempts),
            ).fetchall()
            if not held:
                return False
            for sql, params in statements:
                conn.execute(sql, params)
            return True

    def heartbeat(self, job: Job, owner: str, lease_s: float) -> bool:
        return self._fenced_update(
            job,
            owner,
            ("UPDATE jobs SET lease_expires = ? WHERE id = ?", (time.time() + lease_s, job.id)),
        )

    def finish_job(self, job: Job, owner: str) -> bool:
        return self._fenced_update(
            job,
            owner,
            (
                f"UPDATE jobs SET status = 'done', lease_owner = NULL, lease_expires = NULL,"
                f" updated_at = {NOW} WHERE id = ?",
                (job.id,),
            ),
        )

    def retry_job(self, job: Job, owner: str, error: str, delay_s: float) -> bool:
        return self._fenced_update(
            job,
            owner,
            (
                f"UPDATE jobs SET status = 'queued', last_error = ?, run_after = ?,"
                f" lease_owner = NULL, lease_expires = NULL, updated_at = {NOW} WHERE id = ?",
                (error, time.time() + delay_s, job.id),
            ),
        )

    def fail_job(self, job: Job, owner: str, error: str) -> bool:
        return self._fenced_update(
            job,
            owner,
            (
                f"UPDATE jobs SET status = 'failed', last_error = ?, lease_owner = NULL,"
                f" lease_expires = NULL, updated_at = {NOW} WHERE id = ?",
                (error, job.id),
            ),
            (
                f"UPDATE documents SET status = 'failed', status_reason = ?, updated_at = {NOW}"
                " WHERE id = ?",
                (error, job.document_id),
            ),
        )

    def pending_jobs(self, brain_id: int | None = None) -> int:
        sql = "SELECT count(*) FROM jobs WHERE status IN ('queued', 'running')"
        if brain_id is None:
            return int(self.db.scalar(sql))
        return int(self.db.scalar(sql + " AND brain_id = ?", (brain_id,)))

    # status -------------------------------------------------------------------------------
    def stats(self, brain_id: int) -> BrainStats:
        def grouped(sql: str) -> dict[str, int]:
            return {str(k): int(v) for k, v in self.db.conn.execute(sql, (brain_id,))}

        return BrainStats(
            documents_by_status=grouped(
                "SELECT status, count(*) FROM documents WHERE brain_id = ? GROUP BY status"
            ),
            documents_by_kind=grouped(
                "SELECT kind, count(*) FROM documents WHERE brain_id = ? GROUP BY kind"
            ),
            chunks=int(
                self.db.scalar("SELECT count(*) FROM chunks WHERE brain_id = ?", (brain_id,))
            ),
            jobs_by_status=grouped(
                "SELECT status, count(*) FROM jobs WHERE brain_id = ? GROUP BY status"
            ),
            bytes_stored=int(
                self.db.scalar(
                    "SELECT coalesce(sum(size_bytes), 0) FROM documents WHERE brain_id = ?",
                    (brain_id,),
                )
            ),
        )

    def database_bytes(self) -> int:
        # The WAL holds committed pages not yet checkpointed into the main file: count it too.
        files = (Path(f"{self.db.path}{suffix}") for suffix in ("", "-wal", "-shm"))
        return sum(f.stat().st_size for f in files if f.exists())

    def close(self) -> None:
        self.db.close()


def ensure_consistent(store: SqliteStore) -> None:
    """Raise StoreError if derived rows point at documents that no longer exist."""
    orphans = store.db.scalar(
        "SELECT count(*) FROM chunks c LEFT JOIN documents d ON d.id = c.document_id"
        " WHERE d.id IS NULL"
    )
    if orphans:
        raise StoreError(f"{orphans} chunks belong to no document")
