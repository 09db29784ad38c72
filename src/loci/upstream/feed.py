"""A followed feed: RSS 2.0, RSS 1.0, Atom or JSON Feed, read through Loci's one fetcher (the
SSRF policy, size and time limits) with conditional requests, so a feed that has not changed
costs one request answered 304 (or, from a server without validators, the same bytes again).

Each entry is known by its id (RSS's guid, Atom's id, JSON Feed's id; its link, failing that)
and versioned by a hash of what the feed says of it, so an entry the feed did not change is
not fetched again. An entry becomes a document either from the feed's own content, when the
feed carries the whole text (`FULL_TEXT_CHARS` or more, or the source's `content` option is
"feed"), or as the web page its link names, fetched like `loci add URL` (option "page").

What goes wrong is the source's last error, and nothing is removed: a feed that answers 404 or
410, an HTML page instead of a feed (a site redesigned, a parked domain), a redirect loop, XML
that does not parse. A feed moved for good (301, 308) is read at its new address, which the
listing reports as `state["moved_to"]` for the sync to keep.
"""

from __future__ import annotations

import hashlib
import html
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from lxml import etree

from loci.errors import InvalidInput, ParseError, UnsupportedSource
from loci.ingest.fetch import HTML_TYPES, fetch, fetch_web_page
from loci.ingest.fetch_policy import FetchPolicy
from loci.ingest.parsers.html import strip_markup
from loci.ingest.sources import page_name
from loci.upstream.base import Entry, Fetched, Listing, Upstream

# An entry whose content holds this many characters of text is kept from the feed itself.
FULL_TEXT_CHARS = 1000
# More entries than this in one feed are not read (a feed is a window on recent items).
MAX_ENTRIES = 5000
CONTENT_CHOICES = ("auto", "feed", "page")

FEED_TYPES = frozenset(
    {
        "application/rss+xml", "application/atom+xml", "application/rdf+xml",
        "application/feed+json", "application/json", "application/xml", "text/xml",
    }
)  # fmt: skip
# Read whatever the server says it is: an HTML answer is reported as such, not as a type.
_ACCEPT = (*sorted(FEED_TYPES), "text/*", "*/*")
# What an entry's or a followed page's address may be, as `loci add URL` takes it.
PAGE_TYPES = (
    "text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf"
)  # fmt: skip

_ATOM = "http://www.w3.org/2005/Atom"
_RSS1 = "http://purl.org/rss/1.0/"
_RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_CONTENT = "http://purl.org/rss/1.0/modules/content/"
_DC = "http://purl.org/dc/elements/1.1/"
_SAFE_XML = etree.XMLParser(
    resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False, recover=False
)


@dataclass(frozen=True)
class FeedEntry:
    key: str
    title: str | None
    link: str | None
    updated: str | None
    content: str | None  # HTML
    summary: str | None  # HTML

    @property
    def version(self) -> str:
        said = json.dumps([self.title, self.link, self.updated, self.content, self.summary])
        return hashlib.sha256(said.encode("utf-8")).hexdigest()[:20]


@dataclass(frozen=True)
class ParsedFeed:
    title: str | None
    entries: tuple[FeedEntry, ...]


def open(  # noqa: A001 - the name every kind's module gives its opener
    location: str, options: Mapping[str, Any], secret: str | None, fetch: FetchPolicy
) -> Upstream:
    content = str(options.get("content", "auto"))
    if content not in CONTENT_CHOICES:
        choices = ", ".join(CONTENT_CHOICES)
        raise InvalidInput(f"a feed's `content` option is one of {choices}, not {content!r}")
    return Feed(location, fetch, content)


class Feed:
    """One feed at `url`; `content` says where an entry's text comes from (auto: the feed's
    own when it carries the whole text, else the linked page)."""

    def __init__(self, url: str, policy: FetchPolicy, content: str = "auto") -> None:
        self.url = url
        self.policy = policy
        self.content = content
        self._entries: dict[str, FeedEntry] = {}

    def list(self, state: Mapping[str, Any]) -> Listing:
        validators = {k: str(state[k]) for k in ("etag", "last-modified") if state.get(k)}
        page = fetch(self.url, self.policy, accept=_ACCEPT, conditional=validators)
        moved = {"moved_to": page.moved_to} if page.moved_to else {}
        if page.status == 304:
            return Listing(unchanged=True, state={**state, **moved})
        digest = hashlib.sha256(page.body).hexdigest()
        new_state = {k: page.headers[k] for k in ("etag", "last-modified") if k in page.headers}
        new_state = {**new_state, "sha256": digest, **moved}
        if digest == state.get("sha256"):  # a server without validators sent the same bytes
            return Listing(unchanged=True, state=new_state)
        parsed = parse_feed(page.body, page.content_type, page.url)
        self._entries = {e.key: e for e in parsed.entries}
        entries = tuple(Entry(e.key, e.version, e.title) for e in self._entries.values())
        return Listing(entries=entries, state=new_state)

    def fetch(self, entry: Entry) -> Fetched:
        found = self._entries.get(entry.key)
        if found is None:
            raise InvalidInput(f"the feed no longer lists {entry.key}")
        meta = {"feed": self.url, "entry": found.key, "updated": found.updated}
        if self.content != "page" and (self.content == "feed" or _full_text(found)):
            return _from_feed(found, self.url, meta)
        if found.link is None:  # nothing to fetch: what the feed says is all there is
            return _from_feed(found, self.url, meta)
        page = fetch_web_page(found.link, self.policy, accept=PAGE_TYPES)
        return Fetched(
            name=page_name(page.url, page.content_type),
            data=page.body,
            mime_type=page.content_type,
            title=found.title,
            url=page.url,
            metadata=meta,
        )


