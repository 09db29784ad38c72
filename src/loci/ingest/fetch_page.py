"""A web page for a brain: the plain fetcher first, a headless browser when the page needs one.

Most pages carry their text in the HTML, and the plain fetcher is fast and small. A page whose
HTML is an app shell (an empty root element and scripts, "enable JavaScript") or whose main
content comes out empty while it carries scripts is loaded again in Chromium (`fetch_browser`),
under the same address rules. Bot walls (Cloudflare, CAPTCHAs, "access denied") are refused on
either path: a browser would only store the wall.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass

import httpx

from loci.errors import ChallengePage, FetchError
from loci.ingest.encoding import decode_text
from loci.ingest.fetch import (
    DEFAULT_ACCEPT,
    HTML_TYPES,
    FetchedPage,
    _challenge_message,
    fetch_web_page,
)
from loci.ingest.fetch_browser import BrowserSettings, render_page, unavailable_reason
from loci.ingest.fetch_policy import FetchPolicy

__all__ = ["WebPage", "fetch_page", "needs_browser"]

log = logging.getLogger(__name__)

# Below this many characters of extracted main content, a page with scripts is presumed to
# build its content in the browser. Challenge detection's "empty" threshold is 200 visible
# characters of the whole page; this one looks only at what the extractor keeps as the article,
# so a shell with a header, a menu and a footer around an empty <div id="app"> is caught too.
MIN_MAIN_TEXT_CHARS = 200


@dataclass(frozen=True)
class WebPage:
    page: FetchedPage
    rendered: bool = False  # True when the bytes are Chromium's rendered DOM
    blocked: tuple[str, ...] = ()  # requests the browser was refused ("url: reason")
    why_rendered: str | None = None


def needs_browser(page: FetchedPage) -> str | None:
    """Why `page` should be rendered in a browser, or None if its HTML has the content."""
    if page.needs_javascript is not None:
        return page.needs_javascript
    if page.content_type not in HTML_TYPES or b"<script" not in page.body[:2_000_000].lower():
        return None
    from loci.ingest.parsers.html import parse_html  # trafilatura loads slowly; pages only

    text = parse_html(decode_text(page.body), url=page.url).text
    if len("".join(text.split())) < MIN_MAIN_TEXT_CHARS:
        return "little text without its scripts"
    return None


def fetch_page(
    url: str,
    policy: FetchPolicy,
    browser: BrowserSettings,
    *,
    accept: Collection[str] = DEFAULT_ACCEPT,
) -> WebPage:
    """Fetch `url` for keeping; render it in Chromium when its HTML has no content of its own.

    Without a usable browser, an app shell is refused as before (ChallengePage) with what to
    install; a page that is merely thin is kept as fetched (also when its render fails, unless
    what rendered is a bot check).
    """
    page = fetch_web_page(url, policy, accept=accept, javascript_ok=True)
    reason = needs_browser(page)
    if reason is None:
        return WebPage(page)
    missing = unavailable_reason(browser)
    if missing is not None:
        if page.needs_javascript is None:
            return WebPage(page)
        message = _challenge_message(httpx.URL(page.url), page.needs_javascript)
        raise ChallengePage(f"{message}; {missing}")
    log.info("rendering %s in the browser (%s)", page.url, reason)
    try:
        rendered = render_page(page.url, policy, browser)
    except ChallengePage:
        raise
    except FetchError as error:
        if page.needs_javascript is not None:
            raise
        # A thin page is still a page: keep what the plain fetch read rather than fail on a
        # render that timed out or broke.
        log.warning("kept %s as fetched: rendering it failed (%s)", page.url, error.message)
        return WebPage(page)
    return WebPage(rendered.page, rendered=True, blocked=rendered.blocked, why_rendered=reason)
