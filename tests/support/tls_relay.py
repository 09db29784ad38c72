"""TLS in front of a plain TCP server on loopback, as stunnel or a load balancer puts it in front
of a mail server: for a server that speaks TLS only after STARTTLS (pymap) to be reached the
way imaps:// clients reach a server, TLS from the first byte.

    with TlsRelay(plain_port, cert, key) as relay:
        ... connect to relay.port with TLS ...
"""

from __future__ import annotations

import contextlib
import socket
import ssl
import threading
from pathlib import Path
from types import TracebackType


class TlsRelay:
    """Accepts TLS on 127.0.0.1 (a free port) and relays each connection to `target_port`."""

    def __init__(self, target_port: int, cert: Path, key: Path) -> None:
        self._target = ("127.0.0.1", target_port)
        self._context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self._context.load_cert_chain(cert, key)
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._stopping = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def _accept(self) -> None:
        while not self._stopping.is_set():
            try:
                client, _address = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=self._serve, args=(client,), daemon=True).start()

    def _serve(self, client: socket.socket) -> None:
        client.settimeout(None)
        try:
            secured = self._context.wrap_socket(client, server_side=True)
        except (ssl.SSLError, OSError):
            client.close()  # a client that refused our certificate: its right
            return
        upstream = socket.create_connection(self._target)
        threading.Thread(target=_pump, args=(upstream, secured), daemon=True).start()
        _pump(secured, upstream)

    def __enter__(self) -> TlsRelay:
        self._thread.start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self._stopping.set()
        self._thread.join(5)
        self._listener.close()


def _pump(source: socket.socket, sink: socket.socket) -> None:
    """Copy `source` to `sink` until either side closes, then close both."""
    with contextlib.suppress(OSError):
        while data := source.recv(65536):
            sink.sendall(data)
    for end in (source, sink):
        with contextlib.suppress(OSError):
            end.close()
