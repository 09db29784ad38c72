"""Loci's one URL fetcher: every web page, PDF or feed Loci downloads comes through `fetch`.

A URL is untrusted input, so the fetcher:

- speaks http and https only, and connects only to addresses the policy allows, checked at
  connect time (`addresses`, `vetted_transport`);
- follows redirects itself, one hop at a time, so each hop's scheme is checked too;
- caps the body (after decompression) and the total time, not only each socket operation
  (`fetch_policy`).

`fetch_web_page` adds bot-challenge detection for HTML answers that claim success.
"""

from __future__ import annotations

import ssl
import time
import zlib
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import httpcore
import httpx

from loci.errors import ChallengePage, FetchError, UnsupportedSource
from loci.ingest.addresses import checked_url
from loci.ingest.challenge import ENABLE_JAVASCRIPT, JAVASCRIPT_SHELL, detect_challenge
from loci.ingest.fetch_policy import MB, FetchPolicy
from loci.ingest.vetted_transport import vetted_transport

__all__ = [
    "DEFAULT_ACCEPT",
    "JAVASCRIPT_REASONS",
    "FetchedPage",
    "fetch",
    "fetch_web_page",
]

DEFAULT_ACCEPT: frozenset[str] = frozenset(
    {"text/html", "application/xhtml+xml", "text/plain", "text/markdown", "application/pdf"}
)
HTML_TYPES = frozenset({"text/html", "application/xhtml+xml"})

# Headers worth keeping with a fetched page: what it is, what it is called, when it changed.
KEPT_HEADERS = (
    "content-type",
    "content-language",
    "content-disposition",
    "last-modified",
    "etag",
)

_REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})
_PERMANENT_REDIRECTS = frozenset({301, 308})
# Statuses with which bot walls answer; their bodies are read to tell a challenge from a plain
# refusal. Only a bounded sample is read: a challenge page is small.
_CHALLENGE_STATUSES = frozenset({403, 429, 503})
_CHALLENGE_SAMPLE_BYTES = 512 * 1024
_CHALLENGE_TYPES = HTML_TYPES | {"", "text/plain"}
# Challenge reasons a browser can answer: the page only wants its scripts run. Bot walls proper
# (Cloudflare, CAPTCHAs, "access denied") are refused on both paths.
JAVASCRIPT_REASONS = frozenset({ENABLE_JAVASCRIPT, JAVASCRIPT_SHELL})


@dataclass(frozen=True)
class FetchedPage:
    url: str  # after redirects
    status: int
    content_type: str  # media type only, lower-case: "text/html"
    charset: str | None  # as declared in Content-Type, if it was
    body: bytes  # decoded from gzip/deflate; at most policy.max_bytes
    headers: Mapping[str, str] = field(default_factory=dict)  # KEPT_HEADERS that were present
    # Set only by `fetch_web_page(..., javascript_ok=True)`: why this page needs its scripts run
    # (one of JAVASCRIPT_REASONS) before it has anything to read.
    needs_javascript: str | None = None
    # Where permanent redirects (301, 308) from the start led, when they did: the address a
    # follower should use from now on. None if the first hop was not moved for good.
    moved_to: str | None = None


def fetch(
    url: str,
    policy: FetchPolicy,
    *,
    accept: Collection[str] = DEFAULT_ACCEPT,
    conditional: Mapping[str, str] | None = None,
) -> FetchedPage:
    """GET `url` within `policy` and return the final page.

    `accept` lists the media types the caller can use ("type/*" allowed); anything else is
    refused with UnsupportedSource before its body is read. A 403/429/503 whose body is a bot
    challenge raises ChallengePage; any other status of 400 or more raises FetchError.

    `conditional`: the validators of the copy the caller has (`etag`, `last-modified`, as
    `FetchedPage.headers` kept them), sent as If-None-Match / If-Modified-Since; a page that
    has not changed since is then returned with status 304 and no body.
    """
    return _Fetch(policy, accept, conditional).run(url, detect_challenges=False)


def fetch_web_page(
    url: str,
    policy: FetchPolicy,
    *,
    accept: Collection[str] = DEFAULT_ACCEPT,
    javascript_ok: bool = False,
    conditional: Mapping[str, str] | None = None,
) -> FetchedPage:
    """Like `fetch`, but an HTML page that is a bot challenge raises ChallengePage even when
    the site answered 200 (JavaScript shells, CAPTCHA walls and some vendors do).

    With `javascript_ok`, a 2xx page that only asks for JavaScript (an app shell) is returned
    with `needs_javascript` set instead, for a caller that can render it in a browser.
    `conditional` as for `fetch`.
    """
    fetcher = _Fetch(policy, accept, conditional)
    return fetcher.run(url, detect_challenges=True, javascript_ok=javascript_ok)


