"""Loci's one URL fetcher: every web page, PDF or feed Loci downloads comes through `fetch`.

A second brain fetches URLs that users, agents and imported documents hand it, so a URL is
untrusted input. The fetcher therefore:

- speaks http and https only;
- resolves the host once, refuses it if *any* address it resolves to is loopback, private,
  link-local, multicast, reserved or otherwise not public (unless the policy allows that network),
  and then connects to exactly the address it vetted. The check lives in the network backend, at
  connect time, so neither a DNS answer that changes between check and use (rebinding) nor a
  redirect can reach an address that was not checked. Host header and TLS SNI keep the hostname;
- follows redirects itself, one hop at a time, so each hop's scheme is checked too;
- caps the body (after decompression) and the total time, not only each socket operation.

`fetch_web_page` adds bot-challenge detection for HTML answers that claim success.
"""

from __future__ import annotations

import ipaddress
import math
import socket
import ssl
import time
import zlib
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import httpcore
import httpx

from loci import __version__
from loci.errors import BlockedAddress, ChallengePage, FetchError, UnsupportedSource
from loci.ingest.challenge import ENABLE_JAVASCRIPT, JAVASCRIPT_SHELL, detect_challenge

__all__ = [
    "DEFAULT_ACCEPT",
    "JAVASCRIPT_REASONS",
    "FetchPolicy",
    "FetchedPage",
    "blocked_reason",
    "check_url_address",
    "classify_address",
    "fetch",
    "fetch_web_page",
    "vetted_client",
]

MB = 1024 * 1024

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
# Statuses with which bot walls answer; their bodies are read to tell a challenge from a plain
# refusal. Only a bounded sample is read: a challenge page is small.
_CHALLENGE_STATUSES = frozenset({403, 429, 503})
_CHALLENGE_SAMPLE_BYTES = 512 * 1024
_CHALLENGE_TYPES = HTML_TYPES | {"", "text/plain"}
# Challenge reasons a browser can answer: the page only wants its scripts run. Bot walls proper
# (Cloudflare, CAPTCHAs, "access denied") are refused on both paths.
JAVASCRIPT_REASONS = frozenset({ENABLE_JAVASCRIPT, JAVASCRIPT_SHELL})


@dataclass(frozen=True)
class FetchPolicy:
    """Limits for one fetch. The defaults suit fetching public pages for a user.

    `allowed_networks` lists CIDRs reachable even though they are not public (an intranet wiki,
    a test server on 127.0.0.1). `allow_private` opens every non-public address instead
    (loopback, private, link-local, unique-local, …); multicast, broadcast and unspecified
    addresses stay closed either way unless listed, because nothing serves pages there.
    """

    allow_private: bool = False
    allowed_networks: tuple[str, ...] = ()
    max_bytes: int = 20 * MB
    connect_timeout: float = 10.0
    read_timeout: float = 15.0
    total_timeout: float = 20.0
    max_redirects: int = 5
    user_agent: str = f"Loci/{__version__} (+self-hosted second brain)"
    # A PEM bundle trusted in addition to the public CAs: an intranet's own certificate authority.
    ca_file: str | None = None

    def __post_init__(self) -> None:
        # Fail when the policy is built (at startup, from settings), not on the first fetch.
        _parse_networks(self.allowed_networks)
        if self.max_bytes <= 0 or self.max_redirects < 0:
            raise ValueError("max_bytes must be positive and max_redirects not negative")
        if min(self.connect_timeout, self.read_timeout, self.total_timeout) <= 0:
            raise ValueError("timeouts must be positive")


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


def fetch(
    url: str, policy: FetchPolicy, *, accept: Collection[str] = DEFAULT_ACCEPT
) -> FetchedPage:
    """GET `url` within `policy` and return the final page.

    `accept` lists the media types the caller can use ("type/*" allowed); anything else is
    refused with UnsupportedSource before its body is read. A 403/429/503 whose body is a bot
    challenge raises ChallengePage; any other status of 400 or more raises FetchError.
    """
    return _Fetch(policy, accept).run(url, detect_challenges=False)


def fetch_web_page(
    url: str,
    policy: FetchPolicy,
    *,
    accept: Collection[str] = DEFAULT_ACCEPT,
    javascript_ok: bool = False,
) -> FetchedPage:
    """Like `fetch`, but an HTML page that is a bot challenge raises ChallengePage even when
    the site answered 200 (JavaScript shells, CAPTCHA walls and some vendors do).

    With `javascript_ok`, a 2xx page that only asks for JavaScript (an app shell) is returned
    with `needs_javascript` set instead, for a caller that can render it in a browser.
    """
    return _Fetch(policy, accept).run(url, detect_challenges=True, javascript_ok=javascript_ok)


