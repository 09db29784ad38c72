"""`Loci.status` on both backends: the disk figures a person reads in `loci status`."""

from __future__ import annotations

import psycopg
import pytest

from loci.service import Loci
from loci.store.postgres import PostgresStore
from loci.store.sqlite import SqliteStore

pytestmark = pytest.mark.both_backends


def test_database_size_comes_from_the_store(loci: Loci) -> None:
    brain = loci.brain()
    added = loci.library.add_note(brain, "The zebra beta ships on Friday, from the Leeds office.")
    loci.library.wait_for(brain, [added.document.id])

    if isinstance(loci.store, PostgresStore):
        # The server's own figure, asked on a connection of our own. Sizes only grow here,
        # but a background autovacuum may add a visibility map between two reads: bracket it.
        sql = "SELECT pg_database_size(current_database())"
        with psycopg.connect(loci.store.db.url) as conn:
            before = conn.execute(sql).fetchone()
            reported = loci.status(brain).database_bytes
            after = conn.execute(sql).fetchone()
        assert before is not None and after is not None
        assert before[0] <= reported <= after[0]
        assert reported > 1_000_000  # a real database: catalogs and all, not a row count
    else:
        assert isinstance(loci.store, SqliteStore)
        path = loci.store.db.path
        reported = loci.status(brain).database_bytes
        # What `du` would count: the file, and the WAL and its index beside it (WAL mode).
        files = [path.with_name(path.name + suffix) for suffix in ("", "-wal", "-shm")]
        assert path.stat().st_size > 0
        assert reported == sum(f.stat().st_size for f in files if f.exists())
