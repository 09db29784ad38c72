"""The brain graph's tables: documents keyed by (brain, id), derived edges, timeline entries and
the versions every overwrite and delete leaves behind.

A batch of changes (`apply`) is one transaction holding the brain's graph lock (a
transaction-level advisory lock: graph writers of one brain queue, other brains go on). Each change
first checks the content hash it was based on, so of two writers that read the same version one
wins and the other gets `Conflict` with nothing written. The same transaction points each
document's indexed `documents` row at its new Markdown and queues it for the worker, so search
never lags a write that was acknowledged, and a delete removes the page and its index entry
together.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from psycopg import errors

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
from loci.store.postgres.connection import Cursor, Database, Row

GRAPH_LOCK = 7_300_003  # pg_advisory_xact_lock(GRAPH_LOCK, brain id): one graph writer a brain
INDEX_JOB = "index"  # the worker's indexing job, as `loci.service` queues it

DeleteRows = Callable[[Cursor, int, int], None]  # (cursor, brain_id, document_id)
QueueJob = Callable[[Cursor, int, int, str], None]  # (cursor, brain_id, document_id, job kind)
_COLUMNS = (
    "brain_id, id, kind, type, folder, status, title, aliases, merged_into, created, updated,"
    " content, content_hash, document_id"
)


def _document(row: Row) -> GraphDocument:
    return graph_document(row, row["aliases"])


class PostgresGraph:
    def __init__(self, db: Database, delete_rows: DeleteRows, queue_job: QueueJob) -> None:
        self.db = db
        self._delete_rows = delete_rows
        self._queue_job = queue_job

    # reading ------------------------------------------------------------------------------
    def get(self, brain_id: int, doc_id: str) -> GraphDocument:
        row = self.db.row(
            f"SELECT {_COLUMNS} FROM graph_documents WHERE brain_id = %s AND id = %s",
            (brain_id, doc_id),
            brain_id,
        )
        if row is None:
            raise NotFound(f"no brain document {doc_id!r}")
        return _document(row)

    def by_alias(self, brain_id: int, alias: str) -> list[GraphDocument]:
        """Documents whose title or one of whose aliases is `alias` (case-insensitive)."""
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM graph_documents g WHERE brain_id = %s"
            " AND (lower(title) = lower(%s) OR EXISTS (SELECT 1 FROM"
            " jsonb_array_elements_text(g.aliases) AS a(value) WHERE lower(a.value) = lower(%s)))"
            " ORDER BY id",
            (brain_id, alias, alias),
            brain_id,
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
        sql = f"SELECT {_COLUMNS} FROM graph_documents WHERE brain_id = %s"
        params: list[Any] = [brain_id]
        if folder:  # the folder and everything under it
            sql += " AND (folder = %s OR substr(folder, 1, %s) = %s)"
            params += [folder, len(folder) + 1, folder + "/"]
        if doc_type:
            sql += " AND type = %s"
            params.append(doc_type)
        if kind:
            sql += " AND kind = %s"
            params.append(kind)
        if statuses:
            sql += " AND status = ANY(%s)"
            params.append(list(statuses))
        sql += " ORDER BY folder, id"
        return [_document(r) for r in self.db.rows(sql, tuple(params), brain_id)]

    def by_document_ids(
        self, brain_id: int, document_ids: Sequence[int]
    ) -> dict[int, GraphDocument]:
        rows = self.db.rows(
            f"SELECT {_COLUMNS} FROM graph_documents WHERE brain_id = %s AND document_id = ANY(%s)",
            (brain_id, list(document_ids)),
            brain_id,
        )
        return {int(r["document_id"]): _document(r) for r in rows}

    def edges(
        self, brain_id: int, *, source: str | None = None, target: str | None = None
    ) -> list[GraphEdge]:
        sql = "SELECT source, target, type FROM graph_edges WHERE brain_id = %s"
        params: list[Any] = [brain_id]
        if source is not None:
            sql += " AND source = %s"
            params.append(source)
        if target is not None:
            sql += " AND target = %s"
            params.append(target)
        rows = self.db.rows(sql + " ORDER BY source, type, target", tuple(params), brain_id)
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
        sql = "SELECT doc_id, entry_id, at, text, source FROM graph_timeline WHERE brain_id = %s"
        params: list[Any] = [brain_id]
        if doc_id is not None:
            sql += " AND doc_id = %s"
            params.append(doc_id)
        if since:
            sql += " AND at >= %s"
            params.append(since)
        if until:
            sql += " AND at < %s"
            params.append(until)
        sql += " ORDER BY at DESC, doc_id, entry_id LIMIT %s"
        params.append(limit)
        return [timeline_entry(r) for r in self.db.rows(sql, tuple(params), brain_id)]

    def versions(self, brain_id: int, doc_id: str) -> list[GraphVersion]:
        rows = self.db.rows(
            "SELECT id, doc_id, action, actor, content, content_hash, created_at"
            " FROM graph_versions WHERE brain_id = %s AND doc_id = %s ORDER BY id DESC",
            (brain_id, doc_id),
            brain_id,
        )
        return [graph_version(r) for r in rows]

    def folders(self, brain_id: int) -> dict[str, int]:
        rows = self.db.rows(
            "SELECT folder, count(*) AS n FROM graph_documents WHERE brain_id = %s"
            " GROUP BY folder ORDER BY folder",
            (brain_id,),
            brain_id,
        )
        return {str(r["folder"]): int(r["n"]) for r in rows}

    # writing ------------------------------------------------------------------------------
    def apply(
        self, brain_id: int, changes: Sequence[GraphPut | GraphDelete], actor: str
    ) -> list[str]:
        """Apply every change or none, in one transaction; returns the content hashes of
        indexed Markdown no document uses any more (the caller may delete those blobs)."""
        replaced: list[str] = []
        try:
            with self.db.tx(brain_id) as conn:
                conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (GRAPH_LOCK, brain_id))
                for change in changes:
                    if isinstance(change, GraphPut):
                        replaced += self._put(conn, brain_id, change, actor)
                    else:
                        replaced += self._delete(conn, brain_id, change, actor)
                hashes = list(dict.fromkeys(replaced))
                conn.execute(
                    "SELECT DISTINCT content_hash FROM documents WHERE content_hash = ANY(%s)",
                    (hashes,),
                )
                used = {r["content_hash"] for r in conn.fetchall()}
                return [h for h in hashes if h not in used]
        except errors.IntegrityError as error:
            raise Conflict(
                "another document in this brain already has exactly this content"
                if "content_hash" in str(error)
                else f"the brain refused the write: {error.diag.message_primary}"
            ) from None

    def _current(self, conn: Cursor, brain_id: int, doc_id: str) -> Row | None:
        conn.execute(
            "SELECT content, content_hash, document_id FROM graph_documents"
            " WHERE brain_id = %s AND id = %s",
            (brain_id, doc_id),
        )
        return conn.fetchone()

    def _put(self, conn: Cursor, brain_id: int, put: GraphPut, actor: str) -> list[str]:
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
                "SELECT content_hash FROM documents WHERE id = %s", (document_id,)
            ).fetchall()
            replaced = [old[0]["content_hash"]] if old else []
            document_id = self._point_index(conn, brain_id, document_id, put.index)
        else:
            document_id = self._insert_index(conn, brain_id, put.index)
        conn.execute("DELETE FROM graph_edges WHERE brain_id = %s AND source = %s", (brain_id, key))
        conn.execute(
            "DELETE FROM graph_timeline WHERE brain_id = %s AND doc_id = %s", (brain_id, key)
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
                " VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)",
                (*values, brain_id),
            )
        else:
            conn.execute(
                "UPDATE graph_documents SET id = %s, kind = %s, type = %s, folder = %s,"
                " status = %s, title = %s, aliases = %s, merged_into = %s, created = %s,"
                " updated = %s, content = %s, content_hash = %s, document_id = %s"
                " WHERE brain_id = %s AND id = %s",
                (*values, brain_id, key),
            )
            if key != put.id:  # a rename: the history follows the document
                conn.execute(
                    "UPDATE graph_versions SET doc_id = %s WHERE brain_id = %s AND doc_id = %s",
                    (put.id, brain_id, key),
                )
            self._keep_version(conn, brain_id, put.id, put.action, actor, current)
        conn.executemany(
            "INSERT INTO graph_edges(brain_id, source, target, type) VALUES (%s,%s,%s,%s)"
            " ON CONFLICT DO NOTHING",
            [(brain_id, put.id, e.target, e.type) for e in put.edges],
        )
        conn.executemany(
            "INSERT INTO graph_timeline(brain_id, doc_id, entry_id, at, text, source)"
            " VALUES (%s,%s,%s,%s,%s,%s) ON CONFLICT DO NOTHING",
            [(brain_id, put.id, e.entry_id, e.at, e.text, e.source) for e in put.timeline],
        )
        return replaced

    def _delete(self, conn: Cursor, brain_id: int, delete: GraphDelete, actor: str) -> list[str]:
        current = self._current(conn, brain_id, delete.id)
        if current is None:
            raise NotFound(f"no brain document {delete.id!r}")
        if current["content_hash"] != delete.expected_hash:
            raise stale(delete.id)
        self._keep_version(conn, brain_id, delete.id, delete.action, actor, current)
        conn.execute(
            "DELETE FROM graph_documents WHERE brain_id = %s AND id = %s", (brain_id, delete.id)
        )
        document_id = current["document_id"]
        if document_id is None:
            return []
        old = conn.execute(
            "SELECT content_hash FROM documents WHERE id = %s", (document_id,)
        ).fetchall()
        self._delete_rows(conn, brain_id, document_id)
        return [old[0]["content_hash"]] if old else []

    @staticmethod
    def _keep_version(
        conn: Cursor, brain_id: int, doc_id: str, action: str, actor: str, previous: Row
    ) -> None:
        conn.execute(
            "INSERT INTO graph_versions(brain_id, doc_id, action, actor, content, content_hash)"
            " VALUES (%s,%s,%s,%s,%s,%s)",
            (brain_id, doc_id, action, actor, previous["content"], previous["content_hash"]),
        )

    def _insert_index(self, conn: Cursor, brain_id: int, new: NewDocument) -> int:
        conn.execute(
            "INSERT INTO documents(brain_id, kind, name, title, source_url, mime_type,"
            " size_bytes, content_hash, status, tags, metadata)"
            " VALUES (%s,%s,%s,%s,%s,%s,%s,%s, 'processing', %s, %s) RETURNING id",
            (
                brain_id, new.kind, new.name, new.title, new.source_url, new.mime_type,
                new.size_bytes, new.content_hash, json.dumps(list(new.tags)),
                json.dumps(new.metadata, default=str),
            ),
        )  # fmt: skip
        row = conn.fetchone()
        assert row is not None
        document_id = int(row["id"])
        self._queue_job(conn, brain_id, document_id, INDEX_JOB)
        return document_id

    def _point_index(self, conn: Cursor, brain_id: int, document_id: int, new: NewDocument) -> int:
        """Point the indexed document at the new Markdown and queue its re-indexing; its old
        passages stay searchable until the worker swaps the new ones in."""
        conn.execute(
            "UPDATE documents SET kind = %s, name = %s, title = %s, size_bytes = %s,"
            " content_hash = %s, metadata = %s, status = 'processing', status_reason = NULL,"
            " updated_at = loci_now() WHERE id = %s",
            (
                new.kind, new.name, new.title, new.size_bytes, new.content_hash,
                json.dumps(new.metadata, default=str), document_id,
            ),
        )  # fmt: skip
        self._queue_job(conn, brain_id, document_id, INDEX_JOB)
        return document_id
