"""A brain's documents: `Library`, the service `Loci` holds as `loci.library`.

Adding (files, web pages, notes, captures, the attachments a document carries, and the
preflight that says what an add would do), reading and editing notes, listing and removing
documents, and the background work that indexes them. Every add writes the canonical form
first (the blob, then the row and its job in one transaction) and leaves the derived index to
the worker.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

from loci.curate.pipeline import CURATE_JOB, Captured, Curation, Ingested
from loci.embed.base import Embedder
from loci.errors import Conflict, InvalidInput, LociError, NotFound
from loci.ingest.addresses import check_url_address
from loci.ingest.fetch_page import WebPage, fetch_page
from loci.ingest.indexer import Prepared
from loci.ingest.plan import plan_file
from loci.ingest.preflight import (
    Preflight,
    Preflighter,
    PreflightItem,
    PreflightSettings,
    TranscriptionPlan,
    embedding_rate,
    summarize,
)
from loci.ingest.size_cap import over_cap
from loci.ingest.sources import (
    PathProblem,
    clean_name,
    is_url,
    note_body,
    note_excerpt,
    note_markdown,
    note_name,
    note_title,
    page_name,
    web_markdown,
)
from loci.ingest.timings import IndexTimings
from loci.jobs.worker import PRESENCE_WITHIN_S, BatchHandler, Worker, by_kind
from loci.llm.client import Chat
from loci.llm.transcribe import Transcriber
from loci.models import (
    Brain,
    Chunk,
    Document,
    DocumentKind,
    DocumentStatus,
    Job,
    NewDocument,
    WaitUntil,
    is_searchable,
    is_settled,
)
from loci.service.document_query import DocumentPage, DocumentQuery, select
from loci.service.index_jobs import IndexJobs
from loci.service.settings import ServiceSettings
from loci.store.base import Store
from loci.store.blobs import BlobStore, sha256_hex
from loci.store.job_order import INDEX_JOB, REINDEX_JOB

WEB_TYPES = ("text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf")


@dataclass(frozen=True)
class AddResult:
    document: Document
    deduped: bool  # these exact bytes were already in the brain: nothing changed
    refreshed: bool = False  # a page or file kept before, added again changed: it was replaced


@dataclass(frozen=True)
class Upload:
    """A file sent over HTTP: `data` may stop past the cap, `size` is whole."""

    name: str
    data: bytes
    size: int
    mime_type: str | None = None


class Library:
    """A brain's documents: adding them, reading them, changing them, and the background
    work that indexes them."""

    def __init__(
        self,
        store: Store,
        blobs: BlobStore,
        settings: ServiceSettings,
        embedder: Callable[[], Embedder],
        chat: Callable[[], Chat | None],
        transcriber: Callable[[], Transcriber | None],
        curation: Curation,
    ) -> None:
        self.store = store
        self.blobs = blobs
        self.settings = settings
        # Called on use, each built once by whoever assembled us: listing files or adding a
        # note never loads the embedding model, a chat client or a speech-to-text client.
        self._embedder = embedder
        self._transcriber = transcriber
        self.curation = curation
        self._index_jobs = IndexJobs(
            store, blobs, settings.indexer, embedder, chat, transcriber, self._add_attachments
        )

    # adding -------------------------------------------------------------------------------
    def add_bytes(
        self,
        brain: Brain,
        name: str,
        data: bytes,
        *,
        kind: DocumentKind = "file",
        tags: Sequence[str] = (),
        title: str | None = None,
        mime_type: str | None = None,
        source_url: str | None = None,
        metadata: dict[str, Any] | None = None,
        source_path: str | None = None,
    ) -> AddResult:
        """Keep `data` as a new document, or: the same bytes already here are that document
        (`deduped`, given the new tags too); a web page from the same address, or a file from
        the same `source_path`, with other bytes is the same document with its new content
        (`refreshed`: the id, and every citation and link to it, stay)."""
        name = clean_name(name)
        # The plan the dry run reports and the indexer parses by; here only its refusal matters
        # (over the cap, or empty): a file that will fail to parse is still kept, then marked.
        plan = plan_file(
            name,
            data,
            kind=kind,
            mime_type=mime_type,
            source_url=source_url,
            max_bytes=self.settings.max_file_bytes,
        )
        if plan.refusal is not None:
            raise plan.refusal
        digest = sha256_hex(data)
        wanted_tags = tuple(dict.fromkeys(t.strip() for t in tags if t.strip()))
        at_path = self.store.find_by_path(brain.id, source_path) if source_path else None
        if at_path is not None and at_path.gone_at is not None:
            # Its file, marked deleted, is there again (it is being read): no longer gone.
            self.store.mark_gone(brain.id, [at_path.id], False)
            at_path = replace(at_path, gone_at=None)
        if at_path is not None and at_path.content_hash == digest:
            return AddResult(self._tagged(brain, at_path, wanted_tags), deduped=True)
        existing = self.store.find_by_hash(brain.id, digest)
        if existing is not None:
            # The same bytes under another name are one document. A file edited into bytes
            # another document has leaves nothing behind at its path.
            if at_path is not None:
                self.remove(brain, at_path.id)
            return AddResult(self._tagged(brain, existing, wanted_tags), deduped=True)
        self.blobs.put(data)  # canonical bytes first: the row never points at a missing blob
        new = NewDocument(
            kind=kind,
            name=name,
            title=title,
            source_url=source_url,
            mime_type=mime_type,
            size_bytes=len(data),
            content_hash=digest,
            tags=wanted_tags,
            metadata=dict(metadata or {}),
            source_path=source_path,
        )
        earlier: tuple[Callable[[], Document | None], str] | None = None
        if kind == "web" and source_url is not None:
            earlier = partial(self.store.find_by_source, brain.id, "web", source_url), source_url
        elif source_path is not None and at_path is not None:
            earlier = partial(self.store.find_by_path, brain.id, source_path), source_path
        if earlier is not None:
            refreshed = self._refresh(brain, new, *earlier)
            if refreshed is not None:
                return refreshed
        try:
            return AddResult(self.store.create_document(brain.id, new, INDEX_JOB), deduped=False)
        except Conflict:
            if source_path is None:
                raise
            # Another writer (a watcher, a sync in another process) added this path meanwhile:
            # one document a path, so this is an update of that one.
            at_path_now = partial(self.store.find_by_path, brain.id, source_path)
            refreshed = self._refresh(brain, new, at_path_now, source_path)
            if refreshed is None:
                raise
            return refreshed

    def _tagged(self, brain: Brain, document: Document, tags: Sequence[str]) -> Document:
        """`document` with `tags` too: `loci add --tag x` of files already here tags them."""
        if not tags or all(t in document.tags for t in tags):
            return document
        self.store.add_tags(document.id, tags)
        return self.store.get_document(brain.id, document.id)

    def _refresh(
        self, brain: Brain, new: NewDocument, find_old: Callable[[], Document | None], where: str
    ) -> AddResult | None:
        """The document kept before from the same address or path now holds `new` (changed
        bytes): one document per page or file, so its id, and every link and citation to it,
        stay valid. Its tags are kept with the new ones. None when there was none."""
        for _attempt in range(3):
            old = find_old()
            if old is None:
                return None
            tags = tuple(dict.fromkeys((*old.tags, *new.tags)))
            try:
                document, unused = self.store.replace_content(
                    brain.id,
                    old.id,
                    old.content_hash,
                    replace(new, tags=tags),
                    INDEX_JOB,
                    keep_versions=self.settings.versions_keep,
                )
            except Conflict:  # saved again this very moment by another request: read again
                continue
            self.forget_blobs(unused)
            return AddResult(document, deduped=False, refreshed=True)
        raise Conflict(f"{where} keeps changing while it is saved; try again")

    def add_file(
        self,
        brain: Brain,
        path: Path,
        tags: Sequence[str] = (),
        metadata: dict[str, Any] | None = None,
    ) -> AddResult:
        # Refused by its size before a huge file is read into memory, as `add_bytes` would.
        too_large = over_cap(
            clean_name(path.name), path.stat().st_size, self.settings.max_file_bytes
        )
        if too_large is not None:
            raise too_large
        # The file is known by where it lives: adding the path again after an edit updates it.
        return self.add_bytes(
            brain,
            path.name,
            path.read_bytes(),
            tags=tags,
            metadata=metadata,
            source_path=str(path.resolve()),
        )

    def add_upload(self, brain: Brain, upload: Upload, tags: Sequence[str] = ()) -> AddResult:
        """An uploaded file, whose `data` may stop past the cap (read no further, for memory):
        its whole `size` is held against the cap, then it is added as bytes."""
        too_large = over_cap(clean_name(upload.name), upload.size, self.settings.max_file_bytes)
        if too_large is not None:
            raise too_large
        return self.add_bytes(
            brain, upload.name, upload.data, tags=tags, mime_type=upload.mime_type
        )

    def add_url(self, brain: Brain, url: str, tags: Sequence[str] = ()) -> AddResult:
        # Fetched here, not in the worker, so a blocked address or a challenge page is refused
        # with its reason at once and nothing junk is ever stored.
        web = self.fetch_page(url)
        page = web.page
        rendered: dict[str, Any] | None = None
        if web.rendered:
            rendered = {"rendered": {"engine": "chromium", "why": web.why_rendered}}
            if web.blocked:
                rendered["rendered"]["blocked_requests"] = list(web.blocked[:20])
        return self.add_bytes(
            brain,
            page_name(page.url, page.content_type),
            page.body,
            kind="web",
            tags=tags,
            mime_type=page.content_type,
            source_url=page.url,
            metadata=rendered,
        )

    def fetch_page(self, url: str) -> WebPage:
        """A page as `add_url` would keep it (rendered in Chromium if it needs JavaScript)."""
        return fetch_page(url, self.settings.fetch, self.settings.browser, accept=WEB_TYPES)

    def add_page_text(
        self,
        brain: Brain,
        url: str,
        markdown: str,
        *,
        title: str | None = None,
        tags: Sequence[str] = (),
    ) -> AddResult:
        """Keep a web page as a browser extracted it (Markdown), cited to its URL.

        Nothing is fetched: the URL is only where the text came from, so no address check
        applies. It is indexed like any document, by the worker, moments later.
        """
        if not is_url(url):
            raise InvalidInput("the page's url must start with http:// or https://")
        if not markdown.strip():
            raise InvalidInput("the page has no text to keep")
        return self.add_bytes(
            brain,
            page_name(url, "text/markdown"),
            web_markdown(url, markdown, title),
            kind="web",
            tags=tags,
            title=title,
            mime_type="text/markdown",
            source_url=url,
        )

    def add_note(
        self,
        brain: Brain,
        text: str,
        *,
        title: str | None = None,
        tags: Sequence[str] = (),
        color: str | None = None,
    ) -> AddResult:
        if not text.strip():
            raise InvalidInput("the note is empty")
        return self.add_bytes(
            brain,
            note_name(text, title),
            note_markdown(text, title, tags),
            kind="note",
            tags=tags,
            # Untitled, it reads as its first line; that title stays out of the note's bytes,
            # so it follows the first line when the text is edited.
            title=title or note_title(text),
            mime_type="text/markdown",
            metadata={"color": color} if color else None,
        )

    # preflight: what an add would do, without writing -------------------------------------
    def preflight(
        self,
        brain: Brain | None,
        *,
        paths: Sequence[Path] = (),
        urls: Sequence[str] = (),
        uploads: Sequence[Upload] = (),
        problems: Sequence[PathProblem] = (),
    ) -> Preflight:
        """Report, item by item, what adding these would do (`loci.ingest.preflight`): reads
        files and fetches allowed URLs, writes nothing. Items come in the order `add` takes.
        `brain` None: a brain that does not exist yet, so nothing in it can be a duplicate."""
        indexer = self.settings.indexer
        embedder, transcriber = self._embedder(), self._transcriber()
        flight = Preflighter(
            PreflightSettings(
                max_file_bytes=self.settings.max_file_bytes,
                max_chunks=indexer.max_chunks,
                overlap_tokens=indexer.overlap_tokens,
                budgets=indexer.budgets,
                chunks_per_s=self.settings.ingest_chunks_per_s
                or (lambda: embedding_rate(embedder)),
                transcription=(
                    None
                    if transcriber is None
                    else TranscriptionPlan(transcriber.model, transcriber.max_bytes)
                ),
            ),
            lambda digest: None if brain is None else self.store.find_by_hash(brain.id, digest),
            embedder.count_tokens,
            embedder.max_tokens,
            lambda path: None if brain is None else self.store.find_by_path(brain.id, path),
        )
        items = [PreflightItem(p.arg, "refuse", error=p.reason) for p in problems]
        items.extend(self._preflight_url(flight, url) for url in urls)
        items.extend(flight.file(path) for path in paths)
        items.extend(flight.upload(u.name, u.data, u.size, u.mime_type) for u in uploads)
        return summarize(items)

    def _preflight_url(self, flight: Preflighter, url: str) -> PreflightItem:
        try:
            # Resolved and checked without connecting: a refused address is never contacted.
            address = check_url_address(url, self.settings.fetch)
        except LociError as error:
            return PreflightItem(url, "refuse", kind="web", error=error.message)
        try:
            page = self.fetch_page(url)
        except LociError as error:
            return PreflightItem(url, "refuse", kind="web", address=address, error=error.message)
        return flight.web(url, page, address)

    # capture first, curate later ----------------------------------------------------------
    def save(
        self,
        brain: Brain,
        text: str,
        *,
        title: str | None = None,
        source: str | None = None,
        actor: str = "capture",
    ) -> Captured:
        """Keep `text` at once as a draft note in inbox/ (sourced to `source`, provider:id)
        and queue a `curate` job to find its home; the same text twice is one draft."""
        return self.curation.save(brain, text, title=title, source=source, actor=actor)

    def ingest_item(
        self, brain: Brain, provider: str, item: dict[str, Any], *, actor: str = "ingest"
    ) -> Ingested:
        """Keep a provider's normalized item (e.g. a meeting transcript with attendees),
        snapshot it into evidence/ and queue its curation; idempotent on content hash."""
        return self.curation.ingest_item(brain, provider, item, actor=actor)

    # notes --------------------------------------------------------------------------------
    def note_excerpts(self, documents: Sequence[Document]) -> dict[int, str]:
        """The first lines of each note (by id), for a list of notes as cards."""
        return {
            d.id: note_excerpt(note_body(self.blobs.get(d.content_hash)), d.title)
            for d in documents
        }

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
            title=title or note_title(text),
            source_url=None,
            mime_type="text/markdown",
            size_bytes=len(data),
            content_hash=sha256_hex(data),
            tags=tags,
            metadata={"color": color} if color else {},
        )
        document, unused = self.store.replace_content(
            brain.id,
            document_id,
            expected_hash,
            new,
            INDEX_JOB,
            keep_versions=self.settings.versions_keep,
        )
        self.forget_blobs(unused)
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

    def find(self, brain: Brain, query: DocumentQuery) -> DocumentPage:
        """The documents `query` asks for, in its order, one page of them, and how many match."""
        # One status or one kind is narrowed in SQL; several are filtered with the rest.
        status = query.statuses[0] if len(query.statuses) == 1 else None
        kind = query.kinds[0] if len(query.kinds) == 1 else None
        listing = self.store.list_document_index(brain.id, status=status, kind=kind, tag=query.tag)
        page, total = select(listing, query)
        return DocumentPage(self.store.get_documents(brain.id, [d.id for d in page]), total)

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

    # changing -----------------------------------------------------------------------------
    def remove(self, brain: Brain, document_id: int) -> Document:
        """Delete a document with its earlier versions, and the blobs nothing else uses."""
        document = self.store.get_document(brain.id, document_id)
        self.forget_blobs(self.store.delete_document(brain.id, document_id))
        return document

    def forget_blobs(self, content_hashes: Sequence[str]) -> None:
        """Delete the blobs of these hashes, which the store found no document or version
        uses any more."""
        for content_hash in content_hashes:
            self.blobs.delete(content_hash)

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
            self.store.requeue_document(brain.id, doc_id, REINDEX_JOB)
            for doc_id in self.store.document_ids(brain.id)
            if doc_id not in items
        ]

    # background work ----------------------------------------------------------------------
    def worker(self, name: str | None = None) -> Worker:
        handlers: dict[str, BatchHandler] = {
            INDEX_JOB: self._index_jobs,
            REINDEX_JOB: self._index_jobs,
            CURATE_JOB: self.curation.run_jobs,
        }
        return Worker(self.store, by_kind(handlers), self.settings.worker, name)

    def wait_for(
        self,
        brain: Brain,
        document_ids: Sequence[int],
        on_progress: Callable[[list[Document]], None] | None = None,
        *,
        until: WaitUntil = "ready",
    ) -> list[Document]:
        """Process the documents' jobs in this process until each is ready or failed (or, with
        `until="searchable"`, found by its words: its text stage done, vectors maybe pending),
        then those of the attachments they gave rise to (an e-mail's files), so a CLI `add`
        of a message leaves its attachments searchable too. The text stage of every document
        comes first (the queue's order), so all are searchable by words before any embedding."""

        def current(ids: Sequence[int] = document_ids) -> list[Document]:
            # One read for them all: progress reports and the settled check read every
            # document, and one query each made a PostgreSQL wait on 5,000 notes 15x slower.
            found = self.store.get_documents(brain.id, ids)
            if len(found) < len(ids):
                have = {d.id for d in found}
                gone = next(i for i in ids if i not in have)
                raise NotFound(f"no document {gone} in this brain")
            return found

        done = is_searchable if until == "searchable" else is_settled
        pending, seen = list(document_ids), set(document_ids)
        report = (lambda: on_progress(current())) if on_progress else None
        while pending:
            batch = pending

            def settled(ids: Sequence[int] = batch) -> bool:
                return all(done(d) for d in current(ids))

            self.worker().drain(
                batch, settled, report, only_stage="text" if until == "searchable" else None
            )
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

    @property
    def index_timings(self) -> IndexTimings:
        """Seconds this process's worker spent parsing, chunking, embedding and writing."""
        return self._index_jobs.timings

    def workers_running(self) -> bool:
        """Whether a worker that runs until stopped (`loci serve`, `loci worker`) is alive on
        this database: it will embed whatever is queued, so a command need not wait for that."""
        return self.store.live_workers(PRESENCE_WITHIN_S) > 0

    def _add_attachments(self, item: Prepared) -> None:
        """Files carried inside a document (an e-mail's attachments) become documents of their
        own, canonical first like any other, and are linked both ways: `attached_to` on each,
        `attachments` on the parent. Each is parsed by its own job, so a bad one fails alone;
        one refused outright (too big) is listed on the parent with its reason."""
        if not item.parsed.attachments:
            return
        parent = item.document
        links: list[dict[str, Any]] = []
        for attachment in item.parsed.attachments:
            try:
                added = self.add_bytes(
                    item.brain,
                    attachment.name,
                    attachment.data,
                    tags=parent.tags,
                    mime_type=attachment.mime_type,
                    metadata={"attached_to": parent.id},
                )
            except LociError as error:
                links.append({"name": attachment.name, "error": error.message})
                continue
            child = added.document
            if added.deduped and child.id != parent.id and "attached_to" not in child.metadata:
                self.store.merge_document_metadata(child.id, {"attached_to": parent.id})
            links.append({"id": child.id, "name": child.name})
        self.store.merge_document_metadata(parent.id, {"attachments": links})
