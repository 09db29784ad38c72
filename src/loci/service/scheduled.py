"""Sources that are not folders — a feed, web pages, a mailbox, a repository — kept in step on a
schedule by the worker: `ScheduledSources`, the service `Loci` holds as `loci.scheduled`.

A scheduled source is a `sources` row with a `kind` and a period (`every_s`). The worker takes
the one due first with a lease (`Store.claim_source_run`: two workers never run one source at
once, and a worker killed mid-run leaves a lease that runs out, after which another takes it),
runs it, and sets its next run: `every_s` after a success, later and later after failures in
a row (`backoff`).

A run (`_sync`) asks the source's upstream (`loci.upstream.kinds`) for its listing, given the
state the last run left (ETag, Last-Modified, cursors), and compares it with the documents the
source made before, each known by its origin "source:<source id>:<entry key>" with the entry's
version in its metadata (`metadata["upstream"]`):

- a listing that says nothing changed (a 304) touches nothing;
- an entry not seen before is fetched and added; one whose version changed is fetched and
  refreshes its document in place (same id, the earlier content kept as a version); one of
  the same version is left alone, so nothing is fetched or embedded again;
- an entry no longer listed removes its document, or, when the source keeps what is deleted
  (`on_delete` "keep"), marks it gone, exactly as a followed folder's deleted file does;
- an entry that cannot be fetched fails alone, reported with its reason.

A run that fails (the upstream unreachable, a feed that answers 404 or HTML) removes nothing:
its error is the source's `last_error` and the run is retried with backoff. An upstream whose
address moved for good says so with `state["moved_to"]`: the source follows it there (unless it
holds a credential, which never follows a changed address) and the run's report says so.
"""

from __future__ import annotations

import logging
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from loci.auth.secret_box import SecretBox
from loci.errors import Conflict, Forbidden, InvalidInput, LociError, NotFound
from loci.ingest.addresses import checked_url
from loci.ingest.fetch_policy import FetchPolicy
from loci.jobs.worker import describe
from loci.models import Brain, OnDelete, Schedule, Source
from loci.service.library import Library
from loci.service.settings import ScheduleSettings
from loci.service.sync_report import FileFailure, SourceSync
from loci.store.base import Store
from loci.upstream.base import Listing, Upstream
from loci.upstream.kinds import kind as kind_of
from loci.upstream.kinds import opener

log = logging.getLogger(__name__)

MIN_EVERY_S = 60.0  # a source is not run more often than this (a feed is not a chat)
DEFAULT_EVERY_S = 3600.0  # a feed followed by an import: hourly


def origin_prefix(source_id: int) -> str:
    return f"source:{source_id}:"


def backoff(every_s: float, failures: int, cap_s: float) -> float:
    """Seconds until a source that failed `failures` times in a row runs again: twice its
    period after the first failure, doubling each time, at most `cap_s` (or its period)."""
    return min(every_s * 2.0 ** min(failures, 30), max(cap_s, every_s))


def host_allowed(url: str, allowed: tuple[str, ...]) -> bool:
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    for pattern in allowed:
        pattern = pattern.lower().strip().rstrip(".")
        if pattern.startswith("*."):
            if host == pattern[2:] or host.endswith(pattern[1:]):
                return True
        elif host == pattern:
            return True
    return False


@dataclass
class _Run:
    """What one run found besides its counts: the upstream's new state, a moved address."""

    result: SourceSync
    error: str | None = None
    state: Mapping[str, Any] | None = None
    moved_to: str | None = None


