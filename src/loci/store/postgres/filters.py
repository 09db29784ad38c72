"""Search filters as SQL conditions on documents `d`, with named parameters."""

from __future__ import annotations

import json
from typing import Any

from loci.models import SearchFilters


def glob_to_like(pattern: str) -> str:
    """SQLite's GLOB (`*`, `?`, case-sensitive) as a LIKE pattern; `[` classes are literal."""
    escaped = pattern.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped.replace("*", "%").replace("?", "_")


def filter_sql(filters: SearchFilters) -> tuple[str, dict[str, Any]]:
    """(" AND ..." conditions or "", their parameters)."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if filters.name:
        if any(ch in filters.name for ch in "*?"):
            clauses.append("(d.name LIKE %(f_name)s OR coalesce(d.title, '') LIKE %(f_name)s)")
            params["f_name"] = glob_to_like(filters.name)
        else:
            clauses.append("(d.name = %(f_name)s OR d.title = %(f_name)s)")
            params["f_name"] = filters.name
    if filters.kinds:
        clauses.append("d.kind = ANY(%(f_kinds)s)")
        params["f_kinds"] = list(filters.kinds)
    if filters.tags:
        clauses.append("d.tags @> %(f_tags)s::jsonb")
        params["f_tags"] = json.dumps(list(filters.tags))
    if filters.created_after:
        clauses.append("d.created_at >= %(f_after)s")
        params["f_after"] = filters.created_after
    if filters.created_before:
        clauses.append("d.created_at < %(f_before)s")
        params["f_before"] = filters.created_before
    if filters.document_ids:
        clauses.append("d.id = ANY(%(f_ids)s)")
        params["f_ids"] = list(filters.document_ids)
    return (" AND " + " AND ".join(clauses)) if clauses else "", params
