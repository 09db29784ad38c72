"""Running `index` jobs, in their two stages.

`IndexJobs` is the handler the worker calls with a batch of claimed jobs, all of one stage:

- text: each document is parsed and chunked, and the batch's chunks and text indexes are
  written together (`Indexer.write_texts`, one transaction: on PostgreSQL a statement costs as
  much as the rows it writes) — before a file over `QUICK_TEXT_BYTES` is read, so what was
  read is found while a long OCR or transcription runs. A document
  whose every chunk already has a vector (nothing new, or only unchanged passages) is done;
  the others go on to the vectors stage, placed in the queue by how long their embedding will
  take. Parsing reports its progress (OCR page n of m) to the document's row, a few times a
  second at most.
- vectors: one slice of about `IndexerSettings.embed_slice_s` seconds of embedding is done for
  the batch's documents in queue order (its size comes from the rate this process measured),
  in one embedder call, and each document's vectors are written with its progress. A document
  with more to embed goes back to the queue keeping its place, so a file added meanwhile has
  its text read after at most one slice.

The embedding model, the chat model (for image captions) and speech to text are built on the
first batch that needs them. After a document's text is written, `after_indexed` may add what
it carries (an e-mail's attachments); its failure is logged and leaves the document indexed.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial

from loci.embed.base import Embedder
from loci.errors import NotFound
from loci.ingest.indexer import Indexer, IndexerSettings, Prepared, StaleChunks
from loci.ingest.parse_process import prestart
from loci.ingest.progress import Throttled, reporting
from loci.ingest.timings import IndexTimings
from loci.jobs.worker import Advance, Outcome
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.models import Brain, Document, Job
from loci.store.base import Store
from loci.store.blobs import BlobStore
from loci.store.job_order import QUICK_TEXT_BYTES, REINDEX_JOB

log = logging.getLogger(__name__)

FIRST_RATE = 30.0  # chunks/s assumed until this process has measured its embedder
MIN_SLICE, MAX_SLICE = 8, 2048  # chunks in one slice of embedding


@dataclass
class _Slice:
    job: Job
    document: Document
    inputs: list[tuple[str, str]]  # (hash, input) embedded in this slice


class IndexJobs:
    """The `index` job handler: a batch in, each job's outcome (None: done) out."""

    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        settings: IndexerSettings,
        embedder: Callable[[Brain], Embedder],
        default: Callable[[], Embedder],
        chat: Callable[[], Chat | None],
        transcriber: Callable[[], Transcriber | None],
        after_indexed: Callable[[Prepared], None],
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.settings = settings
        self._embedder = embedder  # the model of a brain
        self._default = default  # the configured one
        self._chat = chat
        self._transcriber = transcriber
        self._after_indexed = after_indexed
        self.timings = IndexTimings()  # for the whole life of this handler (the bench reads it)
        self._timings_lock = threading.Lock()
        self._rate: float | None = None  # chunks/s the embedder did in this process

    def __call__(self, jobs: Sequence[Job]) -> dict[int, Outcome]:
        """Run a batch; a failure stays with its own document."""
        if any(job.stage == "text" for job in jobs):
            prestart(self.settings.budgets)  # it boots while the embedder is made ready
        brains = {b.id: b for b in self.store.list_brains()}  # fresh embedder identities
        chat = self._chat() if self.settings.caption_images else None
        timings = IndexTimings()  # this batch's: other threads may be indexing meanwhile
        outcomes: dict[int, Outcome] = {}
        try:
            # Each brain's documents are embedded by its own model (`Embedders.for_brain`).
            for embedder, group in self._by_embedder(jobs, brains):
                indexer = Indexer(
                    self.store,
                    self.blobs,
                    embedder,
                    self.settings,
                    chat,
                    self._transcriber(),
                    timings,
                )
                text = [job for job in group if job.stage == "text"]
                vectors = [job for job in group if job.stage == "vectors"]
                outcomes |= self._text_stage(indexer, brains, text)
                outcomes |= self._vectors_stage(indexer, brains, vectors)
            return outcomes
        finally:
            with self._timings_lock:
                self.timings.add(timings)

    def _by_embedder(
        self, jobs: Sequence[Job], brains: dict[int, Brain]
    ) -> list[tuple[Embedder, list[Job]]]:
        groups: dict[int, tuple[Embedder, list[Job]]] = {}
        for job in jobs:
            brain = brains.get(job.brain_id)
            embedder = self._embedder(brain) if brain is not None else self._default()
            groups.setdefault(id(embedder), (embedder, []))[1].append(job)
        return list(groups.values())

    @property
    def rate(self) -> float:
        """Chunks a second this process embeds (a first guess until it has measured)."""
        return self._rate or FIRST_RATE

    def _text_stage(
        self, indexer: Indexer, brains: dict[int, Brain], jobs: Sequence[Job]
    ) -> dict[int, Outcome]:
        outcomes: dict[int, Outcome] = {}
        read: list[tuple[Job, Prepared]] = []  # parsed and chunked, not yet written
        documents = self._documents(jobs)
        # An edited file's unchanged passages keep the language they were found in; a reindex
        # detects every passage's again.
        languages = self.store.chunk_languages(
            [job.document_id for job in jobs if job.kind != REINDEX_JOB]
        )
        for job in jobs:
            document = documents.get(job.document_id)
            if document is None:
                outcomes[job.id] = NotFound(f"no document {job.document_id} in this brain")
                continue
            if document.size_bytes > QUICK_TEXT_BYTES:
                # A long read comes (OCR, a transcription): what is read is written first, so
                # it is found meanwhile.
                self._write_texts(indexer, read, outcomes)
                read = []
            try:
                watch = Throttled(partial(self.store.set_progress, document.id))
                with reporting(watch):
                    before = languages.get(document.id)
                    read.append((job, indexer.prepare(brains[job.brain_id], document, before)))
            except Exception as error:
                outcomes[job.id] = error
        self._write_texts(indexer, read, outcomes)
        return outcomes

    def _documents(self, jobs: Sequence[Job]) -> dict[int, Document]:
        """The jobs' documents, one query per brain (not one per job)."""
        by_brain: dict[int, list[int]] = {}
        for job in jobs:
            by_brain.setdefault(job.brain_id, []).append(job.document_id)
        return {
            document.id: document
            for brain_id, ids in by_brain.items()
            for document in self.store.get_documents(brain_id, ids)
        }

    def _write_texts(
        self, indexer: Indexer, read: Sequence[tuple[Job, Prepared]], outcomes: dict[int, Outcome]
    ) -> None:
        """Write the text indexes of what was read in one store write (on PostgreSQL each
        statement costs as much as the rows it writes); if that fails (a document deleted
        meanwhile), each alone, so a failure stays with its own document."""
        if not read:
            return
        written: list[int | None | Exception]
        try:
            written = list(indexer.write_texts([prepared for _, prepared in read]))
        except Exception:
            written = []
            for _, prepared in read:
                try:
                    written.append(indexer.write_text(prepared))
                except Exception as error:
                    written.append(error)
        for (job, prepared), missing in zip(read, written, strict=True):
            if isinstance(missing, Exception):
                outcomes[job.id] = missing
                continue
            if missing is None:  # its document has newer content, with a job of its own
                outcomes[job.id] = None
                continue
            outcomes[job.id] = Advance("vectors", missing / self.rate) if missing else None
            try:
                self._after_indexed(prepared)
            except Exception:  # the message itself is indexed; reprocessing retries these
                log.exception("could not add the attachments of document %s", job.document_id)

    def _vectors_stage(
        self, indexer: Indexer, brains: dict[int, Brain], jobs: Sequence[Job]
    ) -> dict[int, Outcome]:
        outcomes: dict[int, Outcome] = {}
        budget = self._slice_chunks()
        work: list[_Slice] = []
        for job in jobs:
            if budget <= 0:  # this slice is full: back to the queue, in the same place
                outcomes[job.id] = Advance("vectors")
                continue
            try:
                document = self.store.get_document(job.brain_id, job.document_id)
                pending = indexer.pending_inputs(brains[job.brain_id], document)
            except StaleChunks as stale:
                log.info("%s", stale)
                outcomes[job.id] = Advance("text")
                continue
            except Exception as error:
                outcomes[job.id] = error
                continue
            work.append(_Slice(job, document, pending[:budget]))
            budget -= len(pending)
        wanted = {h: text for item in work for h, text in item.inputs}
        timings = indexer.timings
        embedded, seconds = timings.embedded, timings.seconds["embed"]
        try:
            vectors = indexer.embed(wanted)
        except Exception as error:
            return outcomes | {item.job.id: error for item in work}
        self._measured(timings.embedded - embedded, timings.seconds["embed"] - seconds)
        for item in work:
            try:
                own = {h: vectors[h] for h, _ in item.inputs}
                remaining = indexer.write_vectors(item.document, own)
            except Exception as error:
                outcomes[item.job.id] = error
                continue
            outcomes[item.job.id] = Advance("vectors") if remaining else None
        return outcomes

    def _slice_chunks(self) -> int:
        return max(MIN_SLICE, min(MAX_SLICE, round(self.rate * self.settings.embed_slice_s)))

    def _measured(self, chunks: int, seconds: float) -> None:
        """Fold a slice's rate into the running one (slices of a few chunks say little)."""
        if chunks < MIN_SLICE or seconds <= 0:
            return
        rate = chunks / seconds
        self._rate = rate if self._rate is None else 0.5 * self._rate + 0.5 * rate
