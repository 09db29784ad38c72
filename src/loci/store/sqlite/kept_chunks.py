"""The chunks an edit keeps, on SQLite (`loci.store.kept_chunks` pairs them).

A kept chunk keeps its row and its FTS5 row: the analysed text is not made again (stemming
each word in Python) nor written into the full-text index twice (deleted, then inserted), and
the derived indexes (`loci.store.sqlite.search_index`), which follow inserted and deleted
chunk ids, have nothing to catch up on for it. Vectors are kept by hash here, so every stored
chunk counts as embedded.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loci.models import IndexedChunk, IndexWrite
from loci.store.kept_chunks import PLACE, PLACE_COLUMNS, Kept, StoredChunk, pair, place


def keep(conn: Any, write: IndexWrite) -> Kept:
    """The document's stored chunks, paired with its new ones (`pair`)."""
    stored = [
        StoredChunk(int(row[0]), write.document_id, str(row[1]), row[2], tuple(row[3:]), True)
        for row in conn.execute(
            f"SELECT id, embed_hash, language, {PLACE_COLUMNS} FROM chunks"
            " WHERE document_id = ? ORDER BY idx",
            (write.document_id,),
        )
    ]
    return pair(stored, [write], frozenset())


def move(conn: Any, moved: Sequence[tuple[int, IndexedChunk]]) -> None:
    """Write kept chunks' new places. Their indexes are first set aside (negative), as
    `(document_id, idx)` is unique and checked row by row."""
    if not moved:
        return
    conn.executemany("UPDATE chunks SET idx = -1 - idx WHERE id = ?", [(i,) for i, _ in moved])
    assignments = ", ".join(f"{name} = ?" for name, _ in PLACE)
    conn.executemany(
        f"UPDATE chunks SET {assignments} WHERE id = ?",
        [(*place(chunk), chunk_id) for chunk_id, chunk in moved],
    )
