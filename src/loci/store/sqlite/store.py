"""The embedded default store: one SQLite file (WAL, FTS5) plus in-memory search indexes.

Brains, documents and the derived index are here, with what both backends share in
`loci.store.brain_tables`; the search legs are the store's `SearchIndex` (search_index.py), the
job queue is in `jobs.py`, row mapping in `rows.py`; accounts, conversations, the graph and
integrations are stores of their own beside it.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import apsw
import numpy as np

from loci.embed.base import Vectors
from loci.errors import NotFound, StoreError
from loci.models import (
    Brain,
    Chunk,
    DocumentTextScores,
    IndexedChunk,
    IndexWrite,
    Job,
    PassageContext,
    SearchFilters,
    TextCeiling,
)
from loci.store.brain_tables import CHUNK_COLUMNS, BrainTables, embed_progress
from loci.store.identity_tables import IdentityTables
from loci.store.job_order import TEXT_BYTES_PER_S
from loci.store.lexical_index import K1, B
from loci.store.schedule_tables import ScheduleTables
from loci.store.source_tables import SourceTables
from loci.store.sqlite.accounts import SqliteAccounts
from loci.store.sqlite.connection import Database
from loci.store.sqlite.conversations import SqliteConversations
from loci.store.sqlite.graph import SqliteGraph
from loci.store.sqlite.index import missing_vectors, write_index
from loci.store.sqlite.integrations import SqliteIntegrations
from loci.store.sqlite.jobs import JobQueue
from loci.store.sqlite.migrations import migrate
from loci.store.sqlite.oauth import SqliteOAuth
from loci.store.sqlite.rows import INSERT_FTS, NOW, ROWS, brain_of, chunk_of, fts_values, job_of
from loci.store.sqlite.search_index import (
    LEXICAL_INDEX_MIN_CHUNKS,
    VECTOR_ANN_MIN_CHUNKS,
    VECTOR_INT8_MIN_CHUNKS,
    SearchIndex,
)
from loci.store.stemming import check_stemmer, stemmer_for
from loci.store.vector_background import VectorBackground
from loci.store.watch_tables import WatchTables

log = logging.getLogger(__name__)
STOP_CHECK_S = 0.05  # how soon an idle worker waiting for jobs sees that it is to stop


class SqliteStore(JobQueue, BrainTables, SourceTables, ScheduleTables, WatchTables):
    now = NOW
    epoch = "((julianday('now') - 2440587.5) * 86400.0)"
    unique_error = apsw.ConstraintError
    model_rows = ROWS
    for_update = ""  # every write transaction holds the database's one write lock
    file_inode = "json_extract(metadata, '$.file.ino')"

    def __init__(
        self,
        path: Path,
        *,
        lexical_index_min_chunks: int | None = LEXICAL_INDEX_MIN_CHUNKS,
        vector_int8_min_chunks: int | None = VECTOR_INT8_MIN_CHUNKS,
        vector_ann_min_chunks: int | None = VECTOR_ANN_MIN_CHUNKS,
        bm25: tuple[float, float] = (K1, B),
    ) -> None:
        """The keywords configure the store's search engine (`SearchIndex`: brain sizes from
        which the BM25 leg runs on the in-memory index, the vector leg scans an int8 copy first
        and takes its candidates from an HNSW graph, None for the plain path; the index's BM25
        k1 and b)."""
        self.db = Database(path)
        migrate(self.db)
        # Set when this process queues a job, so its own worker starts at once (`wait_for_jobs`)
        # rather than at its next poll; another process's jobs are still found by polling.
        self._job_queued = threading.Event()
        self.accounts = SqliteAccounts(self.db)
        self.conversations = SqliteConversations(self.db)
        self.graph = SqliteGraph(self.db, self._delete_rows, self._queue_job)
        self.integrations = SqliteIntegrations(self.db)
        self.oauth = SqliteOAuth(self.db)
        self.identities = IdentityTables(self.db)
        self.search_index = SearchIndex(
            self.db,
            path.parent / "index",
            lexical_index_min_chunks=lexical_index_min_chunks,
            vector_int8_min_chunks=vector_int8_min_chunks,
            vector_ann_min_chunks=vector_ann_min_chunks,
            bm25=bm25,
        )

    @property
    def portable(self) -> Database:
        return self.db

    def _has_tag(self, tag: str) -> tuple[str, Any]:
        return "EXISTS (SELECT 1 FROM json_each(d.tags) WHERE value = ?)", tag

    # brains -------------------------------------------------------------------------------
    def ensure_brain(self, name: str) -> Brain:
        row = self.db.row("SELECT * FROM brains WHERE name = ?", (name,))
        if row is None:
            with self.db.write() as conn:
                conn.execute("INSERT OR IGNORE INTO brains(name) VALUES (?)", (name,))
            row = self.db.row("SELECT * FROM brains WHERE name = ?", (name,))
        assert row is not None
        return brain_of(row)

    def delete_brain(self, brain_id: int) -> list[str]:
        """Delete a brain and everything in it; returns the content hashes no document uses
        any more, whose blobs the caller may delete."""
        with self.db.write() as conn:
            hashes = [
                r[0]
                for r in conn.execute(
                    "SELECT content_hash FROM documents WHERE brain_id = ?"
                    " UNION SELECT content_hash FROM document_versions WHERE brain_id = ?",
                    (brain_id, brain_id),
                )
            ]
            ids = [
                r[0] for r in conn.execute("SELECT id FROM chunks WHERE brain_id = ?", (brain_id,))
            ]
            conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(i,) for i in ids])
            conn.execute("DELETE FROM brains WHERE id = ?", (brain_id,))  # cascades
            self.accounts.drop_brain_from_tokens(conn, brain_id, time.time())
            conn.execute(
                "DELETE FROM vectors WHERE NOT EXISTS"
                " (SELECT 1 FROM chunks WHERE chunks.embed_hash = vectors.hash)"
            )
        self.search_index.forget(brain_id)
        return self.unused(hashes)

    def brain_language(self, brain_id: int) -> str:
        self.get_brain_by_id(brain_id)
        return str(self.db.scalar("SELECT text_language FROM brains WHERE id = ?", (brain_id,)))

    def set_brain_language(self, brain_id: int, language: str) -> None:
        self.get_brain_by_id(brain_id)
        check_stemmer(language)
        with self.db.write() as conn:
            conn.execute("UPDATE brains SET text_language = ? WHERE id = ?", (language, brain_id))
            # The FTS rows hold the analysed text: every chunk's is made again.
            rows = conn.execute(
                "SELECT c.id, coalesce(nullif(d.title, ''), d.name), c.heading_path, c.text,"
                " c.language FROM chunks c JOIN documents d ON d.id = c.document_id"
                " WHERE c.brain_id = ?",
                (brain_id,),
            ).fetchall()
            conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(r[0],) for r in rows])
            conn.executemany(
                INSERT_FTS,
                [
                    fts_values(
                        int(str(cid)),
                        brain_id,
                        str(title),
                        " / ".join(json.loads(str(headings))),
                        str(text),
                        stemmer_for(
                            language, None if chunk_language is None else str(chunk_language)
                        ),
                    )
                    for cid, title, headings, text, chunk_language in rows
                ],
            )
            conn.execute("UPDATE brains SET generation = generation + 1 WHERE id = ?", (brain_id,))

    def set_brain_embedder(self, brain_id: int, model: str | None, dims: int | None) -> None:
        with self.db.write() as conn:
            conn.execute(
                "UPDATE brains SET embedder_model = ?, embedder_dims = ? WHERE id = ?",
                (model, dims, brain_id),
            )

    # documents ----------------------------------------------------------------------------
    def _delete_rows(self, conn: Any, brain_id: int, document_id: int) -> None:
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

    def _queue_jobs(
        self, conn: Any, brain_id: int, document_ids: Sequence[int], job_kind: str
    ) -> None:
        """A fresh job for each document; finished or idle ones go (a running one finishes)."""
        marks = ", ".join("?" for _ in document_ids)
        conn.execute(
            f"DELETE FROM jobs WHERE document_id IN ({marks})"
            " AND status IN ('queued','failed','done')",
            tuple(document_ids),
        )
        # Its place in the queue: now plus the text stage's cost, by the file's size (job_order).
        conn.execute(
            "INSERT INTO jobs(brain_id, document_id, kind, priority)"
            f" SELECT ?, id, ?, ? + size_bytes / ? FROM documents WHERE id IN ({marks})"
            " ORDER BY id",
            (brain_id, job_kind, time.time(), TEXT_BYTES_PER_S, *document_ids),
        )
        # Set inside the transaction: a worker woken now claims with BEGIN IMMEDIATE, which
        # waits for this transaction to commit, so it finds the job.
        self._job_queued.set()

    def wait_for_jobs(self, timeout_s: float, stop: threading.Event | None = None) -> bool:
        """Sleep until this process queues a job, `stop` is set or `timeout_s` passes; True
        if a job woke it."""
        deadline = time.monotonic() + timeout_s
        while not (stop is not None and stop.is_set()):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return False
            if self._job_queued.wait(min(remaining, STOP_CHECK_S)):
                self._job_queued.clear()
                return True
        return False

    def list_jobs(self, brain_id: int, limit: int = 100) -> list[Job]:
        rows = self.db.rows(
            "SELECT * FROM jobs WHERE brain_id = ? ORDER BY id DESC LIMIT ?", (brain_id, limit)
        )
        return [job_of(r) for r in rows]

    # search legs --------------------------------------------------------------------------
    def text_search(
        self,
        brain_id: int,
        terms: Sequence[str],
        limit: int,
        filters: SearchFilters,
        languages: Sequence[str] = (),
    ) -> list[tuple[int, float]]:
        return self.search_index.text_search(brain_id, terms, limit, filters, languages)

    def text_ceiling(
        self, brain_id: int, terms: Sequence[str], languages: Sequence[str] = ()
    ) -> TextCeiling | None:
        return self.search_index.text_ceiling(brain_id, terms, languages)

    def document_text_scores(
        self,
        brain_id: int,
        terms: Sequence[str],
        chunk_ids: Sequence[int],
        languages: Sequence[str] = (),
    ) -> DocumentTextScores | None:
        return self.search_index.document_text_scores(brain_id, terms, chunk_ids, languages)

    def vector_search(
        self, brain_id: int, model: str, query: Vectors, limit: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        return self.search_index.vector_search(brain_id, model, query, limit, filters)

    def vector_background(self, brain_id: int, model: str) -> VectorBackground | None:
        return self.search_index.vector_background(brain_id, model)

    def passage_contexts(
        self, brain_id: int, model: str, query: Vectors, chunk_ids: Sequence[int]
    ) -> dict[int, PassageContext]:
        return self.search_index.passage_contexts(brain_id, model, query, chunk_ids)

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
    ) -> int:
        write = IndexWrite(document_id, chunks, text, title, status_reason)
        with self.db.write() as conn:
            missing = write_index(conn, write, new_vectors, model)
        assert missing is not None  # a write without a content hash is always made
        return missing

    def replace_indexes(self, writes: Sequence[IndexWrite], model: str) -> list[int | None]:
        with self.db.write() as conn:  # one commit for the batch; any NotFound undoes it all
            return [write_index(conn, write, {}, model) for write in writes]

    def chunks_without_vectors(self, document_id: int, model: str) -> list[Chunk]:
        rows = self.db.rows(
            f"SELECT {CHUNK_COLUMNS} FROM chunks c WHERE c.document_id = ? AND NOT EXISTS"
            " (SELECT 1 FROM vectors v WHERE v.model = ? AND v.hash = c.embed_hash) ORDER BY idx",
            (document_id, model),
        )
        return [chunk_of(r) for r in rows]

    def vectorless(self, chunk_ids: Sequence[int], model: str) -> set[int]:
        if not chunk_ids:
            return set()
        return {
            int(r[0])
            for r in self.db.conn.execute(
                "SELECT c.id FROM chunks c WHERE c.id IN (SELECT value FROM json_each(?))"
                " AND NOT EXISTS (SELECT 1 FROM vectors v WHERE v.model = ? AND v.hash ="
                " c.embed_hash)",
                (json.dumps(list(chunk_ids)), model),
            )
        }

    def add_vectors(self, document_id: int, model: str, vectors: dict[str, Vectors]) -> int:
        with self.db.write() as conn:
            doc = conn.execute(
                "SELECT brain_id, progress FROM documents WHERE id = ?", (document_id,)
            ).fetchall()
            if not doc:
                raise NotFound(f"document {document_id} was deleted while it was processed")
            brain_id, progress = doc[0]
            conn.executemany(
                "INSERT OR IGNORE INTO vectors(model, hash, vector) VALUES (?,?,?)",
                [(model, h, np.asarray(v, np.float32).tobytes()) for h, v in vectors.items()],
            )
            # The vector matrices catch up from the log; the text index skips these entries.
            conn.execute(
                "INSERT INTO chunk_log(brain_id, chunk_id, vectors_only) SELECT brain_id, id, 1"
                " FROM chunks WHERE document_id = ? AND embed_hash IN"
                " (SELECT value FROM json_each(?))",
                (document_id, json.dumps(list(vectors))),
            )
            missing = missing_vectors(conn, document_id, model)
            if missing:
                conn.execute(
                    "UPDATE documents SET progress = ? WHERE id = ? AND status = 'processing'",
                    (embed_progress(missing, progress), document_id),
                )
            else:  # ready, unless an edit queued meanwhile will index it again
                conn.execute(
                    "UPDATE documents SET status = CASE WHEN status = 'processing' AND EXISTS"
                    " (SELECT 1 FROM jobs WHERE document_id = ?1 AND status = 'queued')"
                    " THEN 'processing' WHEN status = 'processing' THEN 'ready' ELSE status END,"
                    f" vectors_pending = 0, progress = NULL, updated_at = {NOW} WHERE id = ?1",
                    (document_id,),
                )
            return missing

    def clear_brain_index(self, brain_id: int) -> None:
        with self.db.write() as conn:
            for (document_id,) in conn.execute(
                "SELECT id FROM documents WHERE brain_id = ?", (brain_id,)
            ).fetchall():
                self._drop_index(conn, int(str(document_id)))
            conn.execute("UPDATE brains SET generation = generation + 1 WHERE id = ?", (brain_id,))

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
