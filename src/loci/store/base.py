"""The storage interface: everything Loci keeps, behind one narrow protocol.

Two implementations satisfy it — SQLite (embedded default) and PostgreSQL (scale) — and the same
tests run on both. `Store` holds a brain's documents, chunks, jobs and folders; what accounts,
OAuth, identities, conversations, the graph and integrations keep is each a protocol of its own,
beside the tables that implement it (`account_tables.py`, `oauth_tables.py`, …), reached as
`store.accounts`, `store.oauth`, …. Nothing above this layer writes SQL or knows which backend
it talks to. Every method that takes a `brain_id` scopes to that brain; a document of another
brain is `NotFound`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # annotations only: the tables' modules (and the schema) load with a backend
    from loci.embed.base import Vectors
    from loci.store.account_tables import AccountStore
    from loci.store.conversation_tables import ConversationStore
    from loci.store.graph_tables import GraphStore
    from loci.store.identity_tables import IdentityStore
    from loci.store.integration_tables import IntegrationStore
    from loci.store.oauth_tables import OAuthStore
    from loci.store.vector_background import VectorBackground
from loci.models import (
    Brain,
    BrainStats,
    Chunk,
    Document,
    DocumentKind,
    DocumentListing,
    DocumentStatus,
    DocumentTextScores,
    DocumentVersion,
    IndexedChunk,
    IndexWrite,
    Job,
    JobStage,
    NewDocument,
    OnDelete,
    PassageContext,
    Progress,
    Schedule,
    SearchFilters,
    Settled,
    Source,
    SourceMode,
    TextCeiling,
    Visibility,
    WatchLease,
    WatchMode,
)


class Store(Protocol):
    @property
    def accounts(self) -> AccountStore: ...

    @property
    def conversations(self) -> ConversationStore: ...

    @property
    def graph(self) -> GraphStore: ...

    @property
    def integrations(self) -> IntegrationStore: ...

    @property
    def oauth(self) -> OAuthStore: ...

    @property
    def identities(self) -> IdentityStore: ...

    # brains -------------------------------------------------------------------------------
    def ensure_brain(self, name: str) -> Brain: ...
    def get_brain(self, name: str) -> Brain: ...
    def get_brain_by_id(self, brain_id: int) -> Brain: ...
    def list_brains(self) -> list[Brain]: ...
    def create_brain(self, name: str, visibility: Visibility, owner_id: int | None) -> Brain:
        """A new brain (`Conflict` if the name is taken), with its owner as first member."""
        ...

    def update_brain(
        self, brain_id: int, *, name: str | None = None, visibility: Visibility | None = None
    ) -> Brain: ...
    def delete_brain(self, brain_id: int) -> list[str]:
        """Delete a brain and all it holds; returns content hashes no document uses any more."""
        ...

    def set_brain_embedder(self, brain_id: int, model: str | None, dims: int | None) -> None: ...
    def brain_language(self, brain_id: int) -> str:
        """The language the BM25 leg stems words of this brain in: "auto" (each passage in its
        detected language) or one Snowball stemmer ("english", "german", …, "simple")."""
        ...

    def set_brain_language(self, brain_id: int, language: str) -> None:
        """Switch it and re-count the brain's terms; InvalidInput for an unknown one."""
        ...

    def brain_languages(self, brain_id: int) -> dict[str, int]:
        """The detected languages of the brain's documents (ISO 639-1) and how many documents
        are mostly in each, most first."""
        ...

    # documents (canonical) ----------------------------------------------------------------
    def find_by_hash(self, brain_id: int, content_hash: str) -> Document | None: ...
    def find_by_source(self, brain_id: int, kind: DocumentKind, source_url: str) -> Document | None:
        """The newest document of `kind` kept from `source_url` (a web page's address)."""
        ...

    def find_by_path(self, brain_id: int, source_path: str) -> Document | None:
        """The document a file added from `source_path` became, if any."""
        ...

    def find_by_origin(self, brain_id: int, origin: str) -> Document | None:
        """The document an imported or synced item became (`Document.origin`), if any."""
        ...

    def origins(self, brain_id: int, prefix: str) -> dict[str, int]:
        """origin -> document id, for the documents whose origin starts with `prefix`."""
        ...

    def add_tags(self, document_id: int, tags: Sequence[str]) -> None:
        """Give a document these tags too (those it has stay)."""
        ...

    def create_document(self, brain_id: int, new: NewDocument, job_kind: str) -> Document:
        """Insert the row in status `processing` and enqueue its job, in one transaction."""
        ...

    def get_document(self, brain_id: int, document_id: int) -> Document: ...
    def list_documents(
        self,
        brain_id: int,
        *,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        tag: str | None = None,
    ) -> list[Document]: ...
    def list_document_index(
        self,
        brain_id: int,
        *,
        status: DocumentStatus | None = None,
        kind: DocumentKind | None = None,
        tag: str | None = None,
    ) -> list[DocumentListing]:
        """What a list filters and sorts documents by, for every document matching (oldest
        first); cheap to read for a whole large brain."""
        ...

    def get_documents(self, brain_id: int, document_ids: Sequence[int]) -> list[Document]:
        """These documents of the brain, in the order of `document_ids` (missing ones left out)."""
        ...

    def recent_documents(
        self, brain_id: int, limit: int, kinds: Sequence[DocumentKind] = ()
    ) -> list[Document]:
        """The `limit` newest documents (of `kinds`, if given), newest first."""
        ...

    def delete_document(self, brain_id: int, document_id: int) -> list[str]:
        """Delete row, chunks, index entries, jobs and earlier versions; returns the content
        hashes (its own and its versions') nothing uses any more, whose blobs may go."""
        ...

    def requeue_document(self, brain_id: int, document_id: int, job_kind: str) -> Document:
        """Back to `processing` with a fresh job; the old index stays searchable until replaced."""
        ...

    def replace_content(
        self,
        brain_id: int,
        document_id: int,
        expected_hash: str,
        new: NewDocument,
        job_kind: str,
        *,
        keep_versions: int,
    ) -> tuple[Document, list[str]]:
        """New canonical bytes for a document still at `expected_hash` (else `Conflict`), queued
        for re-indexing. The old content becomes its newest version; only the newest
        `keep_versions` stay. Returns the content hashes nothing uses any more."""
        ...

    def write_documents(
        self,
        brain_id: int,
        creates: Sequence[NewDocument],
        replaces: Sequence[tuple[int, str, NewDocument]],
        job_kind: str,
        *,
        keep_versions: int,
    ) -> tuple[list[Document], list[Document], list[str]]:
        """`create_document` for each of `creates`, `replace_content` for each of `replaces`
        (document id, expected hash, new content), in one transaction: all or none
        (`Conflict`). The created and replaced documents, and the hashes nothing uses now."""
        ...

    def document_versions(self, brain_id: int, document_id: int) -> list[DocumentVersion]:
        """A document's earlier contents, newest first (`NotFound` for another brain's)."""
        ...

    def unused(self, hashes: Sequence[str]) -> list[str]:
        """Of these content hashes, those no document or version of any brain uses."""
        ...

    def document_ids(self, brain_id: int | None = None) -> list[int]: ...

    # sources: folders a brain follows --------------------------------------------------
    def create_source(
        self,
        brain_id: int,
        path: str,
        include: Sequence[str],
        exclude: Sequence[str],
        on_delete: OnDelete,
        mode: SourceMode = "files",
        schedule: Schedule | None = None,
    ) -> Source:
        """Register a folder (`Conflict` if this brain follows it already)."""
        ...

    def source_pages(self, brain_id: int, source_id: int) -> dict[str, dict[str, str]]:
        """A folder followed as pages: doc id → {"path", "hash" (the page's at the last sync),
        "file" (the file's, where it is not the page's)}."""
        ...

    def update_source_pages(
        self,
        brain_id: int,
        source_id: int,
        changed: Mapping[str, dict[str, str]],
        removed: Sequence[str],
    ) -> None:
        """Record the entries a sync changed and forget the ones it removed, at once."""
        ...

    def sources(self, brain_id: int | None = None) -> list[Source]:
        """A brain's sources (None: every brain's), oldest first."""
        ...

    def get_source(self, brain_id: int, source_id: int) -> Source: ...
    def delete_source(self, brain_id: int, source_id: int) -> bool: ...
    def record_sync(self, brain_id: int, source_id: int, report: dict[str, Any]) -> None:
        """Keep what a sync found as the source's `last_report`, stamped now."""
        ...

    def documents_under(self, brain_id: int, root: str) -> list[Document]:
        """The documents whose `source_path` lies inside the folder `root`."""
        ...

    def move_document(
        self, brain_id: int, document_id: int, name: str, source_path: str
    ) -> Document:
        """The same document (bytes, index, id) under a new name and path: a renamed file
        (no longer gone, if it was)."""
        ...

    def documents_at(self, brain_id: int, paths: Sequence[str]) -> list[Document]:
        """The documents of files at exactly these paths (one query, whatever their number)."""
        ...

    def documents_with_hashes(self, brain_id: int, hashes: Sequence[str]) -> list[Document]:
        """The documents with one of these contents (one query, whatever their number)."""
        ...

    def documents_with_inodes(
        self, brain_id: int, root: str, inodes: Sequence[int]
    ) -> list[Document]:
        """The documents inside the folder `root` whose file stamp recorded one of `inodes`
        (where a file a watcher sees new may have come from)."""
        ...

    def set_file_stamps(self, brain_id: int, stamps: Mapping[int, dict[str, Any]]) -> None:
        """Record each document's file stamp (`metadata["file"]`), together."""
        ...

    def gone_documents(self, brain_id: int) -> list[Document]:
        """The brain's documents marked gone: their files were deleted, they were kept."""
        ...

    def mark_gone(self, brain_id: int, document_ids: Sequence[int], gone: bool) -> list[int]:
        """Mark documents whose files were deleted from their folder (`gone_at` now), or
        whose files are back (`gone` False: cleared); returns the ids that changed."""
        ...

    # scheduled sources: runs leased by workers (schedule_tables.py) ----------------------
    def claim_source_run(
        self, owner: str, lease_s: float, source_id: int | None = None
    ) -> Source | None:
        """Lease the scheduled source due first (or `source_id`, due or not) to `owner`."""
        ...

    def renew_source_run(self, source: Source, owner: str, lease_s: float) -> bool: ...
    def finish_source_run(
        self,
        source: Source,
        owner: str,
        report: dict[str, Any],
        *,
        error: str | None,
        retry_in_s: float,
        state: Mapping[str, Any] | None = None,
        path: str | None = None,
    ) -> bool:
        """End `owner`'s run: report, lease given up, next run; False if it was taken over."""
        ...

    def source_clock(self) -> float:
        """The database's clock in epoch seconds."""
        ...

    # watching folders: one lease a source (watch_tables.py) -------------------------------
    def watch_leases(self, brain_id: int | None = None) -> dict[int, WatchLease]:
        """The lease of each watched source (of one brain, or of every brain: None)."""
        ...

    def claim_watch(
        self,
        brain_id: int,
        source_id: int,
        owner: str,
        mode: WatchMode,
        lease_s: float,
        taking_from: str | None = None,
    ) -> bool:
        """Take, keep or change the lease on a source; False when another watcher holds it."""
        ...

    def renew_watches(self, owner: str, lease_s: float) -> set[int]:
        """Extend `owner`'s leases; the sources it still holds."""
        ...

    def release_watch(self, owner: str, source_id: int | None = None) -> None:
        """Give up `owner`'s lease on a source (None: on all of them)."""
        ...

    # derived index ------------------------------------------------------------------------
    def cached_vectors(self, model: str, hashes: Sequence[str]) -> dict[str, Vectors]: ...
    def replace_index(
        self,
        document_id: int,
        chunks: Sequence[IndexedChunk],
        new_vectors: dict[str, Vectors],
        model: str,
        text: str,
        title: str | None,
        status_reason: str | None,
    ) -> int:
        """Swap in a document's chunks, their text index and the given vectors, atomically;
        chunks whose vector (by `embed_hash`) is already stored under `model` keep it. Returns
        how many chunks have no vector: none, and the document is `ready`; some, and it stays
        `processing` with `vectors_pending` and an "embed" progress until `add_vectors` has
        written them (the text search finds its chunks meanwhile)."""
        ...

    def replace_indexes(self, writes: Sequence[IndexWrite], model: str) -> list[int | None]:
        """`replace_index` for several documents at once, with no new vectors (the text stage
        of a batch): all written or, if one of them was deleted meanwhile (NotFound), none.
        Returns, per write, how many of its chunks have no vector of `model`, or None for a
        write not made because its document's content changed since it was read (its
        `content_hash`): an older job finishing after a newer one must not put back the text
        the newer one replaced."""
        ...

    def add_vectors(self, document_id: int, model: str, vectors: dict[str, Vectors]) -> int:
        """Write vectors (by `embed_hash`) for the document's chunks, moving its embedding
        progress on; returns how many chunks still have none (0: the document is `ready`,
        unless an edit queued meanwhile will index it again)."""
        ...

    def chunks_without_vectors(self, document_id: int, model: str) -> list[Chunk]:
        """The document's chunks that have no vector of `model`, in order."""
        ...

    def vectorless(self, chunk_ids: Sequence[int], model: str) -> set[int]:
        """Of these chunks, those that have no vector of `model` yet."""
        ...

    def set_progress(self, document_id: int, progress: Progress | None) -> None:
        """Record what indexing a `processing` document is doing (a no-op once it is not)."""
        ...

    def fail_document(self, document_id: int, reason: str, code: str | None = None) -> None: ...
    def merge_document_metadata(self, document_id: int, values: dict[str, Any]) -> None:
        """Set some top-level keys of a document's metadata (each replaced whole), keeping the
        others: links made after indexing (an e-mail's attachments), what a parser read."""
        ...

    def set_extracted(self, extracted: Mapping[int, tuple[dict[str, Any], Sequence[str]]]) -> None:
        """Record, per document id, what the parser read from a file (`metadata.extracted`,
        replaced whole) and the tags the file itself names (a Markdown frontmatter's `tags:`):
        they join the document's tags, and the tags the previous version of the file named and
        this one no longer does leave them. Tags given when the file was added stay."""
        ...

    def document_text(self, brain_id: int, document_id: int) -> str | None: ...
    def list_chunks(self, brain_id: int, document_id: int) -> list[Chunk]: ...
    def clear_brain_index(self, brain_id: int) -> None:
        """Drop every chunk and vector reference of a brain (before `reindex --embeddings`)."""
        ...

    # search legs --------------------------------------------------------------------------
    def text_search(
        self,
        brain_id: int,
        terms: Sequence[str],
        limit: int,
        filters: SearchFilters,
        languages: Sequence[str] = (),
    ) -> list[tuple[int, float]]:
        """BM25 over chunks matching ANY term; (chunk_id, score) best first, higher is better.
        The terms are stemmed in each of `languages` (ISO 639-1: those the question may be
        in) when the brain's language is "auto"; in English when none is given."""
        ...

    def text_ceiling(
        self, brain_id: int, terms: Sequence[str], languages: Sequence[str] = ()
    ) -> TextCeiling | None:
        """The best BM25 score a chunk could reach for these terms (each matching term's idf
        times k1 + 1) and the idf of the most specific of them, or None when the backend cannot
        say."""
        ...

    def document_text_scores(
        self,
        brain_id: int,
        terms: Sequence[str],
        chunk_ids: Sequence[int],
        languages: Sequence[str] = (),
    ) -> DocumentTextScores | None:
        """BM25 of the documents of `chunk_ids`, each read whole, with the brain's document
        statistics and the passage index's k1, b and weights; None when the backend cannot say
        (SQLite answering through FTS5 while its index is being built)."""
        ...

    def vector_search(
        self, brain_id: int, model: str, query: Vectors, limit: int, filters: SearchFilters
    ) -> list[tuple[int, float]]:
        """Cosine over the brain's chunk vectors; (chunk_id, similarity) best first."""
        ...

    def passage_contexts(
        self, brain_id: int, model: str, query: Vectors, chunk_ids: Sequence[int]
    ) -> dict[int, PassageContext]:
        """For each of the chunks that has a vector of `model`: the query's cosine to it, and to
        its document's first chunk, and its own cosine to that first chunk."""
        ...

    def vector_background(self, brain_id: int, model: str) -> VectorBackground | None:
        """How the brain's vectors of `model` lie (`loci.store.vector_background`), from a
        sample, for reading a query's similarities against chance; None with too few."""
        ...

    def chunks_with_documents(
        self, chunk_ids: Sequence[int]
    ) -> dict[int, tuple[Chunk, Document]]: ...

    def chunk_documents(self, chunk_ids: Sequence[int]) -> dict[int, int]:
        """chunk id -> document id, for the given chunks."""
        ...

    def chunk_languages(self, document_ids: Sequence[int]) -> dict[int, dict[str, str | None]]:
        """document id -> {embedding input hash -> language} of the documents' chunks."""
        ...

    # jobs ---------------------------------------------------------------------------------
    def claim_jobs(
        self,
        owner: str,
        lease_s: float,
        limit: int = 1,
        only_documents: Sequence[int] | None = None,
        only_stage: JobStage | None = None,
        quick_only: bool = False,
    ) -> list[Job]:
        """Lease up to `limit` due jobs (or ones whose lease expired), all of one stage, in
        queue order (`loci.store.job_order`), optionally among some documents, of one stage,
        or only short ones (`job_order.quick_jobs`), in one transaction."""
        ...

    def heartbeat(self, job: Job, owner: str, lease_s: float) -> bool: ...
    def finish_job(self, job: Job, owner: str) -> bool:
        """Mark done, fenced: False if the lease was taken over by another worker."""
        ...

    def advance_job(self, job: Job, owner: str, stage: JobStage, cost_s: float | None) -> bool:
        """Put the job back in the queue at `stage`, due at once, its lease given up; this
        claim is not counted as an attempt (it made progress). Its place (`job_order`):
        now plus `cost_s`, or, None, the place it had. Fenced like `finish_job`."""
        ...

    def settle_jobs(self, settled: Sequence[Settled], owner: str) -> set[int]:
        """`finish_job` or `advance_job` for a batch's jobs in one transaction (one statement
        each, however many jobs); returns the ids settled, the others' leases were taken over."""
        ...

    def retry_job(self, job: Job, owner: str, error: str, delay_s: float) -> bool: ...
    def fail_job(self, job: Job, owner: str, error: str, code: str | None = None) -> bool:
        """Give up on the job and mark its document failed with `error` (and the error's
        code, `loci.errors`, when it has one)."""
        ...

    def beat_worker(self, name: str, alive: bool) -> None:
        """A running worker says it is alive (now), or that it stops."""
        ...

    def live_workers(self, within_s: float) -> int:
        """How many workers said they were alive in the last `within_s` seconds."""
        ...

    def pending_jobs(self, brain_id: int | None = None) -> int: ...
    def list_jobs(self, brain_id: int, limit: int = 100) -> list[Job]: ...

    # status -------------------------------------------------------------------------------
    def stats(self, brain_id: int) -> BrainStats: ...
    def database_bytes(self) -> int:
        """What the whole database takes on disk, every brain together (blobs not included)."""
        ...

    def close(self) -> None: ...
