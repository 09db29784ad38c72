"""The folders brains follow (`sources`) and the document moves a sync makes, the same on
every backend (portable SQL over `self.portable`, mixed into each store beside `BrainTables`).

Every statement names its brain, so on PostgreSQL it runs in that brain's row-level security
scope; only listing the sources of every brain (a sync of all of them) spans brains.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from loci.errors import Conflict, NotFound
from loci.models import Document, OnDelete, Schedule, Source, SourceMode
from loci.store.brain_tables import DOCUMENT_COLUMNS
from loci.store.model_rows import ModelRows
from loci.store.portable import PortableDatabase
from loci.store.schema import column_list

Entry = dict[str, str]  # a page of a folder followed as pages: path, page and file hashes
SOURCE_COLUMNS = column_list("sources")  # read by name (`_source`)


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


class SourceTables(ABC):
    now: ClassVar[str]
    epoch: ClassVar[str]
    unique_error: ClassVar[type[Exception]]
    model_rows: ClassVar[ModelRows]
    for_update: ClassVar[str]
    # The SQL of the inode number a document's file stamp recorded (`metadata.file.ino`).
    file_inode: ClassVar[str]

    @property
    @abstractmethod
    def portable(self) -> PortableDatabase:
        """The store's database, for portable SQL."""

    def _source(self, row: Mapping[str, Any]) -> Source:
        decode = self.model_rows.decode_json
        report = row["last_report"]
        return Source(
            id=int(row["id"]),
            brain_id=int(row["brain_id"]),
            path=str(row["path"]),
            include=tuple(decode(row["include_globs"]) or ()),
            exclude=tuple(decode(row["exclude_globs"]) or ()),
            on_delete=row["on_delete"],
            created_at=str(row["created_at"]),
            last_sync_at=row["last_sync_at"],
            last_report=dict(decode(report)) if report is not None else None,
            mode=row["mode"],
            kind=str(row["kind"]),
            every_s=_number(row["every_s"]),
            next_run_at=_number(row["next_run_at"]),
            lease_owner=row["lease_owner"],
            lease_until=_number(row["lease_until"]),
            failures=int(row["failures"]),
            last_error=row["last_error"],
            state=dict(decode(row["state"]) or {}) if row["state"] is not None else {},
            options=dict(decode(row["options"]) or {}) if row["options"] is not None else {},
            secret=row["secret"],
        )

    def create_source(
        self,
        brain_id: int,
        path: str,
        include: Sequence[str],
        exclude: Sequence[str],
        on_delete: OnDelete,
        mode: SourceMode = "files",
        schedule: Schedule | None = None,
    ) -> Source:
        """A source; with `schedule`, one the worker runs (due at once)."""
        plan = schedule or Schedule("folder")
        first_run = None if plan.every_s is None else self.epoch
        try:
            rows = self.portable.returning(
                "INSERT INTO sources(brain_id, path, include_globs, exclude_globs, on_delete,"
                " mode, kind, every_s, options, secret, next_run_at)"
                f" VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, {first_run or 'NULL'})"
                f" RETURNING {SOURCE_COLUMNS}",
                (
                    brain_id, path, json.dumps(list(include)), json.dumps(list(exclude)),
                    on_delete, mode, plan.kind, plan.every_s, json.dumps(dict(plan.options)),
                    plan.secret,
                ),
                brain_id,
            )  # fmt: skip
        except self.unique_error:
            raise Conflict(f"{path} is already a source of this brain") from None
        return self._source(rows[0])

    def sources(self, brain_id: int | None = None) -> list[Source]:
        if brain_id is None:
            rows = self.portable.query(f"SELECT {SOURCE_COLUMNS} FROM sources ORDER BY id")
        else:
            rows = self.portable.query(
                f"SELECT {SOURCE_COLUMNS} FROM sources WHERE brain_id = ? ORDER BY id",
                (brain_id,),
                brain_id,
            )
        return [self._source(r) for r in rows]

    def get_source(self, brain_id: int, source_id: int) -> Source:
        rows = self.portable.query(
            f"SELECT {SOURCE_COLUMNS} FROM sources WHERE id = ? AND brain_id = ?",
            (source_id, brain_id),
            brain_id,
        )
        if not rows:
            raise NotFound(f"no source {source_id} in this brain")
        return self._source(rows[0])

    def delete_source(self, brain_id: int, source_id: int) -> bool:
        return (
            self.portable.change(
                "DELETE FROM sources WHERE id = ? AND brain_id = ?", (source_id, brain_id), brain_id
            )
            > 0
        )

    def record_sync(self, brain_id: int, source_id: int, report: dict[str, Any]) -> None:
        self.portable.change(
            f"UPDATE sources SET last_sync_at = {self.now}, last_report = ?"
            " WHERE id = ? AND brain_id = ?",
            (json.dumps(report), source_id, brain_id),
            brain_id,
        )

    def documents_under(self, brain_id: int, root: str) -> list[Document]:
        # A prefix compared as text, not LIKE: a folder's name may hold % or _.
        prefix = root.rstrip("/") + "/"
        rows = self.portable.query(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE brain_id = ?"
            " AND source_path IS NOT NULL AND substr(source_path, 1, CAST(? AS INTEGER)) = ?"
            " ORDER BY id",
            (brain_id, len(prefix), prefix),
            brain_id,
        )
        return [self.model_rows.document(r) for r in rows]

    def move_document(
        self, brain_id: int, document_id: int, name: str, source_path: str
    ) -> Document:
        changed = self.portable.change(  # where it went, it is there: no longer gone
            f"UPDATE documents SET name = ?, source_path = ?, gone_at = NULL,"
            f" updated_at = {self.now} WHERE id = ? AND brain_id = ?",
            (name, source_path, document_id, brain_id),
            brain_id,
        )
        if not changed:
            raise NotFound(f"no document {document_id} in this brain")
        rows = self.portable.query(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE id = ?", (document_id,), brain_id
        )
        return self.model_rows.document(rows[0])

    def mark_gone(self, brain_id: int, document_ids: Sequence[int], gone: bool) -> list[int]:
        """Mark the documents whose files were deleted (`gone`), or whose files are back;
        returns those that changed (a document already so is left as it was, its date too)."""
        changed: list[int] = []
        unique = list(dict.fromkeys(document_ids))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ", ".join("?" for _ in batch)
            set_to, was = (self.now, "IS NULL") if gone else ("NULL", "IS NOT NULL")
            rows = self.portable.returning(
                f"UPDATE documents SET gone_at = {set_to} WHERE brain_id = ? AND id IN ({marks})"
                f" AND gone_at {was} RETURNING id",
                (brain_id, *batch),
                brain_id,
            )
            changed += [int(r["id"]) for r in rows]
        return changed

    def documents_at(self, brain_id: int, paths: Sequence[str]) -> list[Document]:
        return self._documents_where(brain_id, "source_path", paths)

    def documents_with_hashes(self, brain_id: int, hashes: Sequence[str]) -> list[Document]:
        return self._documents_where(brain_id, "content_hash", hashes)

    def _documents_where(
        self, brain_id: int, column: str, values: Sequence[Any], where: str = "", *params: Any
    ) -> list[Document]:
        """The brain's documents whose `column` (SQL) is one of `values`, a query for 500 of
        them; `where` and its `params` narrow them further."""
        found: list[Document] = []
        unique = list(dict.fromkeys(values))
        for start in range(0, len(unique), 500):
            batch = unique[start : start + 500]
            marks = ", ".join("?" for _ in batch)
            rows = self.portable.query(
                f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE brain_id = ?{where}"
                f" AND {column} IN ({marks}) ORDER BY id",
                (brain_id, *params, *batch),
                brain_id,
            )
            found += [self.model_rows.document(r) for r in rows]
        return found

    def documents_with_inodes(
        self, brain_id: int, root: str, inodes: Sequence[int]
    ) -> list[Document]:
        prefix = root.rstrip("/") + "/"
        under = " AND source_path IS NOT NULL AND substr(source_path, 1, CAST(? AS INTEGER)) = ?"
        return self._documents_where(brain_id, self.file_inode, inodes, under, len(prefix), prefix)

    def set_file_stamps(self, brain_id: int, stamps: Mapping[int, dict[str, Any]]) -> None:
        """Each document's `metadata["file"]` set to its stamp, all in one transaction."""
        db = self.portable
        ids = list(stamps)
        with db.transaction(brain_id) as conn:
            for start in range(0, len(ids), 500):
                batch = ids[start : start + 500]
                marks = ", ".join("?" for _ in batch)
                rows = db.run(
                    conn,
                    f"SELECT id, metadata FROM documents WHERE brain_id = ? AND id IN ({marks})"
                    f"{self.for_update}",
                    (brain_id, *batch),
                )
                changes = []
                for r in rows:
                    metadata = dict(self.model_rows.decode_json(r["metadata"]) or {})
                    metadata["file"] = stamps[int(r["id"])]
                    changes.append((json.dumps(metadata, default=str), int(r["id"])))
                if changes:
                    db.run_many(conn, "UPDATE documents SET metadata = ? WHERE id = ?", changes)

    def gone_documents(self, brain_id: int) -> list[Document]:
        rows = self.portable.query(
            f"SELECT {DOCUMENT_COLUMNS} FROM documents WHERE brain_id = ?"
            " AND gone_at IS NOT NULL ORDER BY id",
            (brain_id,),
            brain_id,
        )
        return [self.model_rows.document(r) for r in rows]

    # a folder followed as pages: its sync's manifest ----------------------------------------
    def source_pages(self, brain_id: int, source_id: int) -> dict[str, Entry]:
        """doc id → {"path", "hash" (the page's), "file" (the file's, when not the same)}, as
        the last sync of the source left them."""
        rows = self.portable.query(
            "SELECT doc_id, path, page_hash, file_hash FROM source_pages"
            " WHERE source_id = ? AND brain_id = ?",
            (source_id, brain_id),
            brain_id,
        )
        pages: dict[str, Entry] = {}
        for r in rows:
            entry = {"path": str(r["path"]), "hash": str(r["page_hash"])}
            if r["file_hash"] is not None:
                entry["file"] = str(r["file_hash"])
            pages[str(r["doc_id"])] = entry
        return pages

    def update_source_pages(
        self,
        brain_id: int,
        source_id: int,
        changed: Mapping[str, Entry],
        removed: Sequence[str],
    ) -> None:
        """Record the entries a sync changed and forget those it removed, in one transaction
        (an edit written back meanwhile touched its own entry only)."""
        db = self.portable
        with db.transaction(brain_id) as conn:
            db.run_many(
                conn,
                "DELETE FROM source_pages WHERE source_id = ? AND doc_id = ?",
                [(source_id, doc_id) for doc_id in (*removed, *changed)],
            )
            db.run_many(
                conn,
                "INSERT INTO source_pages(source_id, brain_id, doc_id, path, page_hash, file_hash)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                [
                    (source_id, brain_id, doc_id, e["path"], e["hash"], e.get("file"))
                    for doc_id, e in changed.items()
                ],
            )
