"""Running `index` jobs: parse and chunk each document, embed the batch's passages together,
then swap each document's index in.

`IndexJobs` is the handler the worker calls with a batch of claimed jobs. The embedding model,
the chat model (for image captions) and speech to text are built on the first batch that needs
them. After a document is indexed, `after_indexed` may add what it carries (an e-mail's
attachments); its failure is logged and leaves the document indexed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from loci.embed.base import Embedder
from loci.ingest.indexer import Indexer, IndexerSettings, Prepared
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.models import Job
from loci.store.base import Store
from loci.store.blobs import BlobStore

log = logging.getLogger(__name__)


class IndexJobs:
    """The `index` job handler: a batch in, each job's outcome (None: done) out."""

    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        settings: IndexerSettings,
        embedder: Callable[[], Embedder],
        chat: Callable[[], Chat | None],
        transcriber: Callable[[], Transcriber | None],
        after_indexed: Callable[[Prepared], None],
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.settings = settings
        self._embedder = embedder
        self._chat = chat
        self._transcriber = transcriber
        self._after_indexed = after_indexed

    def __call__(self, jobs: Sequence[Job]) -> dict[int, BaseException | None]:
        """Index a batch of documents. A failure stays with its own document."""
        brains = {b.id: b for b in self.store.list_brains()}  # fresh embedder identities
        chat = self._chat() if self.settings.caption_images else None
        indexer = Indexer(
            self.store, self.blobs, self._embedder(), self.settings, chat, self._transcriber()
        )
        outcomes: dict[int, BaseException | None] = {}
        prepared: dict[int, Prepared] = {}
        for job in jobs:
            try:
                document = self.store.get_document(job.brain_id, job.document_id)
                prepared[job.id] = indexer.prepare(brains[job.brain_id], document)
            except Exception as error:
                outcomes[job.id] = error
        try:
            vectors = indexer.embed(list(prepared.values()))
        except Exception as error:
            return outcomes | dict.fromkeys(prepared, error)
        for job_id, item in prepared.items():
            try:
                indexer.commit(item, vectors)
                outcomes[job_id] = None
            except Exception as error:
                outcomes[job_id] = error
                continue
            try:
                self._after_indexed(item)
            except Exception:  # the message itself is indexed; reprocessing retries these
                log.exception("could not add the attachments of document %s", item.document.id)
        return outcomes
