"""The connection layer that enforces the fetch policy where it cannot be bypassed.

The address check lives in the network backend, at connect time: the host is resolved once, every
address is vetted (`addresses`), and the socket is opened to exactly the vetted address. So neither
a DNS answer that changes between check and use (rebinding) nor a redirect can reach an address
that was not checked. Host header and TLS SNI keep the hostname. Every socket operation also stops
at the fetch's overall deadline, not only at its own timeout.
"""

from __future__ import annotations

import math
import ssl
import time
from collections.abc import Iterable, Iterator
from functools import cache
from typing import Any

import httpcore
import httpx

from loci.errors import BlockedAddress
from loci.ingest.addresses import vetted_addresses
from loci.ingest.fetch_policy import FetchPolicy

__all__ = ["vetted_client", "vetted_transport"]


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
        addresses = vetted_addresses(host, port, self._policy)
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
        assert failure is not None  # vetted_addresses never returns an empty list
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
    return httpx.Client(transport=vetted_transport(policy, deadline=deadline), **options)


def vetted_transport(policy: FetchPolicy, *, deadline: float) -> httpx.BaseTransport:
    """An httpx transport that connects only where `policy` allows, each socket operation
    bounded by `deadline`. Raises OSError or ssl.SSLError if `policy.ca_file` cannot be loaded."""
    return _VettedTransport(_VettedBackend(policy, deadline), _ssl_context(policy.ca_file))
