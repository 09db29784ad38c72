"""One document a file path, as a rule of the schema: two writers adding the same path at once
(a watcher and a sync in another process) cannot make two documents of it, and a database that
got two before the rule keeps the oldest as the path's document."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.errors import Conflict
from loci.models import NewDocument
from loci.store.base import Store
from loci.store.sqlite import SqliteStore
from loci.store.sqlite.connection import Database
from loci.store.sqlite.migrations import MIGRATIONS, migrate


def _new(path: str, digest: str) -> NewDocument:
    return NewDocument(
        kind="file", name=Path(path).name, title=None, source_url=None, mime_type=None,
        size_bytes=1, content_hash=digest, tags=(), metadata={}, source_path=path,
    )  # fmt: skip


@pytest.mark.both_backends
def test_a_second_document_of_the_same_path_is_refused(store: Store) -> None:
    brain = store.ensure_brain("default")
    first = store.create_document(brain.id, _new("/notes/a.md", "a" * 64), "index")
    with pytest.raises(Conflict, match="content or path"):
        store.create_document(brain.id, _new("/notes/a.md", "b" * 64), "index")
    other = store.ensure_brain("other")  # another brain may follow the same file
    store.create_document(other.id, _new("/notes/a.md", "b" * 64), "index")
    assert store.find_by_path(brain.id, "/notes/a.md") == first


def test_a_path_doubled_before_the_rule_keeps_its_oldest_document(tmp_path: Path) -> None:
    db = Database(tmp_path / "loci.db")
    rule = next(
        i for i, m in enumerate(MIGRATIONS) if "UNIQUE INDEX documents_source_path" in str(m)
    )
    migrate(db, version=rule)  # the schema just before the rule
    db.execute("INSERT INTO brains(name) VALUES ('default')")
    for digest in ("a", "b", "c"):
        db.execute(
            "INSERT INTO documents(brain_id, kind, name, size_bytes, content_hash, status,"
            " source_path) VALUES (1, 'file', 'a.md', 1, ?, 'ready', '/notes/a.md')",
            (digest * 64,),
        )
    db.close()
    store = SqliteStore(tmp_path / "loci.db")
    try:
        kept = store.find_by_path(1, "/notes/a.md")
        assert kept is not None and kept.content_hash == "a" * 64
        assert len(store.list_documents(1)) == 3  # the others stay, no longer following it
    finally:
        store.close()
