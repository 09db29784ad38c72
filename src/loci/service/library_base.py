"""What every part of `Library` holds: the store, the blobs, the settings and the clients built on
first use. Each part (`documents`, `adding`, `notes`, `indexing`) is a class over it, and
`loci.service.library.Library` is all of them."""

from __future__ import annotations

from collections.abc import Callable

from loci.curate.pipeline import Curation
from loci.embed.base import Embedder
from loci.llm.transcribe import Transcriber
from loci.service.index_jobs import IndexJobs
from loci.service.settings import ServiceSettings
from loci.store.base import Store
from loci.store.blobs import BlobStore


class LibraryBase:
    """The state the parts of `Library` share."""

    store: Store
    blobs: BlobStore
    settings: ServiceSettings
    curation: Curation
    # Called on use, each built once by whoever assembled the service: listing files or adding
    # a note never loads the embedding model, a chat client or a speech-to-text client.
    _embedder: Callable[[], Embedder]
    _transcriber: Callable[[], Transcriber | None]
    _index_jobs: IndexJobs
