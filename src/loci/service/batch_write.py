"""Writing many new or changed documents at once, for the batched adds of a followed folder
(`file_batches`) and of an import (`import_batches`): the originals made durable together
(`BlobStore.put_many`: their flushes overlap, one disk commit for many), then every row and
index job in one transaction. The canonical bytes are durable before any row names them, so a
process killed half-way leaves blobs without rows, never a row without its blob."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from loci.errors import Conflict
from loci.models import Brain, Document, NewDocument
from loci.service.adding import AddResult
from loci.service.library import Library
from loci.store.job_order import INDEX_JOB


@dataclass(frozen=True)
class Pending:
    data: bytes
    new: NewDocument
    replacing: Document | None  # the document updated in place (its path's, its origin's)


def write_batch(
    library: Library, brain: Brain, writes: Sequence[Pending]
) -> list[AddResult] | None:
    """Each write's result, in order; None when another writer got to one of them first (a
    path, an origin or content added meanwhile): nothing of the batch is written then, and the
    caller adds each its own way."""
    library.blobs.put_many([w.data for w in writes])
    try:
        created, replaced, unused = library.store.write_documents(
            brain.id,
            [w.new for w in writes if w.replacing is None],
            [(w.replacing.id, w.replacing.content_hash, w.new) for w in writes if w.replacing],
            INDEX_JOB,
            keep_versions=library.settings.versions_keep,
        )
    except Conflict:
        return None
    library.forget_blobs(unused)
    made, updated = iter(created), iter(replaced)
    return [
        AddResult(next(made), deduped=False)
        if w.replacing is None
        else AddResult(next(updated), deduped=False, refreshed=True)
        for w in writes
    ]
