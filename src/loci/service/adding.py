"""Adding to a brain: files, uploads, web pages (fetched, or as a browser extracted them), the
attachments a document carries, captures to curate later, and the preflight that says what an
add would do. Every add writes the canonical form first (the blob, then the row and its job in
one transaction) and leaves the derived index to the worker."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from loci.curate.pipeline import Captured, Ingested
from loci.errors import Conflict, InvalidInput, LociError
from loci.ingest.addresses import check_url_address
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
    page_name,
    web_markdown,
)
from loci.models import (
    Brain,
    Document,
    DocumentKind,
    NewDocument,
)
from loci.service.documents import Documents
from loci.store.blobs import sha256_hex
from loci.store.job_order import INDEX_JOB

if TYPE_CHECKING:  # fetching (httpx, Chromium) is imported by the commands that fetch
    from loci.ingest.fetch_page import WebPage

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


class Adding(Documents):
    """Adding documents: an added file that replaces one at the same path or address removes
    what the old one no longer uses (`Documents`)."""

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
        origin: str | None = None,
    ) -> AddResult:
        """Keep `data` as a new document, or: the same bytes already here are that document
        (`deduped`, given the new tags too); a web page from the same address, a file from
        the same `source_path`, or an imported item of the same `origin`, with other bytes is
        the same document with its new content (`refreshed`: the id, and every citation and
        link to it, stay)."""
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
        at_origin = self.store.find_by_origin(brain.id, origin) if origin else None
        if at_origin is not None and at_origin.content_hash == digest:
            return AddResult(self._tagged(brain, at_origin, wanted_tags), deduped=True)
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
            origin=origin,
        )
        earlier: tuple[Callable[[], Document | None], str] | None = None
        if origin is not None and at_origin is not None:
            earlier = partial(self.store.find_by_origin, brain.id, origin), origin
        elif kind == "web" and source_url is not None:
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
            if source_path is None and origin is None:
                raise
            # Another writer (a watcher, a sync in another process) added this path or item
            # meanwhile: one document a path or origin, so this is an update of that one.
            if origin is not None:
                now = partial(self.store.find_by_origin, brain.id, origin)
                refreshed = self._refresh(brain, new, now, origin)
            else:
                assert source_path is not None
                now = partial(self.store.find_by_path, brain.id, source_path)
                refreshed = self._refresh(brain, new, now, source_path)
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

    def add_url(
        self,
        brain: Brain,
        url: str,
        tags: Sequence[str] = (),
        *,
        metadata: dict[str, Any] | None = None,
        origin: str | None = None,
        title: str | None = None,
    ) -> AddResult:
        """Fetch `url` and keep the page. `title`: what the person called it (a bookmark's
        name), kept for a page whose own text names no title."""
        # Fetched here, not in the worker, so a blocked address or a challenge page is refused
        # with its reason at once and nothing junk is ever stored.
        web = self.fetch_page(url)
        page = web.page
        rendered: dict[str, Any] = dict(metadata or {})
        if web.rendered:
            rendered["rendered"] = {"engine": "chromium", "why": web.why_rendered}
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
            origin=origin,
            title=title,
        )

    def fetch_page(self, url: str) -> WebPage:
        """A page as `add_url` would keep it (rendered in Chromium if it needs JavaScript)."""
        from loci.ingest.fetch_page import fetch_page

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
