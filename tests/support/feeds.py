"""A web site on 127.0.0.1 whose feeds and pages a test changes between runs: `FeedSite`.

Each path answers what the test put there (`put`), with an ETag and a Last-Modified, and a
conditional request whose validators still hold gets a bare 304 — as a real server does.
Every request is logged (`requests`: method, path, whether it was conditional, the status),
so a test can count what a re-check cost. `redirect` makes a path a 301/302 to another,
`hold` makes a path wait until released (a run caught in the middle).
"""

from __future__ import annotations

import hashlib
import threading
from dataclasses import dataclass
from email.utils import formatdate
from html import escape

from tests.support.loopback import Loopback, QuietHandler

RSS = "application/rss+xml"
ATOM = "application/atom+xml"
JSON_FEED = "application/feed+json"
HTML = "text/html; charset=utf-8"


@dataclass(frozen=True)
class Served:
    content_type: str
    body: bytes
    status: int = 200
    validators: bool = True  # send ETag / Last-Modified, and honour them
    location: str | None = None  # a redirect's target


@dataclass(frozen=True)
class Request:
    path: str
    conditional: bool
    status: int


class FeedSite:
    def __init__(self) -> None:
        self._paths: dict[str, Served] = {}
        self._stamps: dict[str, float] = {}
        self._lock = threading.Lock()
        self._clock = 1_700_000_000.0
        self.requests: list[Request] = []
        self.holding: dict[str, threading.Event] = {}
        self.arrived: dict[str, threading.Event] = {}
        site = self

        class Handler(QuietHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                site._answer(self)

        self.web = Loopback(Handler)

    def __enter__(self) -> FeedSite:
        self.web.start()
        return self

    def __exit__(self, *exc: object) -> None:
        for event in self.holding.values():
            event.set()
        self.web.stop()

    def url(self, path: str) -> str:
        return self.web.url(path)

    def put(
        self, path: str, body: str | bytes, content_type: str = RSS, validators: bool = True
    ) -> None:
        data = body.encode() if isinstance(body, str) else body
        with self._lock:
            if self._paths.get(path, Served("", b"")).body != data:
                self._clock += 60  # a change is a minute later, as Last-Modified counts
                self._stamps[path] = self._clock
            self._paths[path] = Served(content_type, data, validators=validators)

    def fail(self, path: str, status: int, body: str = "gone") -> None:
        with self._lock:
            self._paths[path] = Served("text/plain", body.encode(), status=status)

    def redirect(self, path: str, to: str, status: int = 301) -> None:
        with self._lock:
            self._paths[path] = Served("text/plain", b"", status=status, location=to)

    def hold(self, path: str) -> threading.Event:
        """Requests for `path` wait until the event returned is set; `arrived[path]` is set
        when one is waiting."""
        self.holding[path] = threading.Event()
        self.arrived[path] = threading.Event()
        return self.holding[path]

    def count(self, path: str | None = None, status: int | None = None) -> int:
        return sum(
            1
            for r in list(self.requests)
            if (path is None or r.path == path) and (status is None or r.status == status)
        )

    def _answer(self, handler: QuietHandler) -> None:
        path = handler.path
        if path in self.holding:
            self.arrived[path].set()
            self.holding[path].wait(30)
        with self._lock:
            served = self._paths.get(path)
            stamp = self._stamps.get(path, self._clock)
        conditional = bool(
            handler.headers.get("If-None-Match") or handler.headers.get("If-Modified-Since")
        )
        if served is None:
            self.requests.append(Request(path, conditional, 404))
            handler.send(404, "no such page", "text/plain")
            return
        if served.location is not None:
            self.requests.append(Request(path, conditional, served.status))
            handler.send(served.status, "", "text/plain", {"Location": served.location})
            return
        if served.status != 200:
            self.requests.append(Request(path, conditional, served.status))
            handler.send(served.status, served.body, served.content_type)
            return
        etag = '"' + hashlib.sha256(served.body).hexdigest()[:16] + '"'
        modified = formatdate(stamp, usegmt=True)
        headers = {"ETag": etag, "Last-Modified": modified} if served.validators else {}
        if served.validators and handler.headers.get("If-None-Match") == etag:
            self.requests.append(Request(path, conditional, 304))
            handler.send(304, b"", None, headers, length=False)
            return
        self.requests.append(Request(path, conditional, 200))
        handler.send(200, served.body, served.content_type, headers)


def rss(entries: list[tuple[str, str, str]], title: str = "Garden notes") -> str:
    """An RSS 2.0 feed of (guid, title, HTML content) entries, each content as content:encoded."""
    items = "".join(
        f"<item><guid>{escape(guid)}</guid><title>{escape(name)}</title>"
        f"<link>https://garden.example/{escape(guid)}</link>"
        f"<content:encoded>{escape(body)}</content:encoded></item>"
        for guid, name, body in entries
    )
    return (
        '<?xml version="1.0" encoding="utf-8"?>'
        '<rss version="2.0" xmlns:content="http://purl.org/rss/1.0/modules/content/">'
        f"<channel><title>{escape(title)}</title><link>https://garden.example/</link>"
        f"{items}</channel></rss>"
    )


def rss_linking(entries: list[tuple[str, str, str]]) -> str:
    """An RSS 2.0 feed of (guid, title, link) entries with a short description only: each
    entry's text is on the page it links to."""
    items = "".join(
        f"<item><guid>{escape(guid)}</guid><title>{escape(name)}</title>"
        f"<link>{escape(link)}</link><description>A short teaser.</description></item>"
        for guid, name, link in entries
    )
    channel = f"<channel><title>Links</title>{items}</channel>"
    return f'<?xml version="1.0"?><rss version="2.0">{channel}</rss>'


def article(title: str, sentence: str, length: int = 1200) -> str:
    """An HTML article about `sentence`, long enough to count as a feed's full text."""
    filler = " ".join([sentence] * (length // max(len(sentence), 1) + 1))
    return f"<h2>{escape(title)}</h2><p>{escape(filler)}</p>"


def page(title: str, text: str) -> str:
    return (
        f"<!doctype html><html><head><title>{escape(title)}</title></head><body><main>"
        f"<h1>{escape(title)}</h1><p>{escape(text)}</p><p>{escape(text)}</p></main></body></html>"
    )


def opml(folders: dict[str, list[tuple[str, str]]]) -> str:
    """A feed reader's OPML export: folder name -> (title, feed URL) outlines; the folder ""
    holds feeds at the top level."""
    parts = []
    for folder, feeds in folders.items():
        outlines = "".join(
            f'<outline type="rss" text="{escape(t)}" title="{escape(t)}" xmlUrl="{escape(u)}"/>'
            for t, u in feeds
        )
        parts.append(
            f'<outline text="{escape(folder)}">{outlines}</outline>' if folder else outlines
        )
    return (
        '<?xml version="1.0" encoding="UTF-8"?><opml version="2.0"><head><title>Subscriptions'
        f"</title></head><body>{''.join(parts)}</body></opml>"
    )
