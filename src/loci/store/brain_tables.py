"""Brains and their documents as both backends read and update them: the portable part of a
store (see `loci.store.portable`).

What differs stays in each store: how documents are deleted with their derived index and jobs
(FTS5 rows or lexical postings, locks) and how the index is written. A store mixes this in and
says how JSON tags are matched, how a read locks the row it will update, and which error a
duplicate raises.
"""

from __future__ import annotations

import json
from abc import abstractmethod
from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any, TypeVar

from loci.errors import Conflict, NotFound
from loci.models import (
    Brain,
    BrainStats,
    Chunk,
    Document,
    DocumentKind,
    DocumentListing,
    DocumentStatus,
    NewDocument,
    Progress,
    Visibility,
)
from loci.store.portable import Row
from loci.store.schema import column_list, pick
from loci.store.version_tables import VersionTables

# What a model is read from: every column both backends have (`loci.store.schema`), matched to
# the model's fields by name (`loci.store.model_rows`), less those no model of it holds.
BRAIN_COLUMNS = column_list("brains", without=("generation", "text_language"))
DOCUMENT_COLUMNS = column_list("documents")
# A document as a list filters and sorts it: no JSON column to decode (`DocumentListing`).
LISTING_COLUMNS = pick(
    "documents", "id", "kind", "name", "title", "mime_type", "size_bytes", "status",
    "source_url", "source_path",
)  # fmt: skip
CHUNK_COLUMNS = column_list("chunks", without=("brain_id",))


T = TypeVar("T")
Labels = dict[str, Any]  # a document's metadata


def embed_progress(missing: int, stored: Any = None) -> str | None:
    """A document's progress (JSON) while `missing` of its chunks have no vector; None when
    none is missing. `total` is how many had none when its embedding began, kept from
    `stored` (its progress now, as the backend returns the column)."""
    if missing <= 0:
        return None
    current = Progress.of(json.loads(stored) if isinstance(stored, str) else stored)
    total = missing
    if current is not None and current.stage == "embed" and current.total >= missing:
        total = current.total
    return json.dumps(Progress("embed", total - missing, total).as_json())


def _batches(values: Sequence[T]) -> Iterator[tuple[list[T], str]]:
    """The distinct values in batches under SQLite's limit of parameters, each with its marks."""
    unique = list(dict.fromkeys(values))
    for start in range(0, len(unique), 500):
        batch = unique[start : start + 500]
        yield batch, ", ".join("?" for _ in batch)


