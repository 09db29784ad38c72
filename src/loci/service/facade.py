"""`Loci`, the object every surface calls: a small holder of the services that do the work.

`loci.library` (adding, reading, changing documents; the worker), `loci.searching` (search,
related documents), `loci.answers` (asking, study, conversations), `loci.reviews` (digests),
`loci.graph` (the brain graph), `loci.sources` (folders kept in sync), `loci.scheduled` (feeds,
web pages and other places the worker keeps in step on a schedule), `loci.versions` (a
document's earlier contents) and `loci.curation` (capture first, curate later). Each is built
here, once, with the collaborators it uses — none reaches back into `Loci`. What is left on
`Loci` itself is about brains as a whole: finding, creating, renaming, deleting them, and their
status. Surfaces never reach past these services into the store or the indexer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, TypeVar

from loci.auth.secret_box import SecretBox
from loci.curate.pipeline import Curation
from loci.embed.base import Embedder
from loci.errors import InvalidInput, NotFound
from loci.graph.linked_search import LinkedSearch
from loci.graph.service import BrainGraph
from loci.jobs.worker import Worker
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.models import Brain, BrainStats, Visibility
from loci.names import check_name
from loci.search.engine import SearchEngine
from loci.search.rerank import Reranker
from loci.service.embedders import Embedders, ModelBuilder
from loci.service.importing import Importing
from loci.service.library import Library
from loci.service.reading import Reading
from loci.service.scheduled import ScheduledSources
from loci.service.searching import Searching
from loci.service.settings import ServiceSettings
from loci.service.source_pages import PageSources
from loci.service.sources import Sources
from loci.service.versions import Versions
from loci.store.base import Store
from loci.store.blobs import BlobStore
from loci.store.job_order import INDEX_JOB

if TYPE_CHECKING:
    from loci.answer.facade import Answers
    from loci.review.facade import Reviews

T = TypeVar("T")


@dataclass(frozen=True)
class Status:
    brain: Brain
    stats: BrainStats
    embedder_model: str | None  # None until the first document is indexed
    embedder_dims: int
    language: str  # what the BM25 leg stems this brain's words as ("auto": each text's own)
    languages: dict[str, int]  # detected languages (ISO 639-1) -> documents mostly in each
    database_bytes: int
    blob_bytes: int


def _none() -> None:
    return None


def _once(factory: Callable[[], T]) -> Callable[[], T]:
    """`factory`, called on first use only: listing files or a text search never loads the
    embedding model, and every service shares the one client that is built."""
    return cache(factory)


class Loci:
    """The services of one store and blob store, wired together."""

    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        embedder: Callable[[], Embedder],
        settings: ServiceSettings,
        chat: Callable[[], Chat | None] | None = None,
        reranker: Reranker | None = None,
        transcriber: Callable[[], Transcriber | None] | None = None,
        models: ModelBuilder | None = None,
        secrets: Callable[[], SecretBox] | None = None,
    ) -> None:
        """`secrets`: the server's secret box, which seals the credentials of sources (None:
        a source with a credential is refused)."""
        self.store = store
        self.blobs = blobs
        self.settings = settings
        self._embedder = _once(embedder)
        self._chat: Callable[[], Chat | None] = _once(chat or _none)
        self._transcriber: Callable[[], Transcriber | None] = _once(transcriber or _none)
        # `embedder` is the configured model; a brain made with another (`--model`) is read
        # by that one, built by `models` when first needed.
        self.embedders = Embedders(
            self._embedder,
            models,
            default_id=settings.embed_model_id,
            default_languages=settings.embed_languages,
            models_dir=settings.models_dir,
        )
        engine = SearchEngine(store, self.embedders, settings.ranking, reranker)
        self.searching = Searching(store, engine, LinkedSearch(store))
        self.graph = BrainGraph(store, blobs, self.searching.passages)
        self.curation = Curation(
            store,
            blobs,
            self.graph,
            self._chat,
            limits=settings.curation,
            max_bytes=settings.max_file_bytes,
        )
        self.library = Library(
            store, blobs, settings, self.embedders, self._chat, self._transcriber, self.curation
        )
        fence = settings.fence
        self.sources = Sources(store, self.library, PageSources(store, self.graph, fence), fence)
        self.versions = Versions(store, blobs, settings, INDEX_JOB, self.library.forget_blobs)
        self.reading = Reading(store, blobs)
        self.scheduled = ScheduledSources(
            store, self.library, settings.fetch, settings.schedule, secrets
        )
        self.importing = Importing(self.library, settings.import_limits, self.scheduled.follow)

    def worker(self, name: str | None = None) -> Worker:
        """The worker of `loci serve` and `loci worker`: it indexes documents and runs the
        scheduled sources as they fall due."""
        return self.library.worker(name, scheduled=self.scheduled.run_due)

    # Asking and reviews are built when first used, their modules imported then: a command
    # that lists or adds files (most of them) should not pay for the answer pipeline.
    @cached_property
    def answers(self) -> Answers:
        from loci.answer.facade import Answers
        from loci.answer.quoting import Reader
        from loci.embed.base import question_and_passages

        # The embedder reads an answer's candidate units beside the question, in the languages
        # it reads: the ones search trusts its vectors for.
        embedder = self._embedder  # not `self`: no service refers back to Loci
        reader = Reader(
            lambda texts: embedder().embed(texts),
            self.settings.embed_languages,
            lambda question, texts: question_and_passages(embedder(), question, texts),
        )
        return Answers(
            self.store, self.graph, self.searching.search, self._chat, self.curation, reader
        )

    @cached_property
    def reviews(self) -> Reviews:
        from loci.review.facade import Reviews

        return Reviews(self.store, self.graph, self._chat)

    @property
    def embedder(self) -> Embedder:
        """Built on first use: listing files or a text search never loads the model."""
        return self._embedder()

    # brains -------------------------------------------------------------------------------
    def brain(self, name: str | None = None) -> Brain:
        """The brain `name` (None: the default one), created on first use: for writes that
        add things, where naming a new brain is how a person starts one."""
        if not name or name == self.settings.default_brain:
            return self.store.ensure_brain(self.settings.default_brain)
        try:
            return self.store.get_brain(name)
        except NotFound:
            return self.store.ensure_brain(check_name("brain", name))

    def existing_brain(self, name: str | None = None) -> Brain:
        """The brain `name`, which must exist (`NotFound`), so a typo never makes a brain; the
        default brain alone is still created on first use."""
        if not name or name == self.settings.default_brain:
            return self.brain()
        return self.store.get_brain(name)

    def find_brain(self, name: str | None = None) -> Brain | None:
        """The brain if it exists; unlike `brain`, never creates it (for dry runs)."""
        try:
            return self.store.get_brain(name or self.settings.default_brain)
        except NotFound:
            return None

    def brains(self) -> list[Brain]:
        return self.store.list_brains()

    def create_brain(
        self, name: str, visibility: Visibility = "restricted", model: str | None = None
    ) -> Brain:
        """A new brain with no members: the workspace's admins own it (`Conflict` if the name
        is taken). `model`: the local embedding model its vectors are made with (a name of
        `loci models list`); None: the configured one."""
        if visibility not in ("restricted", "workspace"):
            raise InvalidInput(f"visibility must be restricted or workspace, got {visibility!r}")
        chosen = self.embedders.catalog_model(model) if model is not None else None
        brain = self.store.create_brain(check_name("brain", name), visibility, None)
        if chosen is None:
            return brain
        self.store.set_brain_embedder(brain.id, chosen.model_id, chosen.dimensions)
        return self.store.get_brain_by_id(brain.id)

    def use_model(self, brain: Brain, model: str) -> Brain:
        """An empty brain's vectors are to be made with `model` (`loci eval --model`)."""
        chosen = self.embedders.catalog_model(model)
        if brain.embedder_model not in (None, chosen.model_id) and self.store.document_ids(
            brain.id
        ):
            raise InvalidInput(
                f"brain {brain.name} holds vectors of {brain.embedder_model}; move it with"
                f" `loci reindex --embeddings --model {model}`"
            )
        self.store.set_brain_embedder(brain.id, chosen.model_id, chosen.dimensions)
        return self.store.get_brain_by_id(brain.id)

    def rename_brain(self, brain: Brain, new_name: str) -> Brain:
        """The same brain under a new name (`Conflict` if taken). Everything in it — saved
        index files, tokens, members, links — refers to its id, so nothing else changes."""
        return self.store.update_brain(brain.id, name=check_name("brain", new_name))

    def delete_brain(self, brain: Brain) -> None:
        for content_hash in self.store.delete_brain(brain.id):
            self.blobs.delete(content_hash)

    # status -------------------------------------------------------------------------------
    def set_language(self, brain: Brain, language: str) -> None:
        """Stem this brain's words as `language` from now on; its text index is re-counted."""
        self.store.set_brain_language(brain.id, language.strip().lower())

    def brain_stats(self, brain: Brain) -> BrainStats:
        """Counts alone (documents by status and kind, chunks, jobs): no disk walk."""
        return self.store.stats(brain.id)

    def status(self, brain: Brain) -> Status:
        brain = self.store.get_brain_by_id(brain.id)  # the embedder identity may be new
        return Status(
            brain=brain,
            stats=self.store.stats(brain.id),
            embedder_model=brain.embedder_model,
            embedder_dims=brain.embedder_dims or 0,
            language=self.store.brain_language(brain.id),
            languages=self.store.brain_languages(brain.id),
            database_bytes=self.store.database_bytes(),
            blob_bytes=self.blobs.disk_usage(),
        )
