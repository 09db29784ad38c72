"""Followed web pages: one address, or a list of them (the source's `urls` option adds to its
address), each re-checked on the schedule through Loci's one fetcher.

A page is asked for conditionally (If-None-Match / If-Modified-Since from its last answer): a
304 is one request and nothing else. A server without validators sends the page again; the
same bytes (its hash unchanged) then change nothing either. A page that changed is listed with
its new version and refreshes its document (the earlier text kept as a version).

A page that fails (404, a timeout) fails alone: it is reported, and its document is kept as
it is. The run fails as a whole only when every page did.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from typing import Any

from loci.errors import FetchError, InvalidInput, LociError
from loci.ingest.addresses import checked_url
from loci.ingest.fetch import FetchedPage, fetch_web_page
from loci.ingest.fetch_policy import FetchPolicy
from loci.ingest.sources import page_name
from loci.upstream.base import Entry, Fetched, Listing, Upstream

# What an entry's or a followed page's address may be, as `loci add URL` takes it.
PAGE_TYPES = (
    "text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf"
)  # fmt: skip
MAX_PAGES = 1000


def open(  # noqa: A001 - the name every kind's module gives its opener
    location: str, options: Mapping[str, Any], secret: str | None, fetch: FetchPolicy
) -> Upstream:
    more = options.get("urls") or []
    if not isinstance(more, list) or not all(isinstance(u, str) for u in more):
        raise InvalidInput("a source's `urls` option is a list of addresses")
    urls = list(dict.fromkeys([location, *more]))
    if len(urls) > MAX_PAGES:
        raise InvalidInput(f"a source follows at most {MAX_PAGES} pages, not {len(urls)}")
    for url in urls:
        checked_url(url)  # http(s) only, said now rather than at the first run
    return Pages(urls, fetch)


class Pages:
    def __init__(self, urls: list[str], policy: FetchPolicy) -> None:
        self.urls = urls
        self.policy = policy
        self._fetched: dict[str, FetchedPage] = {}

    def list(self, state: Mapping[str, Any]) -> Listing:
        """Every page, each asked for with its validators; `state["pages"]` keeps each page's
        validators and the hash of its bytes (its version)."""
        known: Mapping[str, Any] = state.get("pages") or {}
        pages: dict[str, dict[str, str]] = {}
        entries: list[Entry] = []
        failed: dict[str, str] = {}
        for url in self.urls:
            before: Mapping[str, str] = known.get(url) or {}
            validators = {k: before[k] for k in ("etag", "last-modified") if before.get(k)}
            try:
                page = fetch_web_page(url, self.policy, accept=PAGE_TYPES, conditional=validators)
            except LociError as error:
                failed[url] = error.message
                if before:
                    pages[url] = dict(before)
                    entries.append(Entry(url, before["sha256"]))
                continue
            if page.status == 304 and before:
                pages[url] = dict(before)
                entries.append(Entry(url, before["sha256"]))
                continue
            digest = hashlib.sha256(page.body).hexdigest()
            kept = {k: page.headers[k] for k in ("etag", "last-modified") if k in page.headers}
            pages[url] = {**kept, "sha256": digest}
            if digest != before.get("sha256"):
                self._fetched[url] = page
            entries.append(Entry(url, digest))
        if failed and len(failed) == len(self.urls):
            reasons = "; ".join(failed.values())
            raise FetchError(reasons if len(failed) == 1 else f"every page failed: {reasons}")
        return Listing(entries=tuple(entries), state={"pages": pages}, failed=failed)

    def fetch(self, entry: Entry) -> Fetched:
        page = self._fetched.get(entry.key)
        if page is None:  # listed unchanged, yet asked for: read it again
            page = fetch_web_page(entry.key, self.policy, accept=PAGE_TYPES)
        return Fetched(
            name=page_name(page.url, page.content_type),
            data=page.body,
            mime_type=page.content_type,
            url=page.url,
            metadata={"last_modified": page.headers.get("last-modified")},
        )
