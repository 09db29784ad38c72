"""The chunks an edit keeps: an edited file's passages whose text did not change stay the rows
they were, with their postings and vectors, and only their place is written again.

On PostgreSQL a chunk's postings are most of what its text stage writes (one row per distinct
term, in three indexes), and a new chunk row, even with a vector reused from the old one, goes
into the vector index again. An edit usually touches one part of a file: the rest of its chunks
are the same text under the same title and headings. Such a chunk is found by its embedding
input's hash (title, heading path and text) and its language (which picks its stemmer), so its
postings and vector are still right; it keeps its id and only its position (index, offsets,
lines) is updated, and only when that moved.
"""

from __future__ import annotations

from collections.abc import Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from loci.models import IndexedChunk, IndexWrite
from loci.store.postgres.connection import Cursor, Row

# The columns of a chunk's place in its document, with their types: what a kept chunk may need
# written again (in `_place`'s order).
PLACE = (
    ("idx", "int"), ("page", "int"), ("line_start", "int"), ("line_end", "int"),
    ("char_start", "int"), ("char_end", "int"), ("token_count", "int"), ("content_hash", "text"),
    ("region", "text"), ("ocr_confidence", "float8"), ("time_start", "float8"),
    ("time_end", "float8"),
)  # fmt: skip
PLACE_COLUMNS = ", ".join(name for name, _ in PLACE)


def _place(chunk: IndexedChunk) -> tuple[object, ...]:
    c = chunk.draft
    return (
        c.index, *c.location.span_columns(), c.token_count, c.content_hash,
        *c.location.reading_columns(),
    )  # fmt: skip


@dataclass
class Kept:
    """The pairing of a batch's new chunks with its documents' stored ones."""

    new: list[tuple[int, IndexedChunk]] = field(default_factory=list)  # (document, chunk) to add
    moved: list[tuple[int, IndexedChunk]] = field(default_factory=list)  # (chunk id, new place)
    removed: list[int] = field(default_factory=list)  # stored chunk ids no new chunk keeps
    unembedded: dict[int, int] = field(default_factory=dict)  # document -> kept without vector


def keep(cur: Cursor, writes: Sequence[IndexWrite], model: str, given: AbstractSet[str]) -> Kept:
    """Pair each new chunk with a stored chunk of its document that has the same embedding
    input and language, each stored chunk used once, in order. A stored chunk with no vector
    of this model is not kept for an input whose vector is `given`: the new row takes it."""
    cur.execute(
        f"SELECT id, document_id, embed_hash, language, {PLACE_COLUMNS},"
        " embedding IS NOT NULL AND embed_model = %s AS embedded"
        " FROM chunks WHERE document_id = ANY(%s) ORDER BY document_id, idx",
        (model, [w.document_id for w in writes]),
    )
    stored: dict[tuple[int, str, str | None], list[Row]] = {}
    for row in cur.fetchall():
        key = (int(row["document_id"]), str(row["embed_hash"]), row["language"])
        stored.setdefault(key, []).append(row)
    kept = Kept()
    for write in writes:
        for chunk in write.chunks:
            same = stored.get((write.document_id, chunk.embed_hash, chunk.language))
            if same and not same[0]["embedded"] and chunk.embed_hash in given:
                same = None
            if not same:
                kept.new.append((write.document_id, chunk))
                continue
            row = same.pop(0)
            if tuple(row[name] for name, _ in PLACE) != _place(chunk):
                kept.moved.append((int(row["id"]), chunk))
            if not row["embedded"]:
                kept.unembedded[write.document_id] = kept.unembedded.get(write.document_id, 0) + 1
    kept.removed = [int(row["id"]) for rows in stored.values() for row in rows]
    return kept


def move(cur: Cursor, moved: Sequence[tuple[int, IndexedChunk]]) -> None:
    """Write kept chunks' new places. Their indexes are first set aside (negative), as
    `(document_id, idx)` is unique and checked row by row: shifting 1, 2 to 2, 3 in one
    statement would meet the row not yet moved."""
    if not moved:
        return
    ids = [chunk_id for chunk_id, _ in moved]
    cur.execute("UPDATE chunks SET idx = -1 - idx WHERE id = ANY(%s)", (ids,))
    places = list(zip(*(_place(chunk) for _, chunk in moved), strict=True))
    arrays = ", ".join(f"%s::{kind}[]" for _, kind in PLACE)
    cur.execute(
        f"UPDATE chunks c SET ({PLACE_COLUMNS}) = ({', '.join(f'x.{n}' for n, _ in PLACE)})"
        f" FROM unnest(%s::bigint[], {arrays}) AS x(id, {PLACE_COLUMNS}) WHERE c.id = x.id",
        (ids, *map(list, places)),
    )
