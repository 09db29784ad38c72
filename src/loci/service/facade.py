"""The `Loci` facade itself: brains, notes (read, edit), reading and search, changes, jobs, status.

It owns the order of canonical writes (blob, then row + job in one transaction) and hands derived
work to the job queue. Surfaces never reach past it into the store or the indexer. Adding lives in
`loci.service.adding`, asking in `loci.answer.facade`: `Loci` inherits both, so surfaces still
call one object.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache, cached_property

from loci.answer.facade import Answers
from loci.curate.pipeline import CURATE_JOB, Curation
from loci.embed.base import Embedder
from loci.errors import Conflict, InvalidInput, NotFound
from loci.graph.linked_search import LinkedSearch
from loci.graph.service import BrainGraph
from loci.ingest.indexer import Indexer, Prepared
from loci.ingest.sources import note_body, note_markdown, note_name
from loci.jobs.worker import Worker, by_kind
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.models import (
    Brain,
    BrainStats,
    Chunk,
    Document,
    DocumentKind,
    DocumentStatus,
    Hit,
    Job,
    NewDocument,
    SearchMode,
    Visibility,
)
from loci.names import check_name
from loci.review.facade import Reviews
from loci.search.engine import SearchEngine, SearchRequest
from loci.search.filters import check_filters
from loci.search.related import MAX_RELATED, Related, related_documents
from loci.search.rerank import Reranker
from loci.service.adding import INDEX_JOB, Adding
from loci.service.settings import ServiceSettings
from loci.store.base import Store
from loci.store.blobs import BlobStore, sha256_hex

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Status:
    brain: Brain
    stats: BrainStats
    embedder_model: str | None  # None until the first document is indexed
    embedder_dims: int
    language: str  # what the BM25 leg stems this brain's words as
    database_bytes: int
    blob_bytes: int


class Loci(Adding):
    """The facade; adding lives in `loci.service.adding`, asking, studying and conversations
    in `loci.answer.facade`, digests in `loci.review.facade`."""

    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        embedder: Callable[[], Embedder],
        settings: ServiceSettings,
        chat: Callable[[], Chat | None] | None = None,
        reranker: Reranker | None = None,
        transcriber: Callable[[], Transcriber | None] | None = None,
    ) -> None:
        self.store = store
        # Built once, on first use, and shared by every service that needs one.
        self._chat = cache(chat or (lambda: None))
        self._transcriber_factory = transcriber or (lambda: None)
        self.blobs = blobs
        self._embedder_factory = embedder
        self.settings = settings
        self.engine = SearchEngine(store, lambda: self.embedder, settings.ranking, reranker)
        self.linked = LinkedSearch(store)

    @cached_property
    def embedder(self) -> Embedder:
        """Built on first use: listing files or a text search never loads the model."""
        return self._embedder_factory()

    @property
    def chat(self) -> Chat | None:
        """The configured chat model (None: answers come from the sources alone)."""
        return self._chat()

    @cached_property
    def transcriber(self) -> Transcriber | None:
        """The configured speech-to-text service (None: recordings fail, saying so)."""
        return self._transcriber_factory()

    @cached_property
    def graph(self) -> BrainGraph:
        """The brain graph's operations (seed 002) over this service's store and search."""
        return BrainGraph(self.store, self.blobs, self._passages)

    @cached_property
    def curation(self) -> Curation:
        return Curation(
            self.store,
            self.blobs,
            self.graph,
            self._chat,
            limits=self.settings.curation,
            max_bytes=self.settings.max_file_bytes,
        )

    @cached_property
    def answers(self) -> Answers:
        """Asking, studying and conversations (`loci.answer.facade`)."""
        return Answers(self.store, self.graph, self.search, self._chat, self.curation)

    @cached_property
    def reviews(self) -> Reviews:
        """Digests of what came into a brain (`loci.review.facade`)."""
        return Reviews(self.store, self.graph, self._chat)

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

    def create_brain(self, name: str, visibility: Visibility = "restricted") -> Brain:
        """A new brain with no members: the workspace's admins own it (`Conflict` if the name
        is taken)."""
        if visibility not in ("restricted", "workspace"):
            raise InvalidInput(f"visibility must be restricted or workspace, got {visibility!r}")
        return self.store.create_brain(check_name("brain", name), visibility, None)

    def rename_brain(self, brain: Brain, new_name: str) -> Brain:
        """The same brain under a new name (`Conflict` if taken). Everything in it — saved
        index files, tokens, members, links — refers to its id, so nothing else changes."""
        return self.store.update_brain(brain.id, name=check_name("brain", new_name))

    def delete_brain(self, brain: Brain) -> None:
        for content_hash in self.store.delete_brain(brain.id):
            self.blobs.delete(content_hash)

    # notes --------------------------------------------------------------------------------
    def note(self, brain: Brain, document_id: int) -> tuple[Document, str]:
        """A note and the text it was written with (without its frontmatter)."""
        document = self.store.get_document(brain.id, document_id)
        if document.kind != "note":
            raise NotFound(f"no note with id {document_id}")
        return document, note_body(self.blobs.get(document.content_hash))

    def update_note(
        self,
        brain: Brain,
        document_id: int,
        text: str,
        *,
        expected_hash: str,
        title: str | None = None,
        tags: Sequence[str] = (),
        color: str | None = None,
    ) -> Document:
        """Rewrite a note if it is still at `expected_hash`; a concurrent edit is `Conflict`."""
        old, _ = self.note(brain, document_id)
        if not text.strip():
            raise InvalidInput("the note is empty")
        if old.content_hash != expected_hash:  # checked again, atomically, by the store
            raise Conflict("the note changed since you read it; reload it and apply your edit")
        tags = tuple(dict.fromkeys(t.strip() for t in tags if t.strip()))
        data = note_markdown(text, title, tags)
        self.blobs.put(data)
        new = NewDocument(
            kind="note",
            name=note_name(text, title),
            title=title,
            source_url=None,
            mime_type="text/markdown",
            size_bytes=len(data),
            content_hash=sha256_hex(data),
            tags=tags,
            metadata={"color": color} if color else {},
        )
        document, old_unused = self.store.replace_content(
            brain.id, document_id, expected_hash, new, INDEX_JOB
        )
        if old_unused and old.content_hash != new.content_hash:
            self.blobs.delete(old.content_hash)
        return document

    # reading ------------------------------------------------------------------------------
    def documents(
        self,
        brain: Brain,
        *,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        tag: str | None = None,
    ) -> list[Document]:
        return self.store.list_documents(brain.id, status=status, kind=kind, tag=tag)

    def recent_documents(
        self, brain: Brain, limit: int, kinds: Sequence[DocumentKind] = ()
    ) -> list[Document]:
        """The brain's `limit` newest documents (of `kinds`, if given), newest first."""
        return self.store.recent_documents(brain.id, limit, kinds)

    def document(self, brain: Brain, document_id: int) -> Document:
        return self.store.get_document(brain.id, document_id)

    def document_text(self, brain: Brain, document_id: int) -> str | None:
        return self.store.document_text(brain.id, document_id)

    def chunks(self, brain: Brain, document_id: int) -> list[Chunk]:
        return self.store.list_chunks(brain.id, document_id)

    def original(self, brain: Brain, document_id: int) -> bytes:
        return self.blobs.get(self.store.get_document(brain.id, document_id).content_hash)

    def search(self, brain: Brain, request: SearchRequest) -> list[Hit]:
        # Filters that cannot match (an empty date range, a blank tag) are refused with the
        # reason rather than searched: an empty answer would look like "nothing matches".
        check_filters(request.filters)
        # Re-read the brain: its embedder identity is set by the first indexed document, which
        # may have happened after the caller got this snapshot.
        hits = self._passages(brain, request)
        if request.mode != "hybrid":  # a single leg is a diagnostic view: no links followed
            return hits
        expanded = self.linked.expand_hits(
            brain, hits, request.limit, include_retired=request.include_retired
        )
        if request.filters.empty:
            return expanded
        # A page a link brought in was never checked against the filters: only links between
        # documents the filters admitted may re-rank them.
        admitted = {h.citation.document_id for h in hits}
        return [h for h in expanded if h.citation.document_id in admitted]

    def related(self, brain: Brain, document_id: int, limit: int = 5) -> list[Related]:
        """Other documents about what this one is about, closest first (see search.related)."""
        if not 1 <= limit <= MAX_RELATED:
            raise InvalidInput(f"limit must be between 1 and {MAX_RELATED}, got {limit}")
        document = self.store.get_document(brain.id, document_id)
        return related_documents(self.store, self.store.get_brain(brain.name), document, limit)

    def ranked_documents(
        self, brain: Brain, query: str, mode: SearchMode = "hybrid", depth: int = 100
    ) -> list[tuple[int, float]]:
        """Documents best first, as `search` ranks them, for evaluation against judgments."""
        # Re-read, as search does: the brain learns its embedder when its first vectors land.
        ranked = self.engine.ranked_documents(self.store.get_brain(brain.name), query, mode, depth)
        if mode != "hybrid":
            return ranked
        return [(e.document_id, e.score) for e in self.linked.expand_ranking(brain, ranked)]

    def _passages(self, brain: Brain, request: SearchRequest) -> list[Hit]:
        """The passage ranking alone, before links are followed (`brain query` expands its
        own, graph-only ranking)."""
        return self.engine.search(self.store.get_brain(brain.name), request)

    # changing -----------------------------------------------------------------------------
    def remove(self, brain: Brain, document_id: int) -> Document:
        document = self.store.get_document(brain.id, document_id)
        if self.store.delete_document(brain.id, document_id):
            self.blobs.delete(document.content_hash)
        return document

    def jobs(self, brain: Brain, limit: int = 100) -> list[Job]:
        return self.store.list_jobs(brain.id, limit)

    def reprocess(self, brain: Brain, document_id: int) -> Document:
        document = self.store.get_document(brain.id, document_id)
        kind = CURATE_JOB if document.kind == "item" else INDEX_JOB
        return self.store.requeue_document(brain.id, document_id, kind)

    def reindex(self, brain: Brain, *, embeddings: bool = False) -> list[Document]:
        """Rebuild every derived row of a brain from its blobs; with `embeddings`, under the
        configured embedder (the brain's recorded identity changes to it)."""
        if embeddings:
            self.store.clear_brain_index(brain.id)
            self.store.set_brain_embedder(brain.id, None, None)
        items = {d.id for d in self.store.list_documents(brain.id, kind="item")}  # not indexed
        return [
            self.store.requeue_document(brain.id, doc_id, INDEX_JOB)
            for doc_id in self.store.document_ids(brain.id)
            if doc_id not in items
        ]

    # background work ----------------------------------------------------------------------
    def worker(self, name: str | None = None) -> Worker:
        handlers = {INDEX_JOB: self._run_jobs, CURATE_JOB: self.curation.run_jobs}
        return Worker(self.store, by_kind(handlers), self.settings.worker, name)

    def _run_jobs(self, jobs: Sequence[Job]) -> dict[int, BaseException | None]:
        """Index a batch of documents: parse and chunk each, embed all passages together,
        then swap each document's index in. A failure stays with its own document."""
        brains = {b.id: b for b in self.store.list_brains()}  # fresh embedder identities
        chat = self.chat if self.settings.indexer.caption_images else None
        indexer = Indexer(
            self.store, self.blobs, self.embedder, self.settings.indexer, chat, self.transcriber
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
                self._add_attachments(item)
            except Exception:  # the message itself is indexed; reprocessing retries these
                log.exception("could not add the attachments of document %s", item.document.id)
        return outcomes

    def wait_for(
        self,
        brain: Brain,
        document_ids: Sequence[int],
        on_progress: Callable[[list[Document]], None] | None = None,
    ) -> list[Document]:
        """Process the documents' jobs in this process until each is ready or failed, then
        those of the attachments they gave rise to (an e-mail's files), so a CLI `add` of a
        message leaves its attachments searchable too."""

        def current(ids: Sequence[int] = document_ids) -> list[Document]:
            return [self.store.get_document(brain.id, i) for i in ids]

        pending, seen = list(document_ids), set(document_ids)
        report = (lambda: on_progress(current())) if on_progress else None
        while pending:
            batch = pending

            def settled(ids: Sequence[int] = batch) -> bool:
                return all(d.status != "processing" for d in current(ids))

            self.worker().drain(batch, settled, report)
            pending = [
                link["id"]
                for document in current(batch)
                for link in document.metadata.get("attachments") or ()
                if isinstance(link, dict)
                and isinstance(link.get("id"), int)
                and link["id"] not in seen
            ]
            seen.update(pending)
        return current()

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
            database_bytes=self.store.database_bytes(),
            blob_bytes=self.blobs.disk_usage(),
        )
