"""Reading a brain's documents as the document-level BM25 index holds them
(`loci.store.document_index`): each document's index title and its passages in order."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from loci.context_line import index_title
from loci.store.document_index import DocumentRow
from loci.store.document_terms import PassageText
from loci.store.sqlite.connection import Database
from loci.store.stemming import stemmer_for


def document_rows(
    db: Database, brain_id: int, document_ids: Sequence[int] | None
) -> list[DocumentRow]:
    """The brain's documents (those of `document_ids` that have passages, or all), by id."""
    sql = (
        "SELECT c.document_id, c.id, c.text, c.char_start, c.char_end, c.language, d.title,"
        " d.name, d.kind, b.text_language FROM chunks c JOIN documents d ON d.id = c.document_id"
        " JOIN brains b ON b.id = c.brain_id WHERE c.brain_id = ?"
    )
    params: tuple[Any, ...] = (brain_id,)
    if document_ids is not None:
        if not document_ids:
            return []
        sql += " AND c.document_id IN (SELECT value FROM json_each(?))"
        params += (json.dumps(list(document_ids)),)
    rows: list[DocumentRow] = []
    for (
        document_id,
        chunk_id,
        text,
        start,
        end,
        language,
        title,
        name,
        kind,
        brain_language,
    ) in db.conn.execute(sql + " ORDER BY c.document_id, c.idx", params):
        if not rows or rows[-1][0] != document_id:
            named = index_title(title or None, str(name), str(kind))
            rows.append((int(document_id), named, []))
        stemmer = stemmer_for(str(brain_language), language)
        rows[-1][2].append((int(chunk_id), PassageText(str(text), start, end, stemmer)))
    return rows


def documents_of(db: Database, chunk_ids: Sequence[int]) -> set[int]:
    """The documents the existing chunks among `chunk_ids` belong to."""
    if not chunk_ids:
        return set()
    return {
        int(r[0])
        for r in db.conn.execute(
            "SELECT DISTINCT document_id FROM chunks WHERE id IN (SELECT value FROM json_each(?))",
            (json.dumps(list(chunk_ids)),),
        )
    }
