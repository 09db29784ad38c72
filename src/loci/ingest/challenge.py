"""Recognise bot challenges and interstitials that stand in for the page a user asked for.

A site behind Cloudflare, DataDome, PerimeterX, Akamai or Imperva may answer a fetch with a page
that is not the content: "Just a moment...", a CAPTCHA, "Access denied", or a single-page app that
renders nothing without JavaScript. Indexing that page would store noise under the user's URL, so
the fetcher refuses it with a reason the user can act on (open it in a browser, save it by hand).

The markers below also occur on real pages: Cloudflare injects a `challenge-platform` script into
ordinary pages, blogs carry a `<noscript>Please enable JavaScript to view the comments</noscript>`,
an article may discuss CAPTCHAs. So every marker is weighed by how much readable text the page
has: an interstitial has a few hundred characters at most, a real page has more. Only a header
the vendor sets solely on challenges (`cf-mitigated: challenge`) counts on its own.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from html.parser import HTMLParser

__all__ = [
    "ACCESS_DENIED",
    "BROWSER_CHECK",
    "CAPTCHA",
    "CLOUDFLARE",
    "DATADOME",
    "ENABLE_JAVASCRIPT",
    "IMPERVA",
    "JAVASCRIPT_SHELL",
    "PERIMETERX",
    "detect_challenge",
]

CLOUDFLARE = "Cloudflare challenge page"
DATADOME = "DataDome bot check"
PERIMETERX = "PerimeterX bot check"
IMPERVA = "Imperva bot check"
ACCESS_DENIED = "access denied page"
CAPTCHA = "CAPTCHA"
BROWSER_CHECK = "browser check page"
ENABLE_JAVASCRIPT = "asks to enable JavaScript"
JAVASCRIPT_SHELL = "empty JavaScript shell"

# Thresholds count visible, non-whitespace characters (scripts, styles and <noscript> excluded).
# Characters rather than words so that pages in scripts without spaces (Chinese, Japanese) are
# not mistaken for short ones. Measured on vendor pages: Akamai's denial is ~150 characters,
# Cloudflare's "Just a moment..." ~300, its "Attention Required" block page ~800.
_LONG = 3000  # above this the page has real content; no body marker is believed
_SHORT = 1500  # room for the wordiest interstitial
_BRIEF = 600  # a 200 answer must be this terse before a phrase in its text condemns it
_EMPTY = 200  # nothing to read: a header line, a "loading" spinner

# Only the start of a huge page is searched for markers: interstitials are small, and the
# scan must stay cheap on a 20 MB document.
_MARKER_SCAN_CHARS = 512 * 1024
_FEED_CHUNK = 64 * 1024

_BLOCKING_STATUSES = frozenset({403, 429, 503})

# Markers in the raw HTML (ids, script paths, config objects), lower-cased.
# `/cdn-cgi/challenge-platform/scripts/jsd/` is deliberately absent: Cloudflare adds that bot
# sensor to ordinary pages too.
_CLOUDFLARE_MARKERS = (
    "_cf_chl_opt",
    "cf_chl_",
    "cf-chl-",
    "cf-browser-verification",
    "cf-challenge-running",
    "cf-please-wait",
)
_DATADOME_MARKERS = ("captcha-delivery.com", "ddcaptcha", "datadome captcha")
_PERIMETERX_MARKERS = ("px-captcha", "_pxcaptcha", "human challenge")
# PerimeterX's sensor script is on every page of a protected site; only with a blocking status.
_PERIMETERX_SENSOR = ("_pxappid", "perimeterx", "/_px/")
# Incapsula injects its resource script into ordinary pages; its block page names the incident.
_IMPERVA_BLOCK = "incapsula incident id"
_IMPERVA_RESOURCE = "_incapsula_resource"
# Akamai writes its denial with character references, so these are looked for in decoded text.
_AKAMAI_MARKERS = ("errors.edgesuite.net", "reference #18.")
_CAPTCHA_WIDGETS = (
    "g-recaptcha",
    "recaptcha/api.js",
    "recaptcha/enterprise.js",
    "h-captcha",
    "hcaptcha.com/1/api.js",
    "cf-turnstile",
    "challenges.cloudflare.com/turnstile",
    "captcha-container",
)

_CLOUDFLARE_TITLES = ("just a moment", "attention required! | cloudflare")
_ACCESS_DENIED_TITLES = ("access denied", "access to this page has been denied")
_BROWSER_CHECK_TITLES = (
    "checking your browser",
    "verify you are human",
    "verifying you are human",
    "human verification",
    "security check",
    "bot verification",
    "are you a robot",
    "pardon our interruption",
    "request unsuccessful",
    "ddos protection",
)

_ACCESS_DENIED_PHRASES = (
    "access denied",
    "access to this page has been denied",
    "you don't have permission to access",
    "you do not have permission to access",
    "sorry, you have been blocked",
    "you have been blocked",
    "your access to this site has been limited",
    "your ip has been blocked",
)
_BROWSER_CHECK_PHRASES = (
    "checking your browser before accessing",
    "checking if the site connection is secure",
    "verify you are human",
    "verifying you are human",
    "complete the security check",
    "press & hold",
    "press and hold",
    "needs to review the security of your connection",
)
_CAPTCHA_PHRASES = (
    "unusual traffic from your computer network",
    "are you a robot",
    "not a robot",
    "solve the captcha",
    "complete the captcha",
    "enter the characters you see",
    "type the characters you see",
)
_ENABLE_JAVASCRIPT = re.compile(
    r"enable javascript"
    r"|javascript (?:is |must be )?(?:required|disabled|not available|not enabled|must be enabled)"
    r"|requires? javascript"
    r"|(?:turn on|activate|switch on|need) javascript"
    r"|javascript to run this app"
    r"|javascript and cookies"
)


@dataclass(frozen=True)
class _Page:
    title: str
    text: str  # visible text without <noscript>, lower-cased, whitespace collapsed
    noscript: str  # text inside <noscript>, lower-cased
    text_chars: int  # non-whitespace characters of `text`
    has_noscript: bool
    script_count: int
    script_chars: int
    complete: bool  # False when the scan stopped early because the page is long


def detect_challenge(status: int, headers: Mapping[str, str], html: str) -> str | None:
    """Return a short human reason if `html` is a bot challenge or interstitial, else None.

    `status` and `headers` are the response's; a 403, 429 or 503 makes a terse page more
    suspect. The reason reads after "the site answered with a(n) …" or stands alone.
    """
    lowered_headers = {name.lower(): value.lower() for name, value in headers.items()}
    if lowered_headers.get("cf-mitigated", "").strip() == "challenge":
        # Cloudflare sets this header only on challenge responses, whatever the body says.
        return CLOUDFLARE

    page = _scan(html)
    if not page.complete or page.text_chars > _LONG:
        return None

    blocking = status in _BLOCKING_STATUSES
    raw = html[:_MARKER_SCAN_CHARS].lower()
    # On a blocking status the site has already said "not for you"; a page up to _SHORT is then
    # an interstitial. A 200 answer has to be briefer before its wording is believed.
    terse = page.text_chars <= (_SHORT if blocking else _BRIEF)

    if page.text_chars <= _SHORT:
        vendor = _vendor_page(raw, page, lowered_headers, blocking)
        if vendor is not None:
            return vendor
        by_title = _title_reason(page.title)
        if by_title is not None:
            return by_title
        if _contains_any(raw, _CAPTCHA_WIDGETS) and (
            page.text_chars <= _BRIEF and (blocking or _captcha_wording(page.text))
        ):
            return CAPTCHA

    if terse:
        if _contains_any(page.text, _BROWSER_CHECK_PHRASES):
            return BROWSER_CHECK
        if _captcha_wording(page.text):
            return CAPTCHA
        if _contains_any(page.text, _ACCESS_DENIED_PHRASES):
            return ACCESS_DENIED
        if _ENABLE_JAVASCRIPT.search(page.text):
            return ENABLE_JAVASCRIPT

    if page.text_chars <= _EMPTY:
        # A blog's "enable JavaScript to see the comments" <noscript> only matters when there
        # is nothing else to read.
        if _ENABLE_JAVASCRIPT.search(page.noscript):
            return ENABLE_JAVASCRIPT
        if page.has_noscript or page.script_count >= 2 or page.script_chars >= 2000:
            return JAVASCRIPT_SHELL
    return None


def _vendor_page(raw: str, page: _Page, headers: Mapping[str, str], blocking: bool) -> str | None:
    """Pages whose markup names the bot-protection vendor that produced them."""
    if _contains_any(raw, _CLOUDFLARE_MARKERS) or _title_is(page.title, _CLOUDFLARE_TITLES):
        return CLOUDFLARE
    if _contains_any(raw, _DATADOME_MARKERS) or (blocking and "x-datadome" in headers):
        return DATADOME
    if _contains_any(raw, _PERIMETERX_MARKERS) or (
        blocking and _contains_any(raw, _PERIMETERX_SENSOR)
    ):
        return PERIMETERX
    if _IMPERVA_BLOCK in raw or (
        _IMPERVA_RESOURCE in raw and (blocking or page.text_chars <= _EMPTY)
    ):
        return IMPERVA
    if _contains_any(page.text, _AKAMAI_MARKERS) or (
        blocking and headers.get("server", "").startswith("akamaighost")
    ):
        return ACCESS_DENIED
    return None


def _title_reason(title: str) -> str | None:
    if not title:
        return None
    if "captcha" in title:
        return CAPTCHA
    if _title_is(title, _ACCESS_DENIED_TITLES):
        return ACCESS_DENIED
    if _title_is(title, _BROWSER_CHECK_TITLES):
        return BROWSER_CHECK
    return None


def _title_is(title: str, markers: tuple[str, ...]) -> bool:
    """True if the title is one of `markers`, possibly with a site name or ellipsis around it.

    "Access Denied | Example" and "Just a moment..." match; "Access denied: a history of
    gated communities" does not, because an interstitial's title says nothing more.
    """
    for marker in markers:
        if title == marker:
            return True
        if len(title) <= len(marker) + 40:
            if title.startswith(marker) and not title[len(marker)].isalnum():
                return True
            if title.endswith(marker) and not title[-len(marker) - 1].isalnum():
                return True
    return False


def _captcha_wording(text: str) -> bool:
    return _contains_any(text, _CAPTCHA_PHRASES) or (
        "captcha" in text and ("human" in text or "robot" in text or "verify" in text)
    )


def _contains_any(haystack: str, needles: tuple[str, ...]) -> bool:
    return any(needle in haystack for needle in needles)


def _scan(html: str) -> _Page:
    scanner = _Scanner()
    complete = True
    try:
        for start in range(0, len(html), _FEED_CHUNK):
            scanner.feed(html[start : start + _FEED_CHUNK])
            if scanner.text_chars > _LONG:
                # Long enough to be content; reading the rest of a 20 MB page would only cost.
                complete = False
                break
        else:
            scanner.close()
    except AssertionError:
        # html.parser still raises AssertionError on a few malformed declarations; what was
        # read up to there is as good a sample as any.
        pass
    return _Page(
        title=" ".join("".join(scanner.title_parts).split()).lower(),
        text=" ".join(" ".join(scanner.text_parts).split()).lower(),
        noscript=" ".join(" ".join(scanner.noscript_parts).split()).lower(),
        text_chars=scanner.text_chars,
        has_noscript=scanner.has_noscript,
        script_count=scanner.script_count,
        script_chars=scanner.script_chars,
        complete=complete,
    )


# Elements whose content a reader never sees as text.
_HIDDEN = frozenset({"script", "style", "template", "svg", "math", "iframe", "object"})
_DATA_SCRIPT_TYPES = frozenset({"application/ld+json", "application/json", "importmap"})


class _Scanner(HTMLParser):
    """Split a page into title, visible text, <noscript> text and script weight."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.title_parts: list[str] = []
        self.text_parts: list[str] = []
        self.noscript_parts: list[str] = []
        self.text_chars = 0
        self.has_noscript = False
        self.script_count = 0
        self.script_chars = 0
        self._hidden_depth = 0
        self._noscript_depth = 0
        self._in_title = False
        self._title_done = False
        self._in_code_script = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "script":
            script_type = (dict(attrs).get("type") or "").strip().lower()
            self._in_code_script = script_type not in _DATA_SCRIPT_TYPES
            if self._in_code_script:
                self.script_count += 1
        if tag in _HIDDEN:
            self._hidden_depth += 1
        elif tag == "noscript":
            self.has_noscript = True
            self._noscript_depth += 1
        elif tag == "title" and not self._title_done and not self._hidden_depth:
            self._in_title = True

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        # <script src=… /> and friends open nothing.
        if tag == "script":
            self.script_count += 1

    def handle_endtag(self, tag: str) -> None:
        if tag in _HIDDEN:
            self._hidden_depth = max(0, self._hidden_depth - 1)
            if tag == "script":
                self._in_code_script = False
        elif tag == "noscript":
            self._noscript_depth = max(0, self._noscript_depth - 1)
        elif tag == "title" and self._in_title:
            self._in_title = False
            self._title_done = True

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title_parts.append(data)
        elif self._hidden_depth:
            if self._in_code_script:
                self.script_chars += len(data)
        elif self._noscript_depth:
            self.noscript_parts.append(data)
        else:
            self.text_parts.append(data)
            self.text_chars += sum(1 for char in data if not char.isspace())