_TIMEOUTS = (httpx.TimeoutException, httpcore.TimeoutException)
_TRANSPORT_ERRORS = (
    httpx.TransportError,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    ssl.SSLError,
)


class _Fetch:
    def __init__(
        self,
        policy: FetchPolicy,
        accept: Collection[str],
        conditional: Mapping[str, str] | None = None,
    ) -> None:
        self._policy = policy
        self._accept = frozenset(kind.lower() for kind in accept)
        self._conditional: dict[str, str] = {}
        for name, header in (("etag", "If-None-Match"), ("last-modified", "If-Modified-Since")):
            value = (conditional or {}).get(name)
            if value:
                self._conditional[header] = value

    def run(self, url: str, *, detect_challenges: bool, javascript_ok: bool = False) -> FetchedPage:
        policy = self._policy
        started = time.monotonic()
        deadline = started + policy.total_timeout
        current = checked_url(url)
        try:
            transport = vetted_transport(policy, deadline=deadline)
        except (OSError, ssl.SSLError) as exc:
            raise FetchError(f"could not load the CA file {policy.ca_file}: {exc}") from exc
        timeout = httpx.Timeout(
            connect=policy.connect_timeout,
            read=policy.read_timeout,
            write=policy.read_timeout,
            pool=policy.connect_timeout,
        )
        headers = {
            "User-Agent": policy.user_agent,
            "Accept": _accept_header(self._accept),
            # Only encodings this module decodes itself under the size cap.
            "Accept-Encoding": "gzip, deflate",
            **self._conditional,
        }
        # trust_env=False: no proxy from the environment, no credentials from ~/.netrc.
        with httpx.Client(
            transport=transport, timeout=timeout, headers=headers, trust_env=False
        ) as client:
            try:
                moved_to: str | None = None
                permanent = True  # every hop so far was a permanent move
                for _hop in range(policy.max_redirects + 1):
                    with client.stream("GET", current) as response:
                        status = response.status_code
                        if status in _REDIRECT_STATUSES:
                            current = _redirect_target(current, response)
                            permanent = permanent and status in _PERMANENT_REDIRECTS
                            if permanent:
                                moved_to = str(current)
                            continue
                        if status == 304 and self._conditional:
                            return FetchedPage(str(current), 304, "", None, b"", moved_to=moved_to)
                        page = self._page(current, response, detect_challenges, javascript_ok)
                        return replace(page, moved_to=moved_to)
            except _TIMEOUTS as exc:
                elapsed = time.monotonic() - started
                raise FetchError(f"timed out after {elapsed:.1f} s fetching {current}") from exc
            except _TRANSPORT_ERRORS as exc:
                raise FetchError(f"could not fetch {current}: {exc or type(exc).__name__}") from exc
        raise FetchError(f"too many redirects (more than {policy.max_redirects}) from {url}")

    def _page(
        self, url: httpx.URL, response: httpx.Response, detect: bool, javascript_ok: bool
    ) -> FetchedPage:
        status = response.status_code
        media_type = _media_type(response.headers.get("content-type", ""))
        if status >= 300:
            if status in _CHALLENGE_STATUSES and media_type in _CHALLENGE_TYPES:
                sample = _read_body(response, _CHALLENGE_SAMPLE_BYTES, truncate=True)
                text = _decode(sample, response.charset_encoding)
                reason = detect_challenge(status, response.headers, text)
                if reason is not None:
                    raise ChallengePage(_challenge_message(url, reason))
            phrase = response.reason_phrase or "error"
            raise FetchError(f"{url} answered HTTP {status} {phrase}")
        if not media_type:
            raise UnsupportedSource(f"{url} did not say what it is (no Content-Type)")
        if not _accepted(media_type, self._accept):
            raise UnsupportedSource(f"{url} is {media_type}, which Loci does not read here")
        declared = response.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > self._policy.max_bytes:
            raise FetchError(_too_large(self._policy.max_bytes))
        body = _read_body(response, self._policy.max_bytes, truncate=False)
        charset = response.charset_encoding
        needs_javascript = None
        if detect and media_type in HTML_TYPES:
            text = _decode(body[:_CHALLENGE_SAMPLE_BYTES], charset)
            reason = detect_challenge(status, response.headers, text)
            if reason in JAVASCRIPT_REASONS and javascript_ok:
                needs_javascript = reason
            elif reason is not None:
                raise ChallengePage(_challenge_message(url, reason))
        kept = {name: response.headers[name] for name in KEPT_HEADERS if name in response.headers}
        return FetchedPage(
            url=str(url),
            status=status,
            content_type=media_type,
            charset=charset,
            body=body,
            headers=kept,
            needs_javascript=needs_javascript,
        )


