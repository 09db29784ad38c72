"""Writing a document's derived index on PostgreSQL: chunks with their embeddings, postings,
text — swapped in one transaction, as the SQLite store does."""

from __future__ import annotations

import json
from collections.abc import Sequence
from itertools import groupby
from typing import Any

import numpy as np

from loci.context_line import index_title
from loci.embed.base import Vectors
from loci.errors import NotFound
from loci.models import IndexedChunk, IndexWrite
from loci.store.brain_tables import embed_progress
from loci.store.document_terms import PassageText
from loci.store.postgres import document_lexical, kept_chunks, lexical
from loci.store.postgres.connection import Cursor
from loci.store.stemming import document_language, stemmer_for


def as_array(value: Any) -> Vectors:
    """A stored embedding as float32 NumPy (pgvector hands back a `Vector` or an ndarray)."""
    to_numpy = getattr(value, "to_numpy", None)
    return np.asarray(to_numpy() if to_numpy else value, np.float32)


def write_index(
    cur: Cursor,
    document_id: int,
    chunks: Sequence[IndexedChunk],
    new_vectors: dict[str, Vectors],
    model: str,
    text: str,
    title: str | None,
    status_reason: str | None,
) -> int:
    """The body of `PostgresStore.replace_index`, in the caller's (system-scoped) transaction;
    returns how many of the chunks have no vector yet."""
    write = IndexWrite(document_id, chunks, text, title, status_reason)
    missing = write_indexes(cur, [write], model, new_vectors)[0]
    assert missing is not None  # a write without a content hash is always made
    return missing


def write_indexes(
    cur: Cursor,
    writes: Sequence[IndexWrite],
    model: str,
    new_vectors: dict[str, Vectors] | None = None,
) -> list[int | None]:
    """The body of `PostgresStore.replace_indexes`: every document's index swapped in the
    caller's (system-scoped) transaction, each statement once for all the documents of a
    brain (its cost is per statement as much as per row). Returns, per write, how many of its
    chunks have no vector yet, None for a write whose document has other content by now
    (not made). NotFound if any document was deleted meanwhile."""
    ids = [w.document_id for w in writes]
    cur.execute(
        "SELECT d.id, d.brain_id, d.name, d.title, d.kind, d.content_hash, b.text_language"
        " FROM documents d"
        " JOIN brains b ON b.id = d.brain_id WHERE d.id = ANY(%s) ORDER BY d.id FOR UPDATE OF d",
        (ids,),
    )
    docs = {int(r["id"]): r for r in cur.fetchall()}
    for document_id in ids:
        if document_id not in docs:
            raise NotFound(f"document {document_id} was deleted while it was processed")
    by_brain: dict[int, list[IndexWrite]] = {}
    for write in writes:
        doc = docs[write.document_id]
        if write.content_hash is None or write.content_hash == doc["content_hash"]:
            by_brain.setdefault(int(doc["brain_id"]), []).append(write)
    missing: dict[int, int] = {}
    for brain_id, group in sorted(by_brain.items()):
        missing |= _write_brain(cur, brain_id, group, docs, model, dict(new_vectors or {}))
    return [missing.get(w.document_id) for w in writes]


