"""Rows to models, and the SQL fragments the SQLite store's parts share (filters, FTS terms)."""

from __future__ import annotations

import json
from typing import Any

from loci.models import SearchFilters
from loci.store.model_rows import ModelRows
from loci.store.stemming import analyzed_text

NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
# bm25() weights per FTS column: brain token, title, heading path, body.
FTS_WEIGHTS = (0.0, 2.0, 1.0, 1.0)


def fts_phrase(tokens: list[str]) -> str:
    """One FTS5 string literal of analysed tokens (`stemming.query_phrases`): double quotes
    inside are doubled, so no term is ever syntax; the table's tokenizer splits it back into
    the same tokens, matched as a phrase."""
    return '"' + " ".join(tokens).replace('"', '""') + '"'


INSERT_FTS = "INSERT INTO chunks_fts(rowid, brain, title, headings, body) VALUES (?,?,?,?,?)"


def fts_values(
    chunk_id: int, brain_id: object, title: str, headings: str, body: str, stemmer: str
) -> tuple[int, str, str, str, str]:
    """A chunk's chunks_fts row: the table is contentless, so it holds the analysed form of
    the text (`loci.store.stemming`, in the chunk's language) and queries are analysed alike."""
    return (
        chunk_id,
        f"b{brain_id}",
        analyzed_text(title, stemmer),
        analyzed_text(headings, stemmer),
        analyzed_text(body, stemmer),
    )


ROWS = ModelRows(json.loads)  # JSON columns are TEXT here
brain_of = ROWS.brain
document_of = ROWS.document
chunk_of = ROWS.chunk
job_of = ROWS.job


def index_weights() -> tuple[int, int, int]:
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
