"""The brain graph's tables, the same on every backend: documents keyed by (brain, id), derived
edges, timeline entries and the versions every overwrite and delete leaves behind.

A batch of changes (`apply`) is one write transaction. Each change first checks the content
hash it was based on, so of two writers that read the same version one wins and the other gets
`Conflict` with nothing written. The same transaction points each document's indexed
`documents` row at its new Markdown and queues it for the worker, so search never lags a write
that was acknowledged, and a delete removes the page and its index entry together.

The SQL is portable (see `loci.store.portable`); a backend's subclass says how JSON arrays are
read and matched, what its constraint errors look like, and how its transaction serialises
graph writers (see `sqlite/graph.py` and `postgres/graph.py`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar, Protocol

from loci.errors import Conflict, NotFound
from loci.graph.records import (
    GraphDelete,
    GraphDocument,
    GraphEdge,
    GraphPut,
    GraphTimelineEntry,
    GraphVersion,
)
from loci.models import (
    NewDocument,
)
from loci.store.job_order import INDEX_JOB
from loci.store.portable import PortableDatabase, Row
from loci.store.schema import column_list

DeleteRows = Callable[[Any, int, int], None]  # (conn, brain_id, document_id)
QueueJob = Callable[[Any, int, int, str], None]  # (conn, brain_id, document_id, job kind)

_COLUMNS = column_list("graph_documents")  # read by name (`graph_document`)


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


class GraphStore(Protocol):
    """The brain graph: documents keyed by (brain, id), their derived edges and
    timeline entries, and the versions overwrites and deletes leave behind."""

    def get(self, brain_id: int, doc_id: str) -> GraphDocument: ...
    def by_alias(self, brain_id: int, alias: str) -> list[GraphDocument]: ...
    def documents(
        self,
        brain_id: int,
        *,
        folder: str | None = None,
        doc_type: str | None = None,
        statuses: Sequence[str] = (),
        kind: str | None = None,
    ) -> list[GraphDocument]: ...
    def recently_updated(
        self, brain_id: int, limit: int, statuses: Sequence[str] = ()
    ) -> list[GraphDocument]:
        """The `limit` documents changed last (of `statuses`, if given), newest first."""
        ...

    def by_document_ids(
        self, brain_id: int, document_ids: Sequence[int]
    ) -> dict[int, GraphDocument]: ...
    def edges(
        self, brain_id: int, *, source: str | None = None, target: str | None = None
    ) -> list[GraphEdge]: ...
    def timeline(
        self,
        brain_id: int,
        doc_id: str | None = None,
        *,
        since: str | None = None,
        until: str | None = None,
        limit: int = 100,
    ) -> list[GraphTimelineEntry]: ...
    def versions(self, brain_id: int, doc_id: str) -> list[GraphVersion]: ...
    def folders(self, brain_id: int) -> dict[str, int]: ...
    def apply(
        self, brain_id: int, changes: Sequence[GraphPut | GraphDelete], actor: str
    ) -> list[str]:
        """All changes or none, in one serialized transaction; each checks the hash it was
        based on (`Conflict` if stale). Returns content hashes no document uses any more."""
        ...


class GraphTables(ABC):
    # The SQL of the current time, and the table function listing a JSON array's elements
    # (as a column `value`).
    now: ClassVar[str]
    json_elements: ClassVar[str]
    # What the backend raises when a write breaks a constraint.
    constraint_error: ClassVar[type[Exception]]

    def __init__(self, db: PortableDatabase, delete_rows: DeleteRows, queue_job: QueueJob) -> None:
        self.db = db
        self._delete_rows = delete_rows
        self._queue_job = queue_job

    @abstractmethod
    def _aliases(self, row: Row) -> list[str]:
        """The `aliases` column as read back."""

    @abstractmethod
    def _one_of(self, column: str, values: Sequence[Any]) -> tuple[str, Any]:
        """A condition `column` is one of `values`, with its one parameter."""

    @abstractmethod
    def _refusal(self, error: Exception) -> tuple[bool, str]:
        """Of a constraint error: whether it is the duplicate-content one, and its message."""

    @contextmanager
    def _transaction(self, brain_id: int) -> Iterator[Any]:
        with self.db.transaction(brain_id) as conn:
            yield conn

    def _document(self, row: Row) -> GraphDocument:
        return graph_document(row, self._aliases(row))

    # reading ------------------------------------------------------------------------------
    def get(self, brain_id: int, doc_id: str) -> GraphDocument:
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM graph_documents WHERE brain_id = ? AND id = ?",
            (brain_id, doc_id),
            brain_id,
        )
        if not rows:
            raise NotFound(f"no brain document {doc_id!r}")
        return self._document(rows[0])

    def by_alias(self, brain_id: int, alias: str) -> list[GraphDocument]:
        """Documents whose title or one of whose aliases is `alias` (case-insensitive)."""
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM graph_documents g WHERE brain_id = ?"
            f" AND (lower(title) = lower(?) OR EXISTS (SELECT 1 FROM"
            f" {self.json_elements}(g.aliases) WHERE lower(value) = lower(?))) ORDER BY id",
            (brain_id, alias, alias),
            brain_id,
        )
        return [self._document(r) for r in rows]

    def documents(
        self,
        brain_id: int,
        *,
        folder: str | None = None,
        doc_type: str | None = None,
        statuses: Sequence[str] = (),
        kind: str | None = None,
    ) -> list[GraphDocument]:
        sql = f"SELECT {_COLUMNS} FROM graph_documents WHERE brain_id = ?"
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
            condition, param = self._one_of("status", statuses)
            sql += f" AND {condition}"
            params.append(param)
        sql += " ORDER BY folder, id"
        return [self._document(r) for r in self.db.query(sql, params, brain_id)]

    def recently_updated(
        self, brain_id: int, limit: int, statuses: Sequence[str] = ()
    ) -> list[GraphDocument]:
        """The `limit` documents changed last (of `statuses`, if given), newest first."""
        sql = f"SELECT {_COLUMNS} FROM graph_documents WHERE brain_id = ?"
        params: list[Any] = [brain_id]
        if statuses:
            condition, param = self._one_of("status", statuses)
            sql += f" AND {condition}"
            params.append(param)
        sql += " ORDER BY updated DESC, id LIMIT ?"
        params.append(limit)
        return [self._document(r) for r in self.db.query(sql, params, brain_id)]

    def by_document_ids(
        self, brain_id: int, document_ids: Sequence[int]
    ) -> dict[int, GraphDocument]:
        condition, param = self._one_of("document_id", document_ids)
        rows = self.db.query(
            f"SELECT {_COLUMNS} FROM graph_documents WHERE brain_id = ? AND {condition}",
            (brain_id, param),
            brain_id,
        )
        return {int(r["document_id"]): self._document(r) for r in rows}

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
        rows = self.db.query(sql + " ORDER BY source, type, target", params, brain_id)
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
        sql = "SELECT doc_id, entry_id, at, text, source FROM graph_timeline WHERE brain_id = ?"
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
        return [timeline_entry(r) for r in self.db.query(sql, params, brain_id)]

    def versions(self, brain_id: int, doc_id: str) -> list[GraphVersion]:
        rows = self.db.query(
            "SELECT id, doc_id, action, actor, content, content_hash, created_at"
            " FROM graph_versions WHERE brain_id = ? AND doc_id = ? ORDER BY id DESC",
            (brain_id, doc_id),
            brain_id,
        )
        return [graph_version(r) for r in rows]

    def folders(self, brain_id: int) -> dict[str, int]:
        rows = self.db.query(
            "SELECT folder, count(*) AS n FROM graph_documents WHERE brain_id = ?"
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
            with self._transaction(brain_id) as conn:
                for change in changes:
                    if isinstance(change, GraphPut):
                        replaced += self._put(conn, brain_id, change, actor)
                    else:
                        replaced += self._delete(conn, brain_id, change, actor)
                hashes = list(dict.fromkeys(replaced))
                condition, param = self._one_of("content_hash", hashes)
                used = {
                    r["content_hash"]
                    for r in self.db.run(
                        conn, f"SELECT DISTINCT content_hash FROM documents WHERE {condition}",
                        (param,),
                    )
                }  # fmt: skip
                return [h for h in hashes if h not in used]
        except self.constraint_error as error:
            duplicate, message = self._refusal(error)
            raise Conflict(
                "another document in this brain already has exactly this content"
                if duplicate
                else f"the brain refused the write: {message}"
            ) from None

    def _current(self, conn: Any, brain_id: int, doc_id: str) -> Row | None:
        rows = self.db.run(
            conn,
            "SELECT content, content_hash, document_id FROM graph_documents"
            " WHERE brain_id = ? AND id = ?",
            (brain_id, doc_id),
        )
        return rows[0] if rows else None

    def _indexed_hash(self, conn: Any, document_id: int) -> list[str]:
        """The content hash of the indexed document, if it is still there."""
        rows = self.db.run(conn, "SELECT content_hash FROM documents WHERE id = ?", (document_id,))
        return [rows[0]["content_hash"]] if rows else []

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
            replaced = self._indexed_hash(conn, document_id)
            document_id = self._point_index(conn, brain_id, document_id, put.index)
        else:
            document_id = self._insert_index(conn, brain_id, put.index)
        run = self.db.run
        run(conn, "DELETE FROM graph_edges WHERE brain_id = ? AND source = ?", (brain_id, key))
        run(conn, "DELETE FROM graph_timeline WHERE brain_id = ? AND doc_id = ?", (brain_id, key))
        values = (
            put.id, put.kind, put.type, put.folder, put.status, put.title,
            json.dumps(list(put.aliases), ensure_ascii=False), put.merged_into, put.created,
            put.updated, put.content, put.content_hash, document_id,
        )  # fmt: skip
        if current is None:
            run(
                conn,
                "INSERT INTO graph_documents(id, kind, type, folder, status, title, aliases,"
                " merged_into, created, updated, content, content_hash, document_id, brain_id)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (*values, brain_id),
            )
        else:
            run(
                conn,
                "UPDATE graph_documents SET id = ?, kind = ?, type = ?, folder = ?, status = ?,"
                " title = ?, aliases = ?, merged_into = ?, created = ?, updated = ?,"
                " content = ?, content_hash = ?, document_id = ? WHERE brain_id = ? AND id = ?",
                (*values, brain_id, key),
            )
            if key != put.id:  # a rename: the history follows the document
                run(
                    conn,
                    "UPDATE graph_versions SET doc_id = ? WHERE brain_id = ? AND doc_id = ?",
                    (put.id, brain_id, key),
                )
            self._keep_version(conn, brain_id, put.id, put.action, actor, current)
        self.db.run_many(
            conn,
            "INSERT INTO graph_edges(brain_id, source, target, type) VALUES (?,?,?,?)"
            " ON CONFLICT DO NOTHING",
            [(brain_id, put.id, e.target, e.type) for e in put.edges],
        )
        self.db.run_many(
            conn,
            "INSERT INTO graph_timeline(brain_id, doc_id, entry_id, at, text, source)"
            " VALUES (?,?,?,?,?,?) ON CONFLICT DO NOTHING",
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
        self.db.run(
            conn, "DELETE FROM graph_documents WHERE brain_id = ? AND id = ?", (brain_id, delete.id)
        )
        document_id = current["document_id"]
        if document_id is None:
            return []
        old = self._indexed_hash(conn, document_id)
        self._delete_rows(conn, brain_id, document_id)
        return old

    def _keep_version(
        self, conn: Any, brain_id: int, doc_id: str, action: str, actor: str, previous: Row
    ) -> None:
        self.db.run(
            conn,
            "INSERT INTO graph_versions(brain_id, doc_id, action, actor, content, content_hash)"
            " VALUES (?,?,?,?,?,?)",
            (brain_id, doc_id, action, actor, previous["content"], previous["content_hash"]),
        )

    def _insert_index(self, conn: Any, brain_id: int, new: NewDocument) -> int:
        rows = self.db.run(
            conn,
            "INSERT INTO documents(brain_id, kind, name, title, source_url, mime_type,"
            " size_bytes, content_hash, status, tags, metadata)"
            " VALUES (?,?,?,?,?,?,?,?, 'processing', ?, ?) RETURNING id",
            (
                brain_id, new.kind, new.name, new.title, new.source_url, new.mime_type,
                new.size_bytes, new.content_hash, json.dumps(list(new.tags)),
                json.dumps(new.metadata, default=str),
            ),
        )  # fmt: skip
        document_id = int(rows[0]["id"])
        self._queue_job(conn, brain_id, document_id, INDEX_JOB)
        return document_id

    def _point_index(self, conn: Any, brain_id: int, document_id: int, new: NewDocument) -> int:
        """Point the indexed document at the new Markdown and queue its re-indexing; its old
        passages stay searchable until the worker swaps the new ones in."""
        self.db.run(
            conn,
            f"UPDATE documents SET kind = ?, name = ?, title = ?, size_bytes = ?,"
            f" content_hash = ?, metadata = ?, status = 'processing', status_reason = NULL,"
            f" vectors_pending = ?, progress = NULL, updated_at = {self.now} WHERE id = ?",
            (
                new.kind, new.name, new.title, new.size_bytes, new.content_hash,
                json.dumps(new.metadata, default=str), False, document_id,
            ),
        )  # fmt: skip
        self._queue_job(conn, brain_id, document_id, INDEX_JOB)
        return document_id
