"""HTTP servers on loopback for tests: a request handler served on a free port in a thread.

Every stand-in the tests talk HTTP to — fixture web sites, the scripted model, the Slack and
embeddings stand-ins — serves through `Loopback`, so each starts, counts the connections it
accepts and shuts down the same way:

    with Loopback(Handler) as site:
        fetch(site.url("/article"))
        assert len(site.connections) == 1
"""

from __future__ import annotations

import contextlib
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from socketserver import BaseRequestHandler
from types import TracebackType
from typing import Any, Protocol


class HandlerFactory(Protocol):
    """A request handler class, or anything that builds one the way socketserver does."""

    def __call__(self, request: Any, client_address: Any, server: Any) -> BaseRequestHandler: ...


class QuietHandler(BaseHTTPRequestHandler):
    """A request handler that keeps pytest's output clean and answers in one call."""

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        pass

    def send(
        self,
        status: int,
        body: bytes | str,
        content_type: str | None = "text/html; charset=utf-8",
        headers: dict[str, str] | None = None,
        length: bool = True,
    ) -> None:
        """Answer with `body`; `content_type` None sends no Content-Type, `length` False no
        Content-Length (an HTTP/1.0 body then runs until the connection closes)."""
        data = body.encode() if isinstance(body, str) else body
        self.send_response(status)
        if content_type is not None:
            self.send_header("Content-Type", content_type)
        if length:
            self.send_header("Content-Length", str(len(data)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        # A client under test may hang up first (a timeout, a size cut): that is its right.
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):
            self.wfile.write(data)


class ApiHandler(QuietHandler):
    """A handler for an API stand-in: HTTP/1.1 keep-alive, as the real services speak."""

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; without this, Nagle's algorithm and the
    # client's delayed ACK add ~40 ms to every reply, as no real server does.
    disable_nagle_algorithm = True


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a handler still sleeping must not hold up the test's teardown

    def __init__(self, host: str, handler: HandlerFactory) -> None:
        super().__init__((host, 0), handler)
        self.connections: list[str] = []
        self._lock = threading.Lock()

    def verify_request(self, request: Any, client_address: Any) -> bool:
        # Called once per accepted TCP connection: counts connections, not just requests.
        with self._lock:
            self.connections.append(f"{client_address[0]}:{client_address[1]}")
        return True


class Loopback:
    """`handler` served on `host` (127.0.0.1, or another loopback address) on a free port.

    The port is bound at construction, so a handler may be told it before `start()`; `tls`
    wraps the listening socket (the handshake then runs in accept)."""

    def __init__(
        self, handler: HandlerFactory, host: str = "127.0.0.1", tls: ssl.SSLContext | None = None
    ) -> None:
        self.httpd = _Server(host, handler)
        self.scheme = "http"
        if tls is not None:
            self.httpd.socket = tls.wrap_socket(self.httpd.socket, server_side=True)
            self.scheme = "https"
        # A short poll interval so stop() returns at once instead of after up to 0.5 s.
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def host(self) -> str:
        return str(self.httpd.server_address[0])

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    @property
    def connections(self) -> list[str]:
        """Every TCP connection accepted so far, as "address:port" of the client."""
        return self.httpd.connections

    def url(self, path: str = "") -> str:
        return f"{self.scheme}://{self.host}:{self.port}{path}"

    def start(self) -> Loopback:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():  # shutdown() would wait for ever on a loop never started
            self.httpd.shutdown()
            self._thread.join(5)
        self.httpd.server_close()

    def __enter__(self) -> Loopback:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
