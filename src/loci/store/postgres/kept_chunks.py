"""The chunks an edit keeps, on PostgreSQL (`loci.store.kept_chunks` pairs them).

Here a chunk's postings are most of what its text stage writes (one row per distinct term, in
three indexes), and a new chunk row, even with a vector reused from the old one, goes into the
vector index again: a kept chunk keeps its postings and its vector.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet

from loci.models import IndexedChunk, IndexWrite
from loci.store.kept_chunks import PLACE, PLACE_COLUMNS, Kept, StoredChunk, pair, place
from loci.store.postgres.connection import Cursor


def keep(cur: Cursor, writes: Sequence[IndexWrite], model: str, given: AbstractSet[str]) -> Kept:
    """The batch's documents' stored chunks, paired with their new ones (`pair`)."""
    cur.execute(
        f"SELECT id, document_id, embed_hash, language, {PLACE_COLUMNS},"
        " embedding IS NOT NULL AND embed_model = %s AS embedded"
        " FROM chunks WHERE document_id = ANY(%s) ORDER BY document_id, idx",
        (model, [w.document_id for w in writes]),
    )
    stored = [
        StoredChunk(
            int(row["id"]),
            int(row["document_id"]),
            str(row["embed_hash"]),
            row["language"],
            tuple(row[name] for name, _ in PLACE),
            bool(row["embedded"]),
        )
        for row in cur.fetchall()
    ]
    return pair(stored, writes, given)


def move(cur: Cursor, moved: Sequence[tuple[int, IndexedChunk]]) -> None:
    """Write kept chunks' new places. Their indexes are first set aside (negative), as
    `(document_id, idx)` is unique and checked row by row: shifting 1, 2 to 2, 3 in one
    statement would meet the row not yet moved."""
    if not moved:
        return
    ids = [chunk_id for chunk_id, _ in moved]
    cur.execute("UPDATE chunks SET idx = -1 - idx WHERE id = ANY(%s)", (ids,))
    places = list(zip(*(place(chunk) for _, chunk in moved), strict=True))
    arrays = ", ".join(f"%s::{kind}[]" for _, kind in PLACE)
    cur.execute(
        f"UPDATE chunks c SET ({PLACE_COLUMNS}) = ({', '.join(f'x.{n}' for n, _ in PLACE)})"
        f" FROM unnest(%s::bigint[], {arrays}) AS x(id, {PLACE_COLUMNS}) WHERE c.id = x.id",
        (ids, *map(list, places)),
    )
