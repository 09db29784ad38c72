"""A brain's documents: `Library`, the service `Loci` holds as `loci.library`.

It is made of one part a concept, each a module of its own: `documents` (listing, reading,
removing, reindexing), `adding` (files, pages, attachments, captures, the preflight), `notes`, and
`indexing` (the worker, and waiting for it).
"""

from __future__ import annotations

from collections.abc import Callable

from loci.curate.pipeline import Curation
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.service.embedders import Embedders
from loci.service.index_jobs import IndexJobs
from loci.service.indexing import Indexing
from loci.service.notes import Notes
from loci.service.settings import ServiceSettings
from loci.store.base import Store
from loci.store.blobs import BlobStore


class Library(Notes, Indexing):
    """A brain's documents: adding them, reading them, changing them, and the background
    work that indexes them."""

    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        settings: ServiceSettings,
        embedders: Embedders,
        chat: Callable[[], Chat | None],
        transcriber: Callable[[], Transcriber | None],
        curation: Curation,
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.settings = settings
        self._embedder = embedders.default
        self._transcriber = transcriber
        self.curation = curation
        self._index_jobs = IndexJobs(
            store,
            blobs,
            settings.indexer,
            embedders.for_brain,
            embedders.default,
            chat,
            transcriber,
            self._add_attachments,
        )