def _full_text(entry: FeedEntry) -> bool:
    return entry.content is not None and len(strip_markup(entry.content)) >= FULL_TEXT_CHARS


def _from_feed(entry: FeedEntry, feed_url: str, metadata: Mapping[str, Any]) -> Fetched:
    """The entry as the feed tells it, an HTML page of its own."""
    title = html.escape(entry.title or "")
    body = entry.content or entry.summary or ""
    link = ""
    if entry.link:
        address = html.escape(entry.link)
        link = f'<p><a href="{address}">{address}</a></p>'
    page = (
        f'<!doctype html><html><head><meta charset="utf-8"><title>{title}</title></head>'
        f"<body><article><h1>{title}</h1>{body}{link}</article></body></html>"
    )
    where = entry.link or f"{feed_url}#{entry.key}"
    return Fetched(
        name=page_name(where, "text/html"),
        data=page.encode("utf-8"),
        mime_type="text/html",
        title=entry.title,
        url=entry.link,
        metadata=metadata,
    )


# parsing ---------------------------------------------------------------------------------


def parse_feed(data: bytes, content_type: str, url: str) -> ParsedFeed:
    """The entries of an RSS, Atom or JSON feed. `ParseError` for bytes that are none of
    them, `UnsupportedSource` for an HTML page (a feed that died into a web page)."""
    head = data[:1024].lstrip().lower()
    if content_type in ("application/feed+json", "application/json") or head.startswith(b"{"):
        return _json_feed(data, url)
    if content_type in HTML_TYPES or head.startswith((b"<!doctype html", b"<html")):
        raise UnsupportedSource(
            f"{url} answered an HTML page, not a feed (the feed may have moved or closed)"
        )
    try:
        root = etree.fromstring(data, _SAFE_XML)
    except etree.XMLSyntaxError as exc:
        raise ParseError(f"{url} is not a feed Loci can read: {exc}") from None
    if root.tag == "rss":
        channel = root.find("channel")
        if channel is None:
            raise ParseError(f"{url}: an RSS feed without a channel")
        items = channel.iterfind("item")
        return ParsedFeed(_text(channel, "title"), _entries(_rss_entry(i) for i in items))
    if root.tag == f"{{{_ATOM}}}feed":
        items = root.iterfind(f"{{{_ATOM}}}entry")
        return ParsedFeed(_text(root, f"{{{_ATOM}}}title"), _entries(_atom_entry(i) for i in items))
    if root.tag == f"{{{_RDF}}}RDF":
        channel = root.find(f"{{{_RSS1}}}channel")
        title = _text(channel, f"{{{_RSS1}}}title") if channel is not None else None
        items = root.iterfind(f"{{{_RSS1}}}item")
        return ParsedFeed(title, _entries(_rss1_entry(i) for i in items))
    if root.tag in ("html", "{http://www.w3.org/1999/xhtml}html"):
        raise UnsupportedSource(
            f"{url} answered an HTML page, not a feed (the feed may have moved or closed)"
        )
    root_name = etree.QName(root).localname
    raise ParseError(f"{url} is XML but not RSS or Atom (its root is <{root_name}>)")


def _entries(found: Iterator[FeedEntry | None]) -> tuple[FeedEntry, ...]:
    """Entries with a key, the first of each key, at most `MAX_ENTRIES`."""
    kept: dict[str, FeedEntry] = {}
    for entry in found:
        if entry is not None and entry.key not in kept:
            kept[entry.key] = entry
            if len(kept) >= MAX_ENTRIES:
                break
    return tuple(kept.values())