def _redirect_target(current: httpx.URL, response: httpx.Response) -> httpx.URL:
    location = response.headers.get("location")
    if not location:
        raise FetchError(f"{current} answered HTTP {response.status_code} without a Location")
    try:
        target = current.join(location)
    except (httpx.InvalidURL, ValueError) as exc:
        raise FetchError(f"{current} redirected to an invalid URL: {location}") from exc
    # The address of the next hop is checked when it is connected to; its scheme here.
    return checked_url(target)


def _media_type(content_type: str) -> str:
    return content_type.split(";", 1)[0].strip().lower()


def _accepted(media_type: str, accept: frozenset[str]) -> bool:
    major = media_type.split("/", 1)[0]
    return media_type in accept or f"{major}/*" in accept or "*/*" in accept


def _accept_header(accept: frozenset[str]) -> str:
    preferred = sorted(accept & HTML_TYPES) + sorted(accept - HTML_TYPES)
    return ", ".join([*preferred, "*/*;q=0.1"])


def _too_large(limit: int) -> str:
    return f"page larger than {_describe_size(limit)}"


def _describe_size(size: int) -> str:
    if size >= MB:
        return f"{size / MB:g} MB"
    if size >= 1024:
        return f"{size / 1024:g} KB"
    return f"{size} bytes"


def _decode(sample: bytes, charset: str | None) -> str:
    """Text good enough for challenge detection; the real decoding is the parser's job."""
    try:
        return sample.decode(charset or "utf-8", errors="replace")
    except LookupError:  # a charset Python does not know
        return sample.decode("utf-8", errors="replace")


def _challenge_message(url: httpx.URL, reason: str) -> str:
    return f"{url} returned a bot check or interstitial instead of the page ({reason})"


def _read_body(response: httpx.Response, limit: int, *, truncate: bool) -> bytes:
    """Read and decode the body, stopping at `limit` decoded bytes.

    httpx's own decoders would inflate a whole network chunk at once (a 64 KB gzip chunk can
    hold 64 MB of zeros), so the raw bytes are read and inflated here with a bounded output.
    With `truncate`, return what fits; otherwise exceeding the limit is an error.
    """
    decoder = _Decoder(response.headers.get("content-encoding", ""))
    parts: list[bytes] = []
    size = 0
    raw_size = 0
    for chunk in response.iter_raw():
        raw_size += len(chunk)
        piece = decoder.decode(chunk, limit - size + 1)
        parts.append(piece)
        size += len(piece)
        if size > limit or raw_size > limit:
            if truncate:
                break
            raise FetchError(_too_large(limit))
    else:
        tail = decoder.flush()
        parts.append(tail)
        size += len(tail)
        if size > limit and not truncate:
            raise FetchError(_too_large(limit))
    return b"".join(parts)[:limit]


class _Decoder:
    """Content-Encoding decoding with a cap on output per call."""

    def __init__(self, content_encoding: str) -> None:
        encoding = content_encoding.strip().lower()
        self._inflater: Any = None
        if encoding in ("gzip", "x-gzip", "deflate"):
            # 32 + MAX_WBITS accepts both gzip and zlib framing; servers mix them up.
            self._inflater = zlib.decompressobj(32 + zlib.MAX_WBITS)
            self._raw_deflate_fallback = encoding == "deflate"
            self._started = False
        elif encoding not in ("", "identity"):
            raise FetchError(f"unsupported content encoding: {content_encoding}")

    def decode(self, data: bytes, max_length: int) -> bytes:
        if self._inflater is None:
            return data
        try:
            out: bytes = self._inflater.decompress(data, max_length)
        except zlib.error as exc:
            if self._raw_deflate_fallback and not self._started:
                # Some servers send "deflate" without the zlib header, as RFC 1951 data.
                self._inflater = zlib.decompressobj(-zlib.MAX_WBITS)
                self._raw_deflate_fallback = False
                return self.decode(data, max_length)
            raise FetchError(f"could not decode the compressed body: {exc}") from exc
        self._started = True
        return out

    def flush(self) -> bytes:
        if self._inflater is None:
            return b""
        # decode() returns early only when the cap is hit, and then the caller stops; so all
        # input has been consumed here and flush() yields at most a last partial block.
        out: bytes = self._inflater.flush()
        return out