def _write_brain(
    cur: Cursor,
    brain_id: int,
    writes: Sequence[IndexWrite],
    docs: dict[int, Any],
    model: str,
    vectors: dict[str, Any],
) -> dict[int, int]:
    """`write_indexes` for one brain's documents."""
    ids = [w.document_id for w in writes]
    cur.execute("SELECT set_config('loci.brain_id', %s, true)", (str(brain_id),))
    kept = kept_chunks.keep(cur, writes, model, set(vectors))
    reused = list({c.embed_hash for _, c in kept.new} - set(vectors))
    if reused:  # read before the documents' own old chunks go
        cur.execute(
            "SELECT DISTINCT ON (embed_hash) embed_hash, embedding FROM chunks"
            " WHERE embed_model = %s AND embed_hash = ANY(%s) AND embedding IS NOT NULL",
            (model, reused),
        )
        vectors.update({r["embed_hash"]: r["embedding"] for r in cur.fetchall()})
    lexical.lock_stats(cur, brain_id)
    if kept.removed:
        lexical.remove_postings(cur, brain_id, "c.id = ANY(%s)", (kept.removed,))
        cur.execute("DELETE FROM chunks WHERE id = ANY(%s)", (kept.removed,))
    kept_chunks.move(cur, kept.moved)
    cur.execute("DELETE FROM document_texts WHERE document_id = ANY(%s)", (ids,))
    brain_language = str(docs[ids[0]]["text_language"])
    titles = {
        w.document_id: str(
            index_title(
                w.title or docs[w.document_id]["title"],
                str(docs[w.document_id]["name"]),
                str(docs[w.document_id]["kind"]),
            )
        )
        for w in writes
    }
    terms: list[tuple[Any, int]] = []
    for document_id, group in groupby(kept.new, key=lambda item: item[0]):
        terms += lexical.chunk_terms(
            titles[document_id],
            [
                (
                    " / ".join(c.draft.heading_path),
                    c.draft.text,
                    stemmer_for(brain_language, c.language),
                )
                for _, c in group
            ],
        )
    documents: list[tuple[int, str, list[PassageText]]] = [
        (
            w.document_id,
            titles[w.document_id],
            [
                PassageText(
                    c.draft.text, c.draft.location.char_start or 0,
                    c.draft.location.char_end or 0, stemmer_for(brain_language, c.language),
                )
                for c in w.chunks
            ],
        )
        for w in writes
    ]  # fmt: skip
    chunk_ids = insert_chunks(cur, brain_id, kept.new, vectors, model, terms)
    lexical.add_postings(cur, brain_id, chunk_ids, terms)
    document_lexical.replace_documents(cur, brain_id, documents)
    cur.execute(
        "INSERT INTO document_texts(document_id, brain_id, text)"
        " SELECT id, %s, text FROM unnest(%s::bigint[], %s::text[]) AS x(id, text)",
        (brain_id, [w.document_id for w in writes], [w.text for w in writes]),
    )
    missing = dict.fromkeys(ids, 0) | kept.unembedded
    for document_id, chunk in kept.new:
        missing[document_id] += chunk.embed_hash not in vectors
    # If new content was queued while a job was indexing this version (an edit racing the
    # worker: one job running, a newer one queued), these chunks serve searches meanwhile but
    # the document is not ready: the queued job indexes what it holds now. Chunks without a
    # vector make it `vectors_pending` until the vectors stage is done.
    cur.execute(
        "UPDATE documents d SET status = CASE WHEN x.missing > 0 OR (EXISTS (SELECT 1 FROM jobs"
        " WHERE document_id = d.id AND status = 'queued') AND EXISTS (SELECT 1 FROM jobs"
        " WHERE document_id = d.id AND status = 'running')) THEN 'processing' ELSE 'ready'"
        " END, status_reason = x.reason, chunk_count = x.count, language = x.language,"
        " title = coalesce(x.title, d.title), vectors_pending = x.missing > 0,"
        " progress = x.progress, updated_at = loci_now()"
        " FROM unnest(%s::bigint[], %s::text[], %s::int[], %s::text[], %s::int[], %s::jsonb[],"
        " %s::text[]) AS x(id, reason, count, title, missing, progress, language)"
        " WHERE d.id = x.id",
        (
            [w.document_id for w in writes],
            [w.status_reason for w in writes],
            [len(w.chunks) for w in writes],
            [w.title for w in writes],
            [missing[w.document_id] for w in writes],
            [embed_progress(missing[w.document_id]) for w in writes],
            [document_language(w.chunks) for w in writes],
        ),
    )
    cur.execute("UPDATE brains SET generation = generation + 1 WHERE id = %s", (brain_id,))
    return missing