def _text(element: etree._Element | None, path: str) -> str | None:
    if element is None:
        return None
    found = element.find(path)
    if found is None:
        return None
    text = "".join(found.itertext()).strip()
    return text or None


def _keyed(key: str | None, title: str | None, link: str | None, body: str | None) -> str | None:
    if key:
        return key
    if link:
        return link
    if title or body:  # no id nor link: what it says is all that tells it apart
        return "sha256:" + hashlib.sha256(f"{title}\n{body}".encode()).hexdigest()[:20]
    return None


def _rss_entry(item: etree._Element) -> FeedEntry | None:
    title, link = _text(item, "title"), _text(item, "link")
    content = _text(item, f"{{{_CONTENT}}}encoded")
    summary = _text(item, "description")
    key = _keyed(_text(item, "guid"), title, link, content or summary)
    if key is None:
        return None
    updated = _text(item, "pubDate") or _text(item, f"{{{_DC}}}date")
    return FeedEntry(key, title, link, updated, content, summary)


def _rss1_entry(item: etree._Element) -> FeedEntry | None:
    title, link = _text(item, f"{{{_RSS1}}}title"), _text(item, f"{{{_RSS1}}}link")
    content = _text(item, f"{{{_CONTENT}}}encoded")
    summary = _text(item, f"{{{_RSS1}}}description")
    key = _keyed(item.get(f"{{{_RDF}}}about"), title, link, content or summary)
    if key is None:
        return None
    return FeedEntry(key, title, link, _text(item, f"{{{_DC}}}date"), content, summary)


def _atom_entry(item: etree._Element) -> FeedEntry | None:
    link = None
    for candidate in item.iterfind(f"{{{_ATOM}}}link"):
        if candidate.get("rel", "alternate") == "alternate" and candidate.get("href"):
            link = candidate.get("href")
            break
    title = _text(item, f"{{{_ATOM}}}title")
    content = _atom_content(item.find(f"{{{_ATOM}}}content"))
    summary = _atom_content(item.find(f"{{{_ATOM}}}summary"))
    key = _keyed(_text(item, f"{{{_ATOM}}}id"), title, link, content or summary)
    if key is None:
        return None
    updated = _text(item, f"{{{_ATOM}}}updated") or _text(item, f"{{{_ATOM}}}published")
    return FeedEntry(key, title, link, updated, content, summary)


def _atom_content(element: etree._Element | None) -> str | None:
    """An Atom text construct as HTML: `html` is escaped HTML, `xhtml` a div of markup, `text`
    (the default) plain text."""
    if element is None:
        return None
    kind = element.get("type", "text")
    if kind == "xhtml":
        parts = [etree.tostring(child, encoding="unicode") for child in element]
        return "".join(parts).strip() or None
    text = "".join(element.itertext()).strip()
    if not text:
        return None
    return text if kind == "html" else f"<p>{html.escape(text)}</p>"


def _json_feed(data: bytes, url: str) -> ParsedFeed:
    try:
        feed = json.loads(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ParseError(f"{url} is not a feed Loci can read: {exc}") from None
    if not isinstance(feed, dict) or "jsonfeed.org" not in str(feed.get("version", "")):
        raise ParseError(f"{url} is JSON but not a JSON Feed (no jsonfeed.org version)")
    items = feed.get("items")
    if not isinstance(items, list):
        raise ParseError(f"{url}: a JSON Feed without items")
    return ParsedFeed(_string(feed.get("title")), _entries(_json_entry(i) for i in items))


def _json_entry(item: object) -> FeedEntry | None:
    if not isinstance(item, dict):
        return None
    title, link = _string(item.get("title")), _string(item.get("url"))
    content = _string(item.get("content_html"))
    text = _string(item.get("content_text"))
    if content is None and text is not None:
        content = "".join(f"<p>{html.escape(p)}</p>" for p in text.split("\n\n"))
    summary = _string(item.get("summary"))
    ident = item.get("id")
    key = _keyed(str(ident) if ident not in (None, "") else None, title, link, content or summary)
    if key is None:
        return None
    updated = _string(item.get("date_modified")) or _string(item.get("date_published"))
    return FeedEntry(key, title, link, updated, content, summary)


def _string(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def looks_like_feed(content_type: str, body: bytes) -> bool:
    """Whether a fetched answer is a feed (for `loci sources add URL` without `--kind`)."""
    if content_type in FEED_TYPES - {"application/json", "application/xml", "text/xml"}:
        return True
    head = body[:2048].lstrip().lower()
    if content_type in ("application/json",) or head.startswith(b"{"):
        return b"jsonfeed.org" in head
    return any(tag in head for tag in (b"<rss", b"<feed", b"<rdf:rdf"))


__all__ = ["Feed", "looks_like_feed", "open", "parse_feed"]
