"""Graph rows to models, and the conflict a stale write gets — the same on every backend.

A row is any mapping of column to value; the backends differ only in how `aliases` arrives
(SQLite: JSON text, PostgreSQL: an array), so the caller decodes it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from loci.errors import Conflict
from loci.models import GraphDocument, GraphTimelineEntry, GraphVersion


def graph_document(row: Mapping[str, Any], aliases: Iterable[str]) -> GraphDocument:
    return GraphDocument(
        row["brain_id"], row["id"], row["kind"], row["type"], row["folder"], row["status"],
        row["title"], tuple(aliases), row["merged_into"], row["created"],
        row["updated"], row["content"], row["content_hash"], row["document_id"],
    )  # fmt: skip


def graph_version(row: Mapping[str, Any]) -> GraphVersion:
    return GraphVersion(
        row["id"], row["doc_id"], row["action"], row["actor"], row["content"],
        row["content_hash"], row["created_at"],
    )  # fmt: skip


def timeline_entry(row: Mapping[str, Any]) -> GraphTimelineEntry:
    return GraphTimelineEntry(row["doc_id"], row["entry_id"], row["at"], row["text"], row["source"])


def stale(doc_id: str) -> Conflict:
    """What a write with an out-of-date expected hash gets."""
    return Conflict(f"{doc_id} changed since you read it; reload it and apply your edit again")
