"""Reading and pruning `chunk_log`, the log derived indexes catch up from (migrations 6 and 9).

Triggers add one entry per chunk inserted or deleted, with a `seq` that only ever grows
(AUTOINCREMENT: a pruned or deleted top entry's number is never handed out again); the store
adds one, marked `vectors_only`, for each chunk whose vector is written after the chunk. A derived
index remembers the position it reflects and later reads the chunk ids logged after it.

Pruning drops a brain's old entries and raises its floor (`chunk_log_floor`) to the last seq
dropped. Entries after the floor are all still there, so an index at or past the floor can catch
up; one older than the floor may have missed changes and must be rebuilt (or reloaded from a
saved file that is recent enough). Every reader compares its position with the floor, so a
process that has not searched for a while notices instead of silently missing changes.
"""

from __future__ import annotations

import logging
from typing import cast

import apsw

from loci.store.sqlite.connection import Database

log = logging.getLogger(__name__)


def floor(db: Database, brain_id: int) -> int:
    """The last seq pruned from the brain's log (0: nothing pruned)."""
    return int(db.scalar("SELECT seq FROM chunk_log_floor WHERE brain_id = ?", (brain_id,)) or 0)


def position(db: Database, brain_id: int) -> int:
    """The brain's latest log entry: what an index that has every change reflects."""
    latest = db.scalar("SELECT max(seq) FROM chunk_log WHERE brain_id = ?", (brain_id,))
    # With every entry pruned the floor still says where the log stood.
    return max(int(latest or 0), floor(db, brain_id))


def changed(
    db: Database, brain_id: int, after: int, upto: int, *, with_vectors: bool = True
) -> list[int]:
    """Chunk ids inserted or deleted after `after` up to `upto` (the caller checked the floor),
    and, `with_vectors`, those that got their vector since (migration 23: an index that holds
    no vectors skips them)."""
    only = "" if with_vectors else " AND vectors_only = 0"
    return [
        int(r[0])
        for r in db.conn.execute(
            "SELECT DISTINCT chunk_id FROM chunk_log WHERE brain_id = ? AND seq > ? AND seq <= ?"
            + only,
            (brain_id, after, upto),
        )
    ]


def prune(db: Database, brain_id: int, upto: int, retain: int) -> int:
    """Drop the brain's entries at or below `upto`, keeping at least its `retain` newest, and
    raise its floor to match; returns how many entries went. `upto` is a position a saved
    index reflects, so a process that loses its place can reload that instead of rebuilding."""
    try:
        with db.write() as conn:
            # The newest entry that may go: the (retain+1)th newest, or `upto` if older.
            rows = conn.execute(
                "SELECT seq FROM chunk_log WHERE brain_id = ? AND seq <= ?"
                " ORDER BY seq DESC LIMIT 1 OFFSET"
                " max(0, ? - (SELECT count(*) FROM chunk_log WHERE brain_id = ? AND seq > ?))",
                (brain_id, upto, retain, brain_id, upto),
            ).fetchall()
            if not rows:
                return 0
            cut = cast(int, rows[0][0])
            conn.execute("DELETE FROM chunk_log WHERE brain_id = ? AND seq <= ?", (brain_id, cut))
            dropped = conn.changes()
            conn.execute(
                "INSERT INTO chunk_log_floor(brain_id, seq) SELECT id, ? FROM brains"
                " WHERE id = ? ON CONFLICT(brain_id) DO UPDATE SET seq = max(seq, excluded.seq)",
                (cut, brain_id),
            )
            return dropped
    except apsw.Error:  # a read-only database: the log just stays longer
        log.warning("could not prune the change log of brain %s", brain_id, exc_info=True)
        return 0
