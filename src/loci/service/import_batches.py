"""Several imported items kept at once: `add_many`, what an import (`loci.service.importing`)
uses instead of one `Library.add_bytes` an item.

Each item ends as `add_bytes(…, origin=…)` would leave it — a new document, or its origin's
document updated in place (same id, a version kept, its tags kept with the new ones) — but the
batch's originals are made durable together (`BlobStore.put_many`: one disk commit for many
rather than one fsync an item) and their rows and index jobs are written in one transaction.
That was the cost of a big import: one fsync and one committed transaction an item, most of a
10,000-note export's import time (docs/benchmarks-journal.md, "Importing exports").

What stays as before: an item refused by its plan (empty, over the cap) fails alone with its
reason; the canonical bytes are durable before any row names them. An item whose document is
already there with the same bytes (a second run of the export), whose bytes another document
has (a dedupe), or a batch that meets another writer (the transaction's `Conflict`), is left
to the caller to add through `add_bytes`, which knows every case (`None` in the answer).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from loci.errors import LociError
from loci.ingest.plan import plan_file
from loci.ingest.sources import clean_name
from loci.models import Brain, Document, NewDocument
from loci.service.adding import AddResult
from loci.service.batch_write import Pending, write_batch
from loci.service.library import Library
from loci.store.blobs import sha256_hex


@dataclass(frozen=True)
class ItemBytes:
    """What `add_bytes` is given for one imported item or attachment."""

    name: str
    data: bytes
    origin: str
    title: str | None = None
    mime_type: str | None = None
    source_url: str | None = None
    tags: Sequence[str] = ()
    metadata: dict[str, Any] = field(default_factory=dict)


# Added (or updated), refused with its reason, or None: for `add_bytes` to add.
Outcome = AddResult | LociError | None


@dataclass
class _Write:
    index: int
    data: bytes
    new: NewDocument
    replacing: Document | None  # the document its origin has (updated in place), or None


def add_many(
    library: Library, brain: Brain, items: Sequence[ItemBytes], origins: dict[str, int]
) -> list[Outcome]:
    """Keep `items` as `add_bytes` would each, those it can in one transaction; what became
    of each, in order. `origins`: the brain's documents of this import's origins (origin ->
    id, `Store.origins`), read once for the whole import rather than once an item; the
    documents created here are added to it."""
    store = library.store
    outcomes: list[Outcome] = [None] * len(items)
    digests = [sha256_hex(item.data) for item in items]
    known = {d.content_hash for d in store.documents_with_hashes(brain.id, digests)}
    writes: list[_Write] = []
    for index, (item, digest) in enumerate(zip(items, digests, strict=True)):
        name = clean_name(item.name)
        plan = plan_file(
            name,
            item.data,
            mime_type=item.mime_type,
            source_url=item.source_url,
            max_bytes=library.settings.max_file_bytes,
        )
        if plan.refusal is not None:
            outcomes[index] = plan.refusal
            continue
        at_origin = store.find_by_origin(brain.id, item.origin) if item.origin in origins else None
        if at_origin is not None and at_origin.content_hash == digest:
            continue  # unchanged: `add_bytes` says so, and gives it the new tags
        if digest in known:
            continue  # the same bytes as another document (or an item before it): a dedupe
        known.add(digest)
        tags = tuple(dict.fromkeys(t.strip() for t in item.tags if t.strip()))
        if at_origin is not None:  # as `add_bytes` refreshes: the tags it had stay
            tags = tuple(dict.fromkeys((*at_origin.tags, *tags)))
        new = NewDocument(
            kind="file",
            name=name,
            title=item.title,
            source_url=item.source_url,
            mime_type=item.mime_type,
            size_bytes=len(item.data),
            content_hash=digest,
            tags=tags,
            metadata=dict(item.metadata),
            origin=item.origin,
        )
        writes.append(_Write(index, item.data, new, at_origin))
    if not writes:
        return outcomes
    results = write_batch(library, brain, [Pending(w.data, w.new, w.replacing) for w in writes])
    if results is None:  # another writer got to one of them: each through `add_bytes`
        return outcomes
    for w, result in zip(writes, results, strict=True):
        outcomes[w.index] = result
        if w.replacing is None:
            origins[w.new.origin or ""] = result.document.id
    return outcomes
