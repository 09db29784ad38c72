"""Rows to models, and the SQL fragments the SQLite store's parts share (filters, FTS terms)."""

from __future__ import annotations

import functools
import json
from dataclasses import fields
from typing import Any, TypeVar

from loci.models import Brain, Chunk, Document, Job, SearchFilters
from loci.store.sqlite.connection import Row

NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
# bm25() weights per FTS column: brain token, title, heading path, body.
FTS_WEIGHTS = (0.0, 2.0, 1.0, 1.0)


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


def brain_of(row: Row) -> Brain:
    return _from_row(Brain, row)


def document_of(row: Row) -> Document:
    return _from_row(Document, row)


def chunk_of(row: Row) -> Chunk:
    return _from_row(Chunk, row)


def job_of(row: Row) -> Job:
    return _from_row(Job, row)


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