def check_url_address(url: str, policy: FetchPolicy) -> str:
    """Resolve `url`'s host and check every address against `policy` without connecting.

    Returns the addresses (comma-separated) it would connect to; raises UnsupportedSource for a
    URL that cannot be fetched and BlockedAddress for a forbidden host. What a dry run reports:
    the real fetch checks again at connect time, so a DNS answer that changes is still caught.
    """
    parsed = _checked_url(url)
    port = parsed.port or (443 if parsed.scheme == "https" else 80)
    return ", ".join(_vetted_addresses(parsed.host, port, policy))


# --- addresses -------------------------------------------------------------------------------

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

_THIS_NETWORK = ipaddress.IPv4Network("0.0.0.0/8")
_BROADCAST = ipaddress.IPv4Address("255.255.255.255")
# DNS64 answers with this prefix for IPv4-only sites: judge the IPv4 address inside it.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_GLOBAL_UNICAST_V6 = ipaddress.IPv6Network("2000::/3")

# The special-purpose ranges (IANA registries), spelled out here rather than taken from
# `ipaddress.is_private`, whose tables differ between Python releases. First match wins.
_V4_RANGES: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(cidr), reason)
    for cidr, reason in (
        ("0.0.0.0/8", "unspecified"),
        ("127.0.0.0/8", "loopback"),
        ("169.254.0.0/16", "link-local"),  # includes the cloud metadata service
        ("224.0.0.0/4", "multicast"),
        ("255.255.255.255/32", "broadcast"),
        ("240.0.0.0/4", "reserved"),
        ("100.64.0.0/10", "carrier-grade NAT"),
        ("10.0.0.0/8", "private"),
        ("172.16.0.0/12", "private"),
        ("192.168.0.0/16", "private"),
        ("192.0.0.0/24", "reserved"),
        ("192.88.99.0/24", "reserved"),  # retired 6to4 relay anycast
        ("192.0.2.0/24", "documentation"),
        ("198.51.100.0/24", "documentation"),
        ("203.0.113.0/24", "documentation"),
        ("198.18.0.0/15", "benchmarking"),
    )
)
_V6_RANGES: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(cidr), reason)
    for cidr, reason in (
        ("fe80::/10", "link-local"),
        ("fec0::/10", "site-local"),
        ("ff00::/8", "multicast"),
        ("fc00::/7", "unique local (private)"),
        ("64:ff9b:1::/48", "private"),  # local-use NAT64
        ("100::/64", "reserved"),  # discard-only
        # The client half of a Teredo address is obfuscated and the relay goes anywhere.
        ("2001::/32", "Teredo tunnel"),
        ("2001::/23", "reserved"),
        ("2001:db8::/32", "documentation"),
        ("3fff::/20", "documentation"),
        ("5f00::/16", "reserved"),  # SRv6 segment ids
    )
)


def classify_address(address: str) -> str | None:
    """Why `address` (an IP literal) is not a public unicast address, or None if it is.

    IPv6 forms that carry an IPv4 address (IPv4-mapped, NAT64, 6to4) are judged by the IPv4
    address inside, since that is where the packets end up.
    """
    return _classify(_parse_ip(address))


def _classify(ip: IPAddress) -> str | None:
    if isinstance(ip, ipaddress.IPv6Address):
        return _classify_v6(ip)
    return _classify_v4(ip)


def _classify_v4(ip: ipaddress.IPv4Address) -> str | None:
    for network, reason in _V4_RANGES:
        if ip in network:
            return reason
    # Whatever this Python's tables know beyond the list above.
    return None if ip.is_global else "non-public"


def _classify_v6(ip: ipaddress.IPv6Address) -> str | None:
    if ip.is_unspecified:
        return "unspecified"
    if ip.is_loopback:
        return "loopback"
    embedded = _embedded_v4(ip)
    if embedded is not None:
        inner = _classify_v4(embedded)
        return None if inner is None else f"{inner} (inside {_embedding_name(ip)})"
    for network, reason in _V6_RANGES:
        if ip in network:
            return reason
    if ip not in _GLOBAL_UNICAST_V6:
        # Outside 2000::/3 nothing is assigned for global unicast (IPv4-compatible ::a.b.c.d,
        # unallocated space).
        return "reserved"
    return None if ip.is_global else "non-public"


def _embedded_v4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip in _NAT64:
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return ip.sixtofour