def write_vectors(
    cur: Cursor, document_id: int, model: str, new_vectors: dict[str, Vectors]
) -> int:
    """The body of `PostgresStore.add_vectors`, in the caller's (system-scoped) transaction."""
    cur.execute("SELECT brain_id, progress FROM documents WHERE id = %s FOR UPDATE", (document_id,))
    doc = cur.fetchone()
    if doc is None:
        raise NotFound(f"document {document_id} was deleted while it was processed")
    cur.execute("SELECT set_config('loci.brain_id', %s, true)", (str(doc["brain_id"]),))
    cur.executemany(
        "UPDATE chunks SET embedding = %s, embed_model = %s, embed_dims = %s"
        " WHERE document_id = %s AND embed_hash = %s",
        [
            (vector, model, len(vector), document_id, h)
            for h, vector in ((h, as_array(v)) for h, v in new_vectors.items())
        ],
    )
    cur.execute(
        "SELECT count(*) AS n FROM chunks WHERE document_id = %s AND embedding IS NULL",
        (document_id,),
    )
    row = cur.fetchone()
    missing = int(row["n"]) if row is not None else 0
    if missing:
        cur.execute(
            "UPDATE documents SET progress = %s WHERE id = %s AND status = 'processing'",
            (embed_progress(missing, doc["progress"]), document_id),
        )
    else:  # ready, unless an edit queued meanwhile will index it again
        cur.execute(
            "UPDATE documents SET status = CASE WHEN status = 'processing' AND EXISTS"
            " (SELECT 1 FROM jobs WHERE document_id = %(doc)s AND status = 'queued')"
            " THEN 'processing' WHEN status = 'processing' THEN 'ready' ELSE status END,"
            " vectors_pending = false, progress = NULL, updated_at = loci_now()"
            " WHERE id = %(doc)s",
            {"doc": document_id},
        )
    return missing


def insert_chunks(
    cur: Cursor,
    brain_id: int,
    chunks: Sequence[tuple[int, IndexedChunk]],
    vectors: dict[str, Any],
    model: str,
    terms: Sequence[tuple[Any, int]],
) -> list[int]:
    """Insert the chunks, each with its document's id (ids drawn first, so postings can name
    them); returns their ids."""
    if not chunks:
        return []
    cur.execute(
        "SELECT nextval(pg_get_serial_sequence('chunks', 'id')) AS id FROM generate_series(1, %s)",
        (len(chunks),),
    )
    ids = [int(r["id"]) for r in cur.fetchall()]
    rows = []
    for chunk_id, (document_id, item), (_, length) in zip(ids, chunks, terms, strict=True):
        c = item.draft
        found = vectors.get(item.embed_hash)
        vector = as_array(found) if found is not None else None
        rows.append(
            (
                chunk_id, brain_id, document_id, c.index, c.text,
                json.dumps(list(c.heading_path)), *c.location.span_columns(),
                c.token_count, c.content_hash, item.embed_hash,
                model if vector is not None else None,
                len(vector) if vector is not None else None,
                vector, length, *c.location.reading_columns(), item.language,
            )
        )  # fmt: skip
    cur.executemany(
        "INSERT INTO chunks(id, brain_id, document_id, idx, text, heading_path, page,"
        " line_start, line_end, char_start, char_end, token_count, content_hash, embed_hash,"
        " embed_model, embed_dims, embedding, lex_length, region, ocr_confidence, time_start,"
        " time_end, language)"
        " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
        rows,
    )
    return ids


def reanalyze(cur: Cursor, brain_id: int, language: str, documents: bool = True) -> None:
    """Count every chunk's terms of the brain again, for the brain's `language`, and its
    documents' terms unless `documents` is False (a migration older than their tables; the
    caller holds lock_stats)."""
    lexical.remove_postings(cur, brain_id, "true", ())
    if documents:
        document_lexical.remove_documents(cur, brain_id, "true", ())
    cur.execute(
        "SELECT id, title, name, kind FROM documents WHERE brain_id = %s AND chunk_count > 0",
        (brain_id,),
    )
    for document in cur.fetchall():
        cur.execute(
            "SELECT id, heading_path, text, language FROM chunks WHERE document_id = %s"
            " ORDER BY idx",
            (document["id"],),
        )
        chunks = cur.fetchall()
        rows = [
            (" / ".join(c["heading_path"]), str(c["text"]), stemmer_for(language, c["language"]))
            for c in chunks
        ]
        named = index_title(document["title"] or None, str(document["name"]), str(document["kind"]))
        terms = lexical.chunk_terms(named, rows)
        ids = [int(c["id"]) for c in chunks]
        cur.execute(
            "UPDATE chunks SET lex_length = x.len FROM unnest(%s::bigint[], %s::int[])"
            " AS x(id, len) WHERE chunks.id = x.id",
            (ids, [length for _, length in terms]),
        )
        lexical.add_postings(cur, brain_id, ids, terms)
    if documents:
        document_lexical.index_documents(cur, brain_id, language)
