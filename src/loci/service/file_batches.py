"""Several files of a followed folder kept at once: `add_files`, what a folder's reconcile uses
instead of one `Library.add_bytes` a file.

Each file ends as `add_bytes(…, source_path=…)` would leave it — a new document, its path's
document updated in place, or the same bytes already here (deduped) — but the batch's originals
are made durable together (`BlobStore.put_many`: their flushes overlap, one disk commit for
many) and their rows and jobs are written in one transaction (one commit, and on PostgreSQL one
round trip less a file). That was the cost of a first sync: one fsync and, on PostgreSQL, one
committed transaction a file.

What stays as before: a file refused by its plan (empty, over the cap) fails alone with its
reason; the canonical bytes are durable before any row names them, so a process killed
half-way leaves blobs without rows (harmless, written again by the next sync) and never a row
without its blob; a file whose bytes another document has, or a batch that meets another
writer (a path or content added meanwhile: the transaction's `Conflict`), is added file by
file through `add_bytes`, which knows every case.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
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
class FileBytes:
    """A file of a folder to keep: its name, bytes, absolute path and metadata (its stamp)."""

    name: str
    data: bytes
    source_path: str
    metadata: dict[str, Any]


Outcome = AddResult | LociError


@dataclass
class _Write:
    index: int
    file: FileBytes
    new: NewDocument
    replacing: Document | None  # the document its path has (updated in place), or None


def add_files(library: Library, brain: Brain, files: Sequence[FileBytes]) -> list[Outcome]:
    """Keep `files` as `add_bytes` would each; what became of each, in order (an error for one
    that was refused)."""
    store = library.store
    outcomes: list[Outcome | None] = [None] * len(files)
    writes: list[_Write] = []
    one_by_one: list[int] = []
    digests = [sha256_hex(file.data) for file in files]
    # What is there already, looked up for the whole batch at once.
    at_paths = {
        d.source_path: d for d in store.documents_at(brain.id, [f.source_path for f in files])
    }
    known = {d.content_hash for d in store.documents_with_hashes(brain.id, digests)}
    for index, (file, digest) in enumerate(zip(files, digests, strict=True)):
        name = clean_name(file.name)
        plan = plan_file(name, file.data, max_bytes=library.settings.max_file_bytes)
        if plan.refusal is not None:
            outcomes[index] = plan.refusal
            continue
        at_path = at_paths.get(file.source_path)
        if at_path is not None and (at_path.gone_at is not None or at_path.content_hash == digest):
            one_by_one.append(index)  # back from gone, or unchanged: `add_bytes` says which
            continue
        if digest in known:
            one_by_one.append(index)  # the same bytes as another: a dedupe
            continue
        known.add(digest)
        tags = at_path.tags if at_path is not None else ()
        new = NewDocument(
            kind="file",
            name=name,
            title=None,
            source_url=None,
            mime_type=None,
            size_bytes=len(file.data),
            content_hash=digest,
            tags=tags,
            metadata=dict(file.metadata),
            source_path=file.source_path,
        )
        writes.append(_Write(index, file, new, at_path))
    if writes:
        results = write_batch(
            library, brain, [Pending(w.file.data, w.new, w.replacing) for w in writes]
        )
        if results is None:  # another writer got to one of them: each its own way
            one_by_one += [w.index for w in writes]
        else:
            for w, result in zip(writes, results, strict=True):
                outcomes[w.index] = result
    for index in sorted(one_by_one):
        file = files[index]
        try:
            outcomes[index] = library.add_bytes(
                brain,
                file.name,
                file.data,
                metadata=file.metadata,
                source_path=file.source_path,
            )
        except LociError as error:
            outcomes[index] = error
    done: list[Outcome] = []
    for outcome in outcomes:
        assert outcome is not None  # every file is written, deduped or refused above
        done.append(outcome)
    return done