def _embedding_name(ip: ipaddress.IPv6Address) -> str:
    if ip.ipv4_mapped is not None:
        return "IPv4-mapped IPv6"
    if ip in _NAT64:
        return "NAT64"
    return "6to4"


def _never_a_destination(ip: IPAddress) -> bool:
    """Addresses `allow_private` does not open: no web server answers there."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = _embedded_v4(ip)
        if embedded is None:
            return ip.is_unspecified or ip.is_multicast
        ip = embedded
    return ip in _THIS_NETWORK or ip.is_multicast or ip == _BROADCAST


def _parse_ip(address: str) -> IPAddress:
    # getaddrinfo reports scoped IPv6 addresses as "fe80::1%eth0"; the scope is not part of it.
    return ipaddress.ip_address(address.split("%", 1)[0])


@cache
def _parse_networks(cidrs: tuple[str, ...]) -> tuple[IPNetwork, ...]:
    return tuple(ipaddress.ip_network(cidr, strict=False) for cidr in cidrs)


def blocked_reason(address: str, policy: FetchPolicy) -> str | None:
    """Why `policy` forbids connecting to `address` (an IP literal), or None if it may."""
    return _refusal(_parse_ip(address), policy)


def _refusal(ip: IPAddress, policy: FetchPolicy) -> str | None:
    if any(ip in network for network in _parse_networks(policy.allowed_networks)):
        return None
    reason = _classify(ip)
    if reason is None:
        return None
    if policy.allow_private and not _never_a_destination(ip):
        return None
    return reason


def _vetted_addresses(host: str, port: int, policy: FetchPolicy) -> list[str]:
    """Resolve `host` once and return its addresses, all of which the policy allows."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    except (socket.gaierror, UnicodeError) as exc:
        raise FetchError(f"could not resolve {host}: {exc}") from exc
    addresses: list[str] = []
    for _family, _type, _proto, _name, sockaddr in infos:
        address = str(sockaddr[0])
        ip = _parse_ip(address)
        reason = _refusal(ip, policy)
        if reason is not None:
            # One bad answer condemns the host: otherwise a rebinding attacker only needs
            # to list a private address second.
            shown = host if host == address else f"{host} ({address})"
            raise BlockedAddress(f"refusing to fetch from {shown}: {reason} address")
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise FetchError(f"could not resolve {host}: no addresses")
    return addresses


# --- transport: connect only to vetted addresses, within the deadline ------------------------


def _remaining(deadline: float, timeout: float | None) -> float:
    left = deadline - time.monotonic()
    return left if timeout is None else min(timeout, left)


