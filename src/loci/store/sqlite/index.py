"""Writing a document's derived index on SQLite: chunks with their FTS5 rows, vectors and
text, swapped in the caller's write transaction (PostgreSQL's is `store/postgres/index.py`)."""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from loci.context_line import index_title
from loci.embed.base import Vectors
from loci.errors import NotFound
from loci.models import IndexWrite
from loci.store.brain_tables import embed_progress
from loci.store.sqlite import kept_chunks
from loci.store.sqlite.rows import INSERT_FTS, NOW, fts_values
from loci.store.stemming import document_language, stemmer_for


def write_index(
    conn: Any, write: IndexWrite, new_vectors: dict[str, Vectors], model: str
) -> int | None:
    """The body of `SqliteStore.replace_index(es)`, in the caller's write transaction; None
    when the document's content is no longer the write's (nothing written)."""
    document_id, chunks, text = write.document_id, write.chunks, write.text
    title, status_reason = write.title, write.status_reason
    doc = conn.execute(
        "SELECT d.brain_id, d.name, d.title, d.kind, b.text_language, d.content_hash"
        " FROM documents d JOIN brains b ON b.id = d.brain_id WHERE d.id = ?",
        (document_id,),
    ).fetchall()
    if not doc:
        raise NotFound(f"document {document_id} was deleted while it was processed")
    brain_id, name, old_title, kind, brain_language, content_hash = doc[0]
    if write.content_hash is not None and write.content_hash != content_hash:
        return None
    display_title = index_title(
        title or (str(old_title) if old_title else None), str(name), str(kind)
    )
    kept = kept_chunks.keep(conn, write)
    conn.executemany("DELETE FROM chunks_fts WHERE rowid = ?", [(i,) for i in kept.removed])
    conn.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in kept.removed])
    kept_chunks.move(conn, kept.moved)
    conn.execute("DELETE FROM document_texts WHERE document_id = ?", (document_id,))
    conn.executemany(
        "INSERT OR IGNORE INTO vectors(model, hash, vector) VALUES (?,?,?)",
        [(model, h, np.asarray(v, np.float32).tobytes()) for h, v in new_vectors.items()],
    )
    for _, item in kept.new:
        c = item.draft
        conn.execute(
            "INSERT INTO chunks(brain_id, document_id, idx, text, heading_path, page,"
            " line_start, line_end, char_start, char_end, token_count, content_hash,"
            " embed_hash, region, ocr_confidence, time_start, time_end, language)"
            " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                brain_id,
                document_id,
                c.index,
                c.text,
                json.dumps(list(c.heading_path)),
                *c.location.span_columns(),
                c.token_count,
                c.content_hash,
                item.embed_hash,
                *c.location.reading_columns(),
                item.language,
            ),
        )
        conn.execute(
            INSERT_FTS,
            fts_values(
                conn.last_insert_rowid(),
                brain_id,
                str(display_title),
                " / ".join(c.heading_path),
                c.text,
                stemmer_for(str(brain_language), item.language),
            ),
        )
    conn.execute("INSERT INTO document_texts(document_id, text) VALUES (?, ?)", (document_id, text))
    missing = missing_vectors(conn, document_id, model)
    # If new content was queued while a job indexed this version (an edit racing the
    # worker: one job running, a newer one queued), these chunks serve searches
    # meanwhile but the document is not ready: the queued job indexes what it holds now.
    # Chunks without a vector make it `vectors_pending` until the vectors stage is done.
    conn.execute(
        "UPDATE documents SET status = CASE WHEN ?5 > 0 OR (EXISTS (SELECT 1 FROM jobs"
        " WHERE document_id = ?1 AND status = 'queued') AND EXISTS (SELECT 1 FROM jobs"
        " WHERE document_id = ?1 AND status = 'running')) THEN 'processing' ELSE 'ready'"
        " END, status_reason = ?2, chunk_count = ?3, title = coalesce(?4, title),"
        f" vectors_pending = ?5 > 0, progress = ?6, language = ?7, updated_at = {NOW}"
        " WHERE id = ?1",
        (
            document_id,
            status_reason,
            len(chunks),
            title,
            missing,
            embed_progress(missing),
            document_language(chunks),
        ),
    )
    conn.execute("UPDATE brains SET generation = generation + 1 WHERE id = ?", (brain_id,))
    return missing


def missing_vectors(conn: Any, document_id: int, model: str) -> int:
    """How many of the document's chunks have no vector of `model` (inside a write)."""
    rows = conn.execute(
        "SELECT count(*) FROM chunks c WHERE c.document_id = ? AND NOT EXISTS"
        " (SELECT 1 FROM vectors v WHERE v.model = ? AND v.hash = c.embed_hash)",
        (document_id, model),
    ).fetchall()
    return int(rows[0][0])
