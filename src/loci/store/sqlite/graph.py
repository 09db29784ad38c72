"""The brain graph's tables: documents keyed by (brain, id), derived edges, timeline entries and
the versions every overwrite and delete leaves behind.

A batch of changes (`apply`) is one `BEGIN IMMEDIATE` transaction: each change first checks the
content hash it was based on, so of two writers that read the same version one wins and the other
gets `Conflict` with nothing written. The same transaction points each document's indexed
`documents` row at its new Markdown and queues it for the worker, so search never lags a write
that was acknowledged, and a delete removes the page and its index entry together.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import apsw

from loci.errors import Conflict, NotFound
from loci.models import (
    GraphDelete,
    GraphDocument,
    GraphEdge,
    GraphPut,
    GraphTimelineEntry,
    GraphVersion,
    NewDocument,
)
from loci.store.graph_rows import graph_document, graph_version, stale, timeline_entry
from loci.store.sqlite.connection import Database, Row

NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
INDEX_JOB = "index"  # the worker's indexing job, as `loci.service` queues it

DeleteRows = Callable[[Any, int, int], None]  # (conn, brain_id, document_id)
QueueJob = Callable[[Any, int, int, str], None]  # (conn, brain_id, document_id, job kind)


def _document(row: Row) -> GraphDocument:
    return graph_document(row, json.loads(row["aliases"]))


class SqliteGraph:
    def __init__(self, db: Database, delete_rows: DeleteRows, queue_job: QueueJob) -> None:
        self.db = db
        self._delete_rows = delete_rows
        self._queue_job = queue_job

    # reading ------------------------------------------------------------------------------
    def get(self, brain_id: int, doc_id: str) -> GraphDocument:
        row = self.db.row(
            "SELECT * FROM graph_documents WHERE brain_id = ? AND id = ?", (brain_id, doc_id)
        )
        if row is None:
            raise NotFound(f"no brain document {doc_id!r}")
        return _document(row)

    def by_alias(self, brain_id: int, alias: str) -> list[GraphDocument]:
        """Documents whose title or one of whose aliases is `alias` (case-insensitive)."""
        rows = self.db.rows(
            "SELECT * FROM graph_documents g WHERE brain_id = ? AND (lower(title) = lower(?)"
            " OR EXISTS (SELECT 1 FROM json_each(g.aliases) WHERE lower(value) = lower(?)))"
            " ORDER BY id",
            (brain_id, alias, alias),
        )
        return [_document(r) for r in rows]

    def documents(
        self,
        brain_id: int,
        *,
        folder: str | None = None,
        doc_type: str | None = None,
        statuses: Sequence[str] = (),
        kind: str | None = None,
    ) -> list[GraphDocument]:
        sql = "SELECT * FROM graph_documents WHERE brain_id = ?"
        params: list[Any] = [brain_id]
        if folder:  # the folder and everything under it
            sql += " AND (folder = ? OR substr(folder, 1, ?) = ?)"
            params += [folder, len(folder) + 1, folder + "/"]
        if doc_type:
            sql += " AND type = ?"
            params.append(doc_type)
        if kind:
            sql += " AND kind = ?"
            params.append(kind)
        if statuses:
            sql += f" AND status IN ({','.join('?' * len(statuses))})"
            params += list(statuses)
        sql += " ORDER BY folder, id"
        return [_document(r) for r in self.db.rows(sql, tuple(params))]

    def by_document_ids(
        self, brain_id: int, document_ids: Sequence[int]
    ) -> dict[int, GraphDocument]:
        rows = self.db.rows(
            "SELECT * FROM graph_documents WHERE brain_id = ?"
            " AND document_id IN (SELECT value FROM json_each(?))",
            (brain_id, json.dumps(list(document_ids))),
        )
        return {int(r["document_id"]): _document(r) for r in rows}

    def edges(
        self, brain_id: int, *, source: str | None = None, target: str | None = None
    ) -> list[GraphEdge]:
        sql = "SELECT source, target, type FROM graph_edges WHERE brain_id = ?"
        params: list[Any] = [brain_id]
        if source is not None:
            sql += " AND source = ?"
            params.append(source)
        if target is not None:
            sql += " AND target = ?"
            params.append(target)
        rows = self.db.rows(sql + " ORDER BY source, type, target", tuple(params))
        return [GraphEdge(r["source"], r["target"], r["type"]) for r in rows]

    def timeline(
        self,
        brain_id: int,
        doc_id: str | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        limit: int = 100,
    ) -> list[GraphTimelineEntry]:
        """Entries newest first; `since` inclusive, `until` exclusive (ISO dates or times)."""
        sql = "SELECT * FROM graph_timeline WHERE brain_id = ?"
        params: list[Any] = [brain_id]
        if doc_id is not None:
            sql += " AND doc_id = ?"
            params.append(doc_id)
        if since:
            sql += " AND at >= ?"
            params.append(since)
        if until:
            sql += " AND at < ?"
            params.append(until)
        sql += " ORDER BY at DESC, doc_id, entry_id LIMIT ?"
        params.append(limit)
        return [timeline_entry(r) for r in self.db.rows(sql, tuple(params))]

    def versions(self, brain_id: int, doc_id: str) -> list[GraphVersion]:
        rows = self.db.rows(
            "SELECT * FROM graph_versions WHERE brain_id = ? AND doc_id = ? ORDER BY id DESC",
            (brain_id, doc_id),
        )
        return [graph_version(r) for r in rows]

    def folders(self, brain_id: int) -> dict[str, int]:
        rows = self.db.conn.execute(
            "SELECT folder, count(*) FROM graph_documents WHERE brain_id = ?"
            " GROUP BY folder ORDER BY folder",
            (brain_id,),
        )
        return {str(folder): int(count) for folder, count in rows}

    # writing ------------------------------------------------------------------------------
    def apply(
        self, brain_id: int, changes: Sequence[GraphPut | GraphDelete], actor: str
    ) -> list[str]:
        """Apply every change or none, in one transaction; returns the content hashes of
        indexed Markdown no document uses any more (the caller may delete those blobs)."""
        replaced: list[str] = []
        try:
            with self.db.write() as conn:
                for change in changes:
                    if isinstance(change, GraphPut):
                        replaced += self._put(conn, brain_id, change, actor)
                    else:
                        replaced += self._delete(conn, brain_id, change, actor)
                return [
                    h
                    for h in dict.fromkeys(replaced)
                    if not conn.execute(
                        "SELECT 1 FROM documents WHERE content_hash = ? LIMIT 1", (h,)
                    ).fetchall()
                ]
        except apsw.ConstraintError as error:
            raise Conflict(
                "another document in this brain already has exactly this content"
                if "documents.content_hash" in str(error)
                else f"the brain refused the write: {error}"
            ) from None

    def _current(self, conn: Any, brain_id: int, doc_id: str) -> Row | None:
        cursor = conn.execute(
            "SELECT content, content_hash, document_id FROM graph_documents"
            " WHERE brain_id = ? AND id = ?",
            (brain_id, doc_id),
        )
        for content, content_hash, document_id in cursor:
            return {"content": content, "content_hash": content_hash, "document_id": document_id}
        return None

    def _put(self, conn: Any, brain_id: int, put: GraphPut, actor: str) -> list[str]:
        key = put.previous_id or put.id
        current = self._current(conn, brain_id, key)
        if put.expected_hash is None:
            if current is not None:
                raise Conflict(f"a brain document {key!r} already exists")
        elif current is None:
            raise NotFound(f"no brain document {key!r}")
        elif current["content_hash"] != put.expected_hash:
            raise stale(key)
        if key != put.id and self._current(conn, brain_id, put.id) is not None:
            raise Conflict(f"a brain document {put.id!r} already exists")
        replaced: list[str] = []
        document_id = current["document_id"] if current else None
        if document_id is not None:
            old = conn.execute(
                "SELECT content_hash FROM documents WHERE id = ?", (document_id,)
            ).fetchall()
            replaced = [old[0][0]] if old else []
            document_id = self._point_index(conn, brain_id, document_id, put.index)
        else:
            document_id = self._insert_index(conn, brain_id, put.index)
        conn.execute("DELETE FROM graph_edges WHERE brain_id = ? AND source = ?", (brain_id, key))
        conn.execute(
            "DELETE FROM graph_timeline WHERE brain_id = ? AND doc_id = ?", (brain_id, key)
        )
        values = (
            put.id, put.kind, put.type, put.folder, put.status, put.title,
            json.dumps(list(put.aliases), ensure_ascii=False), put.merged_into, put.created,
            put.updated, put.content, put.content_hash, document_id,
        )  # fmt: skip
        if current is None:
            conn.execute(
                "INSERT INTO graph_documents(id, kind, type, folder, status, title, aliases,"
                " merged_into, created, updated, content, content_hash, document_id, brain_id)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, brain_id),
            )
        else:
            conn.execute(
                "UPDATE graph_documents SET id = ?, kind = ?, type = ?, folder = ?, status = ?,"
                " title = ?, aliases = ?, merged_into = ?, created = ?, updated = ?,"
                " content = ?, content_hash = ?, document_id = ? WHERE brain_id = ? AND id = ?",
                (*values, brain_id, key),
            )
            if key != put.id:  # a rename: the history follows the document
                conn.execute(
                    "UPDATE graph_versions SET doc_id = ? WHERE brain_id = ? AND doc_id = ?",
                    (put.id, brain_id, key),
                )
            self._keep_version(conn, brain_id, put.id, put.action, actor, current)
        conn.executemany(
            "INSERT OR IGNORE INTO graph_edges(brain_id, source, target, type) VALUES (?,?,?,?)",
            [(brain_id, put.id, e.target, e.type) for e in put.edges],
        )
        conn.executemany(
            "INSERT OR IGNORE INTO graph_timeline(brain_id, doc_id, entry_id, at, text, source)"
            " VALUES (?,?,?,?,?,?)",
            [(brain_id, put.id, e.entry_id, e.at, e.text, e.source) for e in put.timeline],
        )
        return replaced

    def _delete(self, conn: Any, brain_id: int, delete: GraphDelete, actor: str) -> list[str]:
        current = self._current(conn, brain_id, delete.id)
        if current is None:
            raise NotFound(f"no brain document {delete.id!r}")
        if current["content_hash"] != delete.expected_hash:
            raise stale(delete.id)
        self._keep_version(conn, brain_id, delete.id, delete.action, actor, current)
        conn.execute(
            "DELETE FROM graph_documents WHERE brain_id = ? AND id = ?", (brain_id, delete.id)
        )
        document_id = current["document_id"]
        if document_id is None:
            return []
        old = conn.execute(
            "SELECT content_hash FROM documents WHERE id = ?", (document_id,)
        ).fetchall()
        self._delete_rows(conn, brain_id, document_id)
        return [old[0][0]] if old else []

    @staticmethod
    def _keep_version(
        conn: Any, brain_id: int, doc_id: str, action: str, actor: str, previous: Row
    ) -> None:
        conn.execute(
            "INSERT INTO graph_versions(brain_id, doc_id, action, actor, content, content_hash)"
            " VALUES (?,?,?,?,?,?)",
            (brain_id, doc_id, action, actor, previous["content"], previous["content_hash"]),
        )

    def _insert_index(self, conn: Any, brain_id: int, new: NewDocument) -> int:
        conn.execute(
            "INSERT INTO documents(brain_id, kind, name, title, source_url, mime_type,"
            " size_bytes, content_hash, status, tags, metadata)"
            " VALUES (?,?,?,?,?,?,?,?, 'processing', ?, ?)",
            (
                brain_id, new.kind, new.name, new.title, new.source_url, new.mime_type,
                new.size_bytes, new.content_hash, json.dumps(list(new.tags)),
                json.dumps(new.metadata, default=str),
            ),
        )  # fmt: skip
        document_id = int(conn.last_insert_rowid())
        self._queue_job(conn, brain_id, document_id, INDEX_JOB)
        return document_id

    def _point_index(self, conn: Any, brain_id: int, document_id: int, new: NewDocument) -> int:
        """Point the indexed document at the new Markdown and queue its re-indexing; its old
        passages stay searchable until the worker swaps the new ones in."""
        conn.execute(
            f"UPDATE documents SET kind = ?, name = ?, title = ?, size_bytes = ?,"
            f" content_hash = ?, metadata = ?, status = 'processing', status_reason = NULL,"
            f" updated_at = {NOW} WHERE id = ?",
            (
                new.kind, new.name, new.title, new.size_bytes, new.content_hash,
                json.dumps(new.metadata, default=str), document_id,
            ),
        )  # fmt: skip
        self._queue_job(conn, brain_id, document_id, INDEX_JOB)
        return document_id
