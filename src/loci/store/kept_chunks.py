"""The chunks an edit keeps: an edited file's passages whose text did not change stay the rows
they were, with their text index and vectors, and only their place is written again.

An edit usually touches one part of a file: the rest of its chunks are the same text under the
same title and headings. Such a chunk is found by its embedding input's hash (title, heading
path and text) and its language (which picks its stemmer), so what was indexed for it is still
right; it keeps its id and only its position (index, offsets, lines) is updated, and only when
that moved. Each backend reads its stored chunks and writes the outcome its own way
(`loci.store.postgres.kept_chunks`, `loci.store.sqlite.store`); the pairing is this module's.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from loci.models import IndexedChunk, IndexWrite
from loci.store.schema import array_types

# The columns of a chunk's place in its document, with their PostgreSQL array types: what a
# kept chunk may need written again (in `place`'s order).
PLACE = array_types(
    "chunks", "idx", "page", "line_start", "line_end", "char_start", "char_end", "token_count",
    "content_hash", "region", "ocr_confidence", "time_start", "time_end",
)  # fmt: skip
PLACE_COLUMNS = ", ".join(name for name, _ in PLACE)


def place(chunk: IndexedChunk) -> tuple[object, ...]:
    """The chunk's values of the `PLACE` columns."""
    c = chunk.draft
    return (
        c.index, *c.location.span_columns(), c.token_count, c.content_hash,
        *c.location.reading_columns(),
    )  # fmt: skip


@dataclass(frozen=True)
class StoredChunk:
    """A chunk row as the pairing needs it."""

    id: int
    document_id: int
    embed_hash: str
    language: str | None
    place: tuple[object, ...]  # its `PLACE` columns
    embedded: bool  # it holds a vector of the model being written (PostgreSQL keeps it in the row)


@dataclass
class Kept:
    """The pairing of a batch's new chunks with its documents' stored ones."""

    new: list[tuple[int, IndexedChunk]] = field(default_factory=list)  # (document, chunk) to add
    moved: list[tuple[int, IndexedChunk]] = field(default_factory=list)  # (chunk id, new place)
    removed: list[int] = field(default_factory=list)  # stored chunk ids no new chunk keeps
    unembedded: dict[int, int] = field(default_factory=dict)  # document -> kept without vector


def pair(
    stored: Iterable[StoredChunk], writes: Sequence[IndexWrite], given: AbstractSet[str]
) -> Kept:
    """Pair each new chunk with a stored chunk of its document that has the same embedding
    input and language, each stored chunk used once, in order (`stored` in each document's
    order). A stored chunk with no vector of this model is not kept for an input whose vector
    is `given`: the new row takes it."""
    by_key: dict[tuple[int, str, str | None], list[StoredChunk]] = {}
    for row in stored:
        by_key.setdefault((row.document_id, row.embed_hash, row.language), []).append(row)
    kept = Kept()
    for write in writes:
        for chunk in write.chunks:
            same = by_key.get((write.document_id, chunk.embed_hash, chunk.language))
            if same and not same[0].embedded and chunk.embed_hash in given:
                same = None
            if not same:
                kept.new.append((write.document_id, chunk))
                continue
            row = same.pop(0)
            if row.place != place(chunk):
                kept.moved.append((row.id, chunk))
            if not row.embedded:
                kept.unembedded[write.document_id] = kept.unembedded.get(write.document_id, 0) + 1
    kept.removed = [row.id for rows in by_key.values() for row in rows]
    return kept