class _DeadlineStream(httpcore.NetworkStream):
    """A socket stream whose every operation also stops at the fetch's overall deadline, so a
    server dripping one byte per read timeout cannot hold a worker for ever."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        left = _remaining(self._deadline, timeout)
        if left <= 0:
            raise httpcore.ReadTimeout("deadline passed")
        return self._inner.read(max_bytes, left)

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        left = _remaining(self._deadline, timeout)
        if left <= 0:
            raise httpcore.WriteTimeout("deadline passed")
        self._inner.write(buffer, left)

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        left = _remaining(self._deadline, timeout)
        if left <= 0:
            raise httpcore.ConnectTimeout("deadline passed")
        # server_hostname is the URL's host (httpcore passes it), so SNI and certificate
        # checks are against the name even though the socket was opened to an IP.
        inner = self._inner.start_tls(ssl_context, server_hostname, left)
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class _VettedBackend(httpcore.NetworkBackend):
    """Opens TCP connections only to addresses the policy allows, resolved exactly once."""

    def __init__(self, policy: FetchPolicy, deadline: float) -> None:
        self._policy = policy
        self._deadline = deadline
        self._sockets = httpcore.SyncBackend()

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        addresses = _vetted_addresses(host, port, self._policy)
        failure: Exception | None = None
        for address in addresses:
            left = _remaining(self._deadline, timeout)
            if left <= 0:
                raise httpcore.ConnectTimeout("deadline passed")
            try:
                # An IP literal: the socket layer does no second lookup that could differ.
                stream = self._sockets.connect_tcp(
                    address, port, left, local_address, socket_options
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            return _DeadlineStream(stream, self._deadline)
        assert failure is not None  # _vetted_addresses never returns an empty list
        raise failure

    def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        raise BlockedAddress("refusing to connect to a Unix socket")

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _ResponseStream(httpx.SyncByteStream):
    def __init__(self, stream: Iterable[bytes]) -> None:
        self._stream = stream

    def __iter__(self) -> Iterator[bytes]:
        yield from self._stream

    def close(self) -> None:
        close = getattr(self._stream, "close", None)
        if close is not None:
            close()


class _VettedTransport(httpx.BaseTransport):
    """httpx's HTTPTransport takes no network backend, so this is its core over a pool that
    uses `_VettedBackend`. No proxy is ever used: a proxy would do the connecting unchecked."""

    def __init__(self, backend: _VettedBackend, ssl_context: ssl.SSLContext) -> None:
        self._pool = httpcore.ConnectionPool(
            ssl_context=ssl_context, network_backend=backend, retries=0
        )

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        assert isinstance(request.stream, httpx.SyncByteStream)
        core_request = httpcore.Request(
            method=request.method,
            url=httpcore.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        try:
            response = self._pool.handle_request(core_request)
        except httpcore.TimeoutException as error:  # as httpx's own transport maps them
            raise httpx.TimeoutException(str(error), request=request) from error
        except (httpcore.NetworkError, httpcore.ProtocolError) as error:
            raise httpx.TransportError(str(error)) from error
        assert isinstance(response.stream, Iterable)
        return httpx.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    def close(self) -> None:
        self._pool.close()


@cache
def _ssl_context(ca_file: str | None) -> ssl.SSLContext:
    # Built once per bundle: loading CA certificates costs more than a small fetch.
    context = httpx.create_ssl_context()
    if ca_file is not None:
        context.load_verify_locations(cafile=ca_file)
    return context


def vetted_client(
    policy: FetchPolicy, *, deadline: float = math.inf, **options: Any
) -> httpx.Client:
    """A long-lived client that connects only where `policy` allows, checked at connect time:
    for servers a user names (their own model endpoint) rather than pages to fetch once.
    `deadline` (a `time.monotonic()` value) bounds every socket operation it makes."""
    transport = _VettedTransport(_VettedBackend(policy, deadline), _ssl_context(policy.ca_file))
    return httpx.Client(transport=transport, **options)


# --- the fetch itself --------------------------------------------------------------------------

_TIMEOUTS = (httpx.TimeoutException, httpcore.TimeoutException)
_TRANSPORT_ERRORS = (
    httpx.TransportError,
    httpcore.NetworkError,
    httpcore.ProtocolError,
    httpcore.UnsupportedProtocol,
    ssl.SSLError,
)


class _Fetch:
    def __init__(self, policy: FetchPolicy, accept: Collection[str]) -> None:
        self._policy = policy
        self._accept = frozenset(kind.lower() for kind in accept)

    def run(self, url: str, *, detect_challenges: bool, javascript_ok: bool = False) -> FetchedPage:
        policy = self._policy
        started = time.monotonic()
        deadline = started + policy.total_timeout
        current = _checked_url(url)
        try:
            ssl_context = _ssl_context(policy.ca_file)
        except (OSError, ssl.SSLError) as exc:
            raise FetchError(f"could not load the CA file {policy.ca_file}: {exc}") from exc
        transport = _VettedTransport(_VettedBackend(policy, deadline), ssl_context)
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
        }
        # trust_env=False: no proxy from the environment, no credentials from ~/.netrc.
        with httpx.Client(
            transport=transport, timeout=timeout, headers=headers, trust_env=False
        ) as client:
            try:
                for _hop in range(policy.max_redirects + 1):
                    with client.stream("GET", current) as response:
                        if response.status_code in _REDIRECT_STATUSES:
                            current = _redirect_target(current, response)
                            continue
                        return self._page(current, response, detect_challenges, javascript_ok)
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


def _checked_url(url: str | httpx.URL) -> httpx.URL:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError, TypeError) as exc:
        raise UnsupportedSource(f"not a URL Loci can fetch: {url}") from exc
    if parsed.scheme not in ("http", "https"):
        shown = f"{parsed.scheme}:" if parsed.scheme else "a URL without a scheme"
        raise UnsupportedSource(f"only http and https URLs can be fetched, not {shown}")
    if not parsed.host:
        raise UnsupportedSource(f"URL without a host: {url}")
    return parsed


def _redirect_target(current: httpx.URL, response: httpx.Response) -> httpx.URL:
    location = response.headers.get("location")
    if not location:
        raise FetchError(f"{current} answered HTTP {response.status_code} without a Location")
    try:
        target = current.join(location)
    except (httpx.InvalidURL, ValueError) as exc:
        raise FetchError(f"{current} redirected to an invalid URL: {location}") from exc
    # The address of the next hop is checked when it is connected to; its scheme here.
    return _checked_url(target)


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