class BrainTables(VersionTables):
    # A store's clock, locking, unique error, database and job queue are declared with the
    # versions (`VersionTables`), which use them too.

    @abstractmethod
    def _has_tag(self, tag: str) -> tuple[str, Any]:
        """A condition that documents `d` carry `tag`, with its one parameter."""

    @abstractmethod
    def _delete_rows(self, conn: Any, brain_id: int, document_id: int) -> None:
        """A document's row, index and jobs, inside the caller's transaction (the graph store
        deletes a page and its indexed document in one)."""

    def _queue_job(self, conn: Any, brain_id: int, document_id: int, job_kind: str) -> None:
        self._queue_jobs(conn, brain_id, [document_id], job_kind)

    # brains -------------------------------------------------------------------------------
    def get_brain(self, name: str) -> Brain:
        rows = self.portable.query(f"SELECT {BRAIN_COLUMNS} FROM brains WHERE name = ?", (name,))
        if not rows:
            raise NotFound(f"no brain named {name!r}")
        return self.model_rows.brain(rows[0])

    def get_brain_by_id(self, brain_id: int) -> Brain:
        rows = self.portable.query(f"SELECT {BRAIN_COLUMNS} FROM brains WHERE id = ?", (brain_id,))
        if not rows:
            raise NotFound(f"no brain with id {brain_id}")
        return self.model_rows.brain(rows[0])

    def list_brains(self) -> list[Brain]:
        rows = self.portable.query(f"SELECT {BRAIN_COLUMNS} FROM brains ORDER BY name")
        return [self.model_rows.brain(r) for r in rows]

    def create_brain(self, name: str, visibility: Visibility, owner_id: int | None) -> Brain:
        db = self.portable
        try:
            with db.transaction() as conn:
                created = db.run(
                    conn,
                    "INSERT INTO brains(name, visibility) VALUES (?, ?) RETURNING id",
                    (name, visibility),
                )
                if owner_id is not None:
                    db.run(
                        conn,
                        "INSERT INTO brain_members(brain_id, user_id, role) VALUES (?, ?, 'owner')",
                        (created[0]["id"], owner_id),
                    )
        except self.unique_error:
            raise Conflict(f"a brain named {name!r} already exists") from None
        return self.get_brain(name)

    def update_brain(
        self, brain_id: int, *, name: str | None = None, visibility: Visibility | None = None
    ) -> Brain:
        db = self.portable
        try:
            with db.transaction(brain_id) as conn:
                if name is not None:
                    db.run(conn, "UPDATE brains SET name = ? WHERE id = ?", (name, brain_id))
                if visibility is not None:
                    db.run(
                        conn,
                        "UPDATE brains SET visibility = ? WHERE id = ?",
                        (visibility, brain_id),
                    )
        except self.unique_error:
            raise Conflict(f"a brain named {name!r} already exists") from None
        return self.get_brain_by_id(brain_id)

    # documents ----------------------------------------------------------------------------
    def find_by_hash(self, brain_id: int, content_hash: str) -> Document | None:
        rows = self.portable.query(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE brain_id = ? AND content_hash = ?",
            (brain_id, content_hash),
            brain_id,
        )
        return self.model_rows.document(rows[0]) if rows else None

    def find_by_source(self, brain_id: int, kind: DocumentKind, source_url: str) -> Document | None:
        rows = self.portable.query(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE brain_id = ? AND kind = ?"
            " AND source_url = ? ORDER BY id DESC LIMIT 1",
            (brain_id, kind, source_url),
            brain_id,
        )
        return self.model_rows.document(rows[0]) if rows else None

    def find_by_path(self, brain_id: int, source_path: str) -> Document | None:
        rows = self.portable.query(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE brain_id = ? AND source_path = ?"
            " ORDER BY id DESC LIMIT 1",
            (brain_id, source_path),
            brain_id,
        )
        return self.model_rows.document(rows[0]) if rows else None

    def find_by_origin(self, brain_id: int, origin: str) -> Document | None:
        rows = self.portable.query(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE brain_id = ? AND origin = ?",
            (brain_id, origin),
            brain_id,
        )
        return self.model_rows.document(rows[0]) if rows else None

    def origins(self, brain_id: int, prefix: str) -> dict[str, int]:
        """The documents whose origin starts with `prefix` (one import, one synced source):
        origin -> document id."""
        like = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
        rows = self.portable.query(
            "SELECT id, origin FROM documents WHERE brain_id = ? AND origin LIKE ? ESCAPE '\\'",
            (brain_id, like),
            brain_id,
        )
        return {str(r["origin"]): int(r["id"]) for r in rows}

    def add_tags(self, document_id: int, tags: Sequence[str]) -> None:
        def change(metadata: Labels, current: list[str]) -> tuple[Labels, list[str]]:
            return metadata, list(dict.fromkeys((*current, *tags)))

        self._rewrite_labels({document_id: change})

    def get_document(self, brain_id: int, document_id: int) -> Document:
        rows = self.portable.query(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = ? AND brain_id = ?",
            (document_id, brain_id),
            brain_id,
        )
        if not rows:
            raise NotFound(f"no document {document_id} in this brain")
        return self.model_rows.document(rows[0])

    def list_documents(
        self,
        brain_id: int,
        *,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        tag: str | None = None,
    ) -> list[Document]:
        rows = self._document_rows(DOCUMENT_COLUMNS, brain_id, status, kind, tag)
        return [self.model_rows.document(r) for r in rows]

    def list_document_index(
        self,
        brain_id: int,
        *,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        tag: str | None = None,
    ) -> list[DocumentListing]:
        rows = self._document_rows(LISTING_COLUMNS, brain_id, status, kind, tag)
        return [DocumentListing(**r) for r in rows]

    def get_documents(self, brain_id: int, document_ids: Sequence[int]) -> list[Document]:
        found: dict[int, Document] = {}
        # A batch at a time: a database takes only so many parameters in one statement.
        for start in range(0, len(document_ids), 500):
            batch = document_ids[start : start + 500]
            marks = ", ".join("?" for _ in batch)
            rows = self.portable.query(
                f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE brain_id = ? AND id IN ({marks})",
                (brain_id, *batch),
                brain_id,
            )
            found.update((r["id"], self.model_rows.document(r)) for r in rows)
        return [found[i] for i in document_ids if i in found]

    def _document_rows(
        self,
        columns: str,
        brain_id: int,
        status: DocumentStatus | None,
        kind: DocumentKind | None,
        tag: str | None,
    ) -> list[Row]:
        sql = f"SELECT {columns} FROM documents d WHERE d.brain_id = ?"
        params: list[Any] = [brain_id]
        if status:
            sql += " AND d.status = ?"
            params.append(status)
        if kind:
            sql += " AND d.kind = ?"
            params.append(kind)
        if tag:
            condition, param = self._has_tag(tag)
            sql += f" AND {condition}"
            params.append(param)
        return self.portable.query(sql + " ORDER BY d.id", params, brain_id)

    def recent_documents(
        self, brain_id: int, limit: int, kinds: Sequence[DocumentKind] = ()
    ) -> list[Document]:
        """The `limit` newest documents (of `kinds`, if given), newest first. Ids grow with
        creation (and `created_at` never changes), so the primary key orders them; only
        `limit` rows are decoded, however big the brain."""
        sql = f"SELECT {DOCUMENT_COLUMNS} FROM documents d WHERE d.brain_id = ?"
        params: list[Any] = [brain_id]
        if kinds:
            sql += f" AND d.kind IN ({', '.join('?' for _ in kinds)})"
            params += list(kinds)
        rows = self.portable.query(sql + " ORDER BY d.id DESC LIMIT ?", [*params, limit], brain_id)
        return [self.model_rows.document(r) for r in rows]

    def create_document(self, brain_id: int, new: NewDocument, job_kind: str) -> Document:
        db = self.portable
        try:
            with db.transaction(brain_id) as conn:
                row = self._insert_document(conn, brain_id, new, job_kind)
        except self.unique_error:
            # Added a moment ago by another writer: the same bytes, or the same file's path.
            raise Conflict("this brain already has a document with this content or path") from None
        return self.model_rows.document(row)

    def _insert_document(self, conn: Any, brain_id: int, new: NewDocument, job_kind: str) -> Any:
        """A new document's row and its job, inside the caller's transaction; the row."""
        rows = self.portable.run(
            conn,
            "INSERT INTO documents(brain_id, kind, name, title, source_url, mime_type,"
            " size_bytes, content_hash, status, tags, metadata, source_path, origin)"
            " VALUES (?,?,?,?,?,?,?,?, 'processing', ?, ?, ?, ?)"
            f" RETURNING {DOCUMENT_COLUMNS}",
            (
                brain_id, new.kind, new.name, new.title, new.source_url, new.mime_type,
                new.size_bytes, new.content_hash, json.dumps(list(new.tags)),
                json.dumps(new.metadata, default=str), new.source_path, new.origin,
            ),
        )  # fmt: skip
        self._queue_job(conn, brain_id, int(rows[0]["id"]), job_kind)
        return rows[0]

    def write_documents(
        self,
        brain_id: int,
        creates: Sequence[NewDocument],
        replaces: Sequence[tuple[int, str, NewDocument]],
        job_kind: str,
        *,
        keep_versions: int,
    ) -> tuple[list[Document], list[Document], list[str]]:
        """`create_document` for each of `creates` and `replace_content` for each of
        `replaces` (document id, expected hash, new content), all in one transaction: all
        written, or none (`Conflict`). Returns the created and the replaced documents, in
        order, and the content hashes nothing uses any more."""
        db = self.portable
        old_hashes: list[str] = []
        try:
            with db.transaction(brain_id) as conn:
                created = [self._insert_document(conn, brain_id, n, job_kind) for n in creates]
                for start in range(0, len(replaces), 500):
                    old_hashes += self._replace_in(
                        conn, brain_id, replaces[start : start + 500], job_kind, keep_versions
                    )
        except self.unique_error:
            raise Conflict(
                "this brain already has a document with one of these contents or paths"
            ) from None
        replaced = self.get_documents(brain_id, [document_id for document_id, _, _ in replaces])
        if len(replaced) < len(replaces):
            raise NotFound("a document was deleted while its new content was written")
        return (
            [self.model_rows.document(r) for r in created],
            replaced,
            self.unused(old_hashes),
        )

    def requeue_document(self, brain_id: int, document_id: int, job_kind: str) -> Document:
        self.get_document(brain_id, document_id)
        db = self.portable
        with db.transaction(brain_id) as conn:
            db.run(
                conn,
                "UPDATE documents SET status = 'processing', status_reason = NULL,"
                f" vectors_pending = ?, progress = NULL, updated_at = {self.now} WHERE id = ?",
                (False, document_id),
            )
            self._queue_job(conn, brain_id, document_id, job_kind)
        return self.get_document(brain_id, document_id)

    def delete_document(self, brain_id: int, document_id: int) -> list[str]:
        """Delete a document with its index, jobs and earlier versions; returns the content
        hashes (its own, its versions') that nothing uses any more."""
        doc = self.get_document(brain_id, document_id)
        db = self.portable
        with db.transaction(brain_id) as conn:
            # Read in the transaction that deletes them: a version added meanwhile is counted.
            versions = db.run(
                conn,
                "SELECT DISTINCT content_hash FROM document_versions WHERE document_id = ?",
                (document_id,),
            )
            self._delete_rows(conn, brain_id, document_id)  # the versions go by cascade
        return self.unused([doc.content_hash, *(str(r["content_hash"]) for r in versions)])

    def document_ids(self, brain_id: int | None = None) -> list[int]:
        if brain_id is None:
            rows = self.portable.query("SELECT id FROM documents ORDER BY id")
        else:
            rows = self.portable.query(
                "SELECT id FROM documents WHERE brain_id = ? ORDER BY id", (brain_id,), brain_id
            )
        return [int(r["id"]) for r in rows]

    def fail_document(self, document_id: int, reason: str, code: str | None = None) -> None:
        self.portable.change(
            "UPDATE documents SET status = 'failed', status_reason = ?, failure_code = ?,"
            f" progress = NULL, updated_at = {self.now} WHERE id = ?",
            (reason, code, document_id),
        )

    def set_progress(self, document_id: int, progress: Progress | None) -> None:
        self.portable.change(
            "UPDATE documents SET progress = ? WHERE id = ? AND status = 'processing'",
            (None if progress is None else json.dumps(progress.as_json()), document_id),
        )

    def document_text(self, brain_id: int, document_id: int) -> str | None:
        self.get_document(brain_id, document_id)
        rows = self.portable.query(
            "SELECT text FROM document_texts WHERE document_id = ?", (document_id,), brain_id
        )
        return str(rows[0]["text"]) if rows and rows[0]["text"] is not None else None

    def list_chunks(self, brain_id: int, document_id: int) -> list[Chunk]:
        self.get_document(brain_id, document_id)
        rows = self.portable.query(
            f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE document_id = ? AND brain_id = ?"
            " ORDER BY idx",
            (document_id, brain_id),
            brain_id,
        )
        return [self.model_rows.chunk(r) for r in rows]

    def unused(self, hashes: Sequence[str]) -> list[str]:
        """Of these content hashes, those no document or version of any brain uses any more
        (their blobs may go). Across brains, so outside any one brain's row-level security
        scope."""
        used: set[str] = set()
        for batch, marks in _batches(hashes):
            rows = self.portable.query(
                f"SELECT content_hash FROM documents WHERE content_hash IN ({marks})"
                " UNION SELECT content_hash FROM document_versions"
                f" WHERE content_hash IN ({marks})",
                [*batch, *batch],
            )
            used |= {str(r["content_hash"]) for r in rows}
        return [h for h in dict.fromkeys(hashes) if h not in used]

    def merge_document_metadata(self, document_id: int, values: dict[str, Any]) -> None:
        self._rewrite_labels({document_id: lambda metadata, tags: ({**metadata, **values}, tags)})

    def set_extracted(self, extracted: Mapping[int, tuple[dict[str, Any], Sequence[str]]]) -> None:
        def change(
            found: dict[str, Any], tags: Sequence[str]
        ) -> Callable[[Labels, list[str]], tuple[Labels, list[str]]]:
            def changed(metadata: Labels, current: list[str]) -> tuple[Labels, list[str]]:
                before = (metadata.get("extracted") or {}).get("tags") or []
                kept = [t for t in current if t not in before or t in tags]
                labels = {**metadata, "extracted": {**found, "tags": list(tags)}}
                return labels, list(dict.fromkeys((*kept, *tags)))

            return changed

        self._rewrite_labels({i: change(found, tags) for i, (found, tags) in extracted.items()})

    def _rewrite_labels(
        self, changes: Mapping[int, Callable[[Labels, list[str]], tuple[Labels, list[str]]]]
    ) -> None:
        """Documents' metadata and tags read, changed and written in one locked step (the
        worker and a person may both be at it); one transaction for all of them, each
        statement once per batch (the text stage writes a batch of files at once)."""
        db = self.portable
        decode = self.model_rows.decode_json
        with db.transaction() as conn:  # the brain is not known: the system scope
            for batch, marks in _batches(sorted(changes)):  # one lock order for every writer
                rows = db.run(
                    conn,
                    f"SELECT id, metadata, tags FROM documents WHERE id IN ({marks})"
                    f" ORDER BY id{self.for_update}",
                    batch,
                )
                updates = []
                for row in rows:
                    metadata = dict(decode(row["metadata"]) or {}) if row["metadata"] else {}
                    tags = list(decode(row["tags"]) or []) if row["tags"] else []
                    metadata, tags = changes[int(row["id"])](metadata, tags)
                    updates.append(
                        (json.dumps(metadata, default=str), json.dumps(tags), int(row["id"]))
                    )
                if updates:
                    db.run_many(
                        conn, "UPDATE documents SET metadata = ?, tags = ? WHERE id = ?", updates
                    )

    # search hits --------------------------------------------------------------------------
    def chunks_with_documents(self, chunk_ids: Sequence[int]) -> dict[int, tuple[Chunk, Document]]:
        """The hits' chunks with their documents; one deleted meanwhile is left out."""
        found: dict[int, tuple[Chunk, Document]] = {}
        for batch, marks in _batches(chunk_ids):
            chunk_rows = self.portable.query(
                f"SELECT {CHUNK_COLUMNS} FROM chunks WHERE id IN ({marks})", batch
            )
            docs: dict[int, Document] = {}
            for ids, doc_marks in _batches([int(r["document_id"]) for r in chunk_rows]):
                for r in self.portable.query(
                    f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id IN ({doc_marks})", ids
                ):
                    docs[int(r["id"])] = self.model_rows.document(r)
            for r in chunk_rows:
                doc = docs.get(int(r["document_id"]))
                if doc is not None:
                    found[int(r["id"])] = (self.model_rows.chunk(r), doc)
        return found

    def chunk_documents(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        found: dict[int, int] = {}
        for batch, marks in _batches(chunk_ids):
            for r in self.portable.query(
                f"SELECT id, document_id FROM chunks WHERE id IN ({marks})", batch
            ):
                found[int(r["id"])] = int(r["document_id"])
        return found

    def chunk_languages(self, document_ids: Sequence[int]) -> dict[int, dict[str, str | None]]:
        found: dict[int, dict[str, str | None]] = {}
        for batch, marks in _batches(document_ids):
            for r in self.portable.query(
                "SELECT document_id, embed_hash, language FROM chunks"
                f" WHERE document_id IN ({marks})",
                batch,
            ):
                found.setdefault(int(r["document_id"]), {})[str(r["embed_hash"])] = r["language"]
        return found

    # status -------------------------------------------------------------------------------
    def brain_languages(self, brain_id: int) -> dict[str, int]:
        rows = self.portable.query(
            "SELECT language, count(*) AS n FROM documents WHERE brain_id = ?"
            " AND language IS NOT NULL GROUP BY language ORDER BY n DESC, language",
            (brain_id,),
            brain_id,
        )
        return {str(r["language"]): int(r["n"]) for r in rows}

    def stats(self, brain_id: int) -> BrainStats:
        # One statement, so one snapshot: the counts agree with each other.
        rows = self.portable.query(
            "SELECT 'status' AS part, status AS k, count(*) AS n FROM documents"
            " WHERE brain_id = ? GROUP BY status"
            " UNION ALL SELECT 'kind', kind, count(*) FROM documents WHERE brain_id = ?"
            " GROUP BY kind"
            " UNION ALL SELECT 'jobs', status, count(*) FROM jobs WHERE brain_id = ?"
            " GROUP BY status"
            " UNION ALL SELECT 'stage', stage, count(*) FROM jobs WHERE brain_id = ?"
            " AND status IN ('queued', 'running') GROUP BY stage"
            " UNION ALL SELECT 'chunks', NULL, count(*) FROM chunks WHERE brain_id = ?"
            " UNION ALL SELECT 'bytes', NULL, coalesce(sum(size_bytes), 0) FROM documents"
            " WHERE brain_id = ?"
            " UNION ALL SELECT 'pending', NULL, count(*) FROM documents WHERE brain_id = ?"
            " AND status = 'processing' AND vectors_pending",
            (brain_id,) * 7,
            brain_id,
        )
        parts: dict[str, dict[str, int]] = {"status": {}, "kind": {}, "jobs": {}, "stage": {}}
        totals: dict[str, int] = {}
        for r in rows:
            if r["k"] is None:
                totals[str(r["part"])] = int(r["n"])
            else:
                parts[str(r["part"])][str(r["k"])] = int(r["n"])
        return BrainStats(
            documents_by_status=parts["status"],
            documents_by_kind=parts["kind"],
            chunks=totals["chunks"],
            jobs_by_status=parts["jobs"],
            bytes_stored=totals["bytes"],
            vectors_pending=totals["pending"],
            queue_by_stage=parts["stage"],
        )
