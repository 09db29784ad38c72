"""A document's earlier contents, as both backends keep them: new content replaces a
document's (same id), the content it had becomes its newest version, and only the newest few
are kept (`loci.service.versions`: list, diff, restore). Mixed into `BrainTables`, which gives
it documents, the hashes nothing uses any more, and, from each store, its job queue.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from loci.errors import Conflict
from loci.models import Document, DocumentVersion, NewDocument
from loci.store.model_rows import ModelRows
from loci.store.portable import PortableDatabase
from loci.store.schema import column_list

# A `DocumentVersion`, matched to its fields by name.
VERSION_COLUMNS = column_list("document_versions", without=("id", "brain_id"))


class VersionTables(ABC):
    # The SQL of the current time; what the backend raises when a write breaks a unique
    # constraint; rows to models with the backend's JSON decoding.
    now: ClassVar[str]
    unique_error: ClassVar[type[Exception]]
    model_rows: ClassVar[ModelRows]
    # What a SELECT ends with to lock the rows it reads until the transaction ends ("" where
    # a write transaction already holds the whole database).
    for_update: ClassVar[str]

    @property
    @abstractmethod
    def portable(self) -> PortableDatabase:
        """The store's database, for portable SQL."""

    @abstractmethod
    def _queue_jobs(
        self, conn: Any, brain_id: int, document_ids: Sequence[int], job_kind: str
    ) -> None:
        """A fresh job for each of the documents (at most 500), inside the caller's
        transaction."""

    @abstractmethod
    def get_document(self, brain_id: int, document_id: int) -> Document: ...

    @abstractmethod
    def unused(self, hashes: Sequence[str]) -> list[str]: ...

    def replace_content(
        self,
        brain_id: int,
        document_id: int,
        expected_hash: str,
        new: NewDocument,
        job_kind: str,
        *,
        keep_versions: int,
    ) -> tuple[Document, list[str]]:
        """Point a document at new canonical bytes if it still has `expected_hash` (else
        `Conflict`), and queue its re-indexing. The content it had becomes its newest version
        and only the newest `keep_versions` are kept (0: none). Returns the document and the
        content hashes nothing uses any more (the caller may delete their blobs)."""
        self.get_document(brain_id, document_id)
        db = self.portable
        try:
            with db.transaction(brain_id) as conn:
                old_hashes = self._replace_in(
                    conn, brain_id, [(document_id, expected_hash, new)], job_kind, keep_versions
                )
        except self.unique_error:
            raise Conflict(
                "another document in this brain already has exactly this content"
            ) from None
        return self.get_document(brain_id, document_id), self.unused(old_hashes)

    def _replace_in(
        self,
        conn: Any,
        brain_id: int,
        replaces: Sequence[tuple[int, str, NewDocument]],
        job_kind: str,
        keep_versions: int,
    ) -> list[str]:
        """`replace_content` for each of `replaces` (at most 500: document id, expected hash,
        new content) inside the caller's transaction, each statement once for them all (on
        PostgreSQL a statement costs a round trip: a folder's hundred edited files were seven
        hundred); the content hashes it replaced or dropped (their blobs may be unused now)."""
        if not replaces:
            return []
        db = self.portable
        ids = [document_id for document_id, _, _ in replaces]
        marks = ", ".join("?" for _ in ids)
        current = {
            int(r["id"]): str(r["content_hash"])
            for r in db.run(
                conn,
                f"SELECT id, content_hash FROM documents WHERE brain_id = ? AND id IN ({marks})"
                f" ORDER BY id{self.for_update}",
                (brain_id, *ids),
            )
        }
        if any(current.get(i) != expected for i, expected, _ in replaces):
            raise Conflict("the document changed since you read it; reload it and apply your edit")
        changed = [i for i, expected, new in replaces if new.content_hash != expected]
        dropped = self._keep_versions(conn, changed, keep_versions)
        db.run_many(
            conn,
            "UPDATE documents SET name = ?, title = ?, mime_type = ?, size_bytes = ?,"
            " content_hash = ?, tags = ?, metadata = ?, status = 'processing',"
            f" status_reason = NULL, vectors_pending = ?, progress = NULL,"
            f" updated_at = {self.now} WHERE id = ?",
            [
                (
                    new.name, new.title, new.mime_type, new.size_bytes, new.content_hash,
                    json.dumps(list(new.tags)), json.dumps(new.metadata), False, document_id,
                )
                for document_id, _, new in replaces
            ],
        )  # fmt: skip
        self._queue_jobs(conn, brain_id, ids, job_kind)
        return [*(expected for _, expected, _ in replaces), *dropped]

    def _keep_versions(self, conn: Any, document_ids: Sequence[int], keep: int) -> list[str]:
        """The documents' current contents as their newest versions, inside the caller's
        transaction, then all but each one's newest `keep` versions dropped; their hashes."""
        if not document_ids:
            return []
        db = self.portable
        marks = ", ".join("?" for _ in document_ids)
        db.run(
            conn,
            "INSERT INTO document_versions(brain_id, document_id, number, name, mime_type,"
            " size_bytes, content_hash, saved_at)"
            " SELECT d.brain_id, d.id,"
            " COALESCE((SELECT max(v.number) FROM document_versions v"
            " WHERE v.document_id = d.id), 0) + 1,"
            " d.name, d.mime_type, d.size_bytes, d.content_hash,"
            # It became the document's content when the one before it was replaced.
            " COALESCE((SELECT max(v.replaced_at) FROM document_versions v"
            " WHERE v.document_id = d.id), d.created_at)"
            f" FROM documents d WHERE d.id IN ({marks})",
            tuple(document_ids),
        )
        rows = db.run(
            conn,
            f"DELETE FROM document_versions WHERE document_id IN ({marks}) AND number <="
            " (SELECT max(v.number) FROM document_versions v"
            " WHERE v.document_id = document_versions.document_id) - CAST(? AS INTEGER)"
            " RETURNING content_hash",
            (*document_ids, max(keep, 0)),
        )
        return [str(r["content_hash"]) for r in rows]

    def document_versions(self, brain_id: int, document_id: int) -> list[DocumentVersion]:
        self.get_document(brain_id, document_id)
        rows = self.portable.query(
            f"SELECT {VERSION_COLUMNS} FROM document_versions"
            " WHERE document_id = ? AND brain_id = ? ORDER BY number DESC",
            (document_id, brain_id),
            brain_id,
        )
        return [self.model_rows.model(DocumentVersion, r) for r in rows]