class ScheduledSources:
    def __init__(
        self,
        store: Store,
        library: Library,
        fetch_policy: FetchPolicy,
        settings: ScheduleSettings,
        secrets: Callable[[], SecretBox] | None = None,
    ) -> None:
        self.store = store
        self.library = library
        self.fetch_policy = fetch_policy
        self.settings = settings
        self._secrets = secrets

    # registering ----------------------------------------------------------------------------
    def add(
        self,
        brain: Brain,
        location: str,
        every_s: float,
        *,
        kind: str | None = None,
        on_delete: OnDelete = "remove",
        options: Mapping[str, Any] | None = None,
        secret: str | None = None,
        confined: bool = False,
    ) -> Source:
        """Follow `location` (a URL, or what the kind takes) every `every_s` seconds; its first
        run is due at once. `kind` None: a URL is a feed or a page by what it answers.
        `confined`: the caller is not the machine's administrator (the HTTP API), so the
        source must be a URL on a host of `ScheduleSettings.allowed_hosts`."""
        if on_delete not in ("remove", "keep"):
            raise InvalidInput(f"on_delete must be remove or keep, got {on_delete!r}")
        if every_s < MIN_EVERY_S:
            raise InvalidInput(f"a source runs at most every {MIN_EVERY_S:g} s, not {every_s:g}")
        location = location.strip()
        kind = kind or kind_by_address(location)
        if kind is None or kind in ("feed", "page"):
            checked_url(location)  # http(s) only
        # Confined, any kind names a host of the allow-list (https://, imap://, a git URL); a
        # path on the server is never followed for a caller who is not its administrator.
        if confined and not host_allowed(location, self.settings.allowed_hosts):
            host = urlsplit(location).hostname or location
            raise Forbidden(
                f"{host} is not among the hosts this server lets sources follow"
                " (LOCI_SOURCES_ALLOWED_HOSTS)"
            )
        if kind is None:
            kind = self.detect(location)
        options = dict(options or {})
        # The options are checked now, by the kind itself; nothing is contacted.
        self._close(opener(kind)(location, self._options(kind, options), secret, self.fetch_policy))
        sealed = self._box().seal(secret) if secret else None
        for other in self.store.sources(brain.id):
            if other.path == location:
                raise InvalidInput(f"{location} is already source #{other.id} of this brain")
        return self.store.create_source(
            brain.id, location, (), (), on_delete, schedule=Schedule(kind, every_s, options, sealed)
        )

    def follow(
        self, brain: Brain | None, url: str, kind: str, dry_run: bool, confined: bool = False
    ) -> tuple[Literal["add", "unchanged"], int | None]:
        """Follow `url` as a `kind` source every `DEFAULT_EVERY_S` unless this brain does
        already (an import of a feed reader's list: `Importing`); nothing is fetched now."""
        kind_of(kind)
        checked_url(url)
        if brain is not None:
            for other in self.store.sources(brain.id):
                if other.path == url:
                    return "unchanged", other.id
        if dry_run or brain is None:
            return "add", None
        return "add", self.add(brain, url, DEFAULT_EVERY_S, kind=kind, confined=confined).id

    def detect(self, url: str) -> str:
        """ "feed" or "page", by what `url` answers."""
        from loci.ingest.fetch import fetch  # httpx: only for the commands that fetch
        from loci.upstream.feed import looks_like_feed

        answer = fetch(url, self.fetch_policy, accept=("*/*",))
        return "feed" if looks_like_feed(answer.content_type, answer.body) else "page"

    # running ----------------------------------------------------------------------------------
    def run_due(self, owner: str) -> SourceSync | None:
        """Run the scheduled source due first, if one is and no other worker runs it; what the
        run did (None: nothing was due)."""
        source = self.store.claim_source_run(owner, self.settings.lease_s)
        if source is None:
            return None
        return self._run_leased(source, owner)

    def run_now(self, brain: Brain, source_id: int, owner: str) -> SourceSync:
        """Run one source now, due or not (`loci sources sync ID`). `Conflict` when a worker
        runs it at this moment."""
        source = self.store.get_source(brain.id, source_id)
        if not source.scheduled:
            raise InvalidInput(f"source #{source_id} is a folder: `loci sync` brings it up to date")
        claimed = self.store.claim_source_run(owner, self.settings.lease_s, source.id)
        if claimed is None:
            raise Conflict(f"source #{source_id} is being run by {source.lease_owner} right now")
        return self._run_leased(claimed, owner)

    def _run_leased(self, source: Source, owner: str) -> SourceSync:
        brain = self.store.get_brain_by_id(source.brain_id)
        try:
            run = self._sync(brain, source, owner)
        except Exception as error:  # the store or a bug mid-run: recorded, retried with backoff
            log.warning("source #%s: the run broke off", source.id, exc_info=True)
            said = describe(error)
            broken = SourceSync(source.id, source.brain_id, source.path, unreachable=said)
            run = _Run(broken, error=said)
        assert source.every_s is not None
        failures = source.failures + 1 if run.error else 0
        wait = (
            backoff(source.every_s, failures, self.settings.backoff_cap_s)
            if run.error
            else source.every_s
        )
        report = run.result.as_report() | {"kind": source.kind}
        path = None
        if run.moved_to and run.moved_to != source.path:
            if source.secret:  # a credential never follows a changed address
                report["moved_to"] = f"{run.moved_to} (not followed: the source holds a credential)"
            elif any(s.path == run.moved_to for s in self.store.sources(brain.id)):
                report["moved_to"] = f"{run.moved_to} (already another source of this brain)"
            else:
                path = run.moved_to
                report["moved_to"] = run.moved_to
                log.info("source #%s moved for good to %s", source.id, run.moved_to)
        state = None if run.state is None else {**run.state}
        if state is not None:
            state.pop("moved_to", None)
        recorded = self.store.finish_source_run(
            source, owner, report, error=run.error, retry_in_s=wait, state=state, path=path
        )
        if not recorded:
            log.warning("source #%s: the run ended after another worker took it over", source.id)
        return run.result

    def _sync(self, brain: Brain, source: Source, owner: str) -> _Run:
        result = SourceSync(source.id, source.brain_id, source.path)
        try:
            upstream = self._open(source)
        except LociError as error:
            result.unreachable = error.message
            return _Run(result, error=error.message)
        try:
            return self._sync_upstream(brain, source, owner, upstream, result)
        finally:
            self._close(upstream)

    def _sync_upstream(
        self, brain: Brain, source: Source, owner: str, upstream: Upstream, result: SourceSync
    ) -> _Run:
        try:
            # After a run whose entries partly failed, list everything again: a 304 would
            # leave those entries unfetched until the upstream changes.
            failed_before = bool((source.last_report or {}).get("failed"))
            listing = upstream.list({} if failed_before else source.state)
        except LociError as error:
            result.unreachable = error.message
            return _Run(result, error=error.message)
        except Exception as error:  # a bug or a library's own error: still the source's alone
            log.warning("source #%s failed", source.id, exc_info=True)
            result.unreachable = f"{type(error).__name__}: {error}"
            return _Run(result, error=result.unreachable)
        moved = listing.state.get("moved_to")
        run = _Run(result, state=listing.state, moved_to=str(moved) if moved else None)
        prefix = origin_prefix(source.id)
        known = self.store.origins(brain.id, prefix)
        if listing.unchanged:
            result.unchanged = result.files = len(known)
            return run
        try:
            self._reconcile(brain, source, owner, upstream, listing, known, result)
        except _LeaseLost:
            run.error = result.unreachable = "another worker took this run over"
        return run

    def _reconcile(
        self,
        brain: Brain,
        source: Source,
        owner: str,
        upstream: Upstream,
        listing: Listing,
        known: dict[str, int],
        result: SourceSync,
    ) -> None:
        prefix = origin_prefix(source.id)
        documents = {d.id: d for d in self.store.get_documents(brain.id, list(known.values()))}
        result.files = len(listing.entries)
        renewed = time.monotonic()
        returned: list[int] = []
        for entry in listing.entries:
            if time.monotonic() - renewed > self.settings.lease_s / 3:
                if not self.store.renew_source_run(source, owner, self.settings.lease_s):
                    raise _LeaseLost
                renewed = time.monotonic()
            origin = prefix + entry.key
            document = documents.get(known.get(origin, -1))
            seen = (document.metadata.get("upstream") or {}) if document else {}
            if document is not None and document.gone_at is not None:
                returned.append(document.id)
            if document is not None and seen.get("version") == entry.version:
                result.unchanged += 1
                continue
            upstream_meta = {"source": source.id, "key": entry.key, "version": entry.version}
            try:
                fetched = upstream.fetch(entry)
                added = self.library.add_bytes(
                    brain,
                    fetched.name,
                    fetched.data,
                    kind="web" if fetched.url else "file",
                    title=fetched.title or entry.title,
                    mime_type=fetched.mime_type,
                    source_url=fetched.url,
                    metadata={**fetched.metadata, "upstream": upstream_meta},
                    origin=origin,
                )
            except LociError as error:
                result.failed.append(FileFailure(entry.title or entry.key, error.message))
                continue
            if added.deduped:  # the same bytes: only the version it is known by changes
                self.store.merge_document_metadata(added.document.id, {"upstream": upstream_meta})
                result.unchanged += 1
            elif added.refreshed:
                result.updated += 1
                result.queued.append(added.document.id)
            else:
                result.added += 1
                result.queued.append(added.document.id)
        for failed_key in listing.failed:
            result.failed.append(FileFailure(failed_key, listing.failed[failed_key]))
        if returned:
            result.returned = len(self.store.mark_gone(brain.id, returned, False))
        listed = {prefix + e.key for e in listing.entries} | {prefix + k for k in listing.failed}
        vanished = [i for origin, i in known.items() if origin not in listed]
        if source.on_delete == "keep":
            result.gone = len(self.store.mark_gone(brain.id, vanished, True))
            return
        for document_id in vanished:
            try:
                self.library.remove(brain, document_id)
            except NotFound:  # removed meanwhile by hand
                continue
            result.removed += 1

    def _open(self, source: Source) -> Upstream:
        secret = self._box().open(source.secret) if source.secret else None
        options = self._options(source.kind, source.options)
        return opener(source.kind)(source.path, options, secret, self.fetch_policy)

    def _options(self, kind: str, options: Mapping[str, Any]) -> dict[str, Any]:
        """A kind's options with what Loci supplies itself: where a git source keeps its
        clone."""
        if kind != "git" or "cache_dir" in options:
            return dict(options)
        base = self.settings.cache_dir or Path(tempfile.gettempdir()) / "loci-sources"
        return {**options, "cache_dir": str(base / "git")}

    @staticmethod
    def _close(upstream: Upstream) -> None:
        """Let go of what the upstream holds open (an IMAP connection logs out)."""
        close = getattr(upstream, "close", None)
        if callable(close):
            try:
                close()
            except Exception:  # closing a connection that already broke
                log.debug("closing an upstream failed", exc_info=True)

    def _box(self) -> SecretBox:
        if self._secrets is None:
            raise InvalidInput("this Loci keeps no secrets (no key file): a credential is refused")
        return self._secrets()


def kind_by_address(location: str) -> str | None:
    """The kind its address alone tells: imap, imaps (a mailbox); webdav, webdavs, davs (a
    WebDAV folder); a URL or path ending in .git (a repository). None: ask the URL."""
    scheme = urlsplit(location).scheme.lower()
    if scheme in ("imap", "imaps"):
        return "imap"
    if scheme in ("webdav", "webdavs", "davs"):
        return "webdav"
    if urlsplit(location).path.rstrip("/").endswith(".git"):
        return "git"
    return None


class _LeaseLost(Exception):
    """The run's lease ran out and another worker took the source: this run stops."""
