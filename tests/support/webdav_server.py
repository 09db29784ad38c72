"""A real WebDAV server on loopback for tests: WsgiDAV sharing a folder of the test at the path
Nextcloud gives a user's files (/remote.php/dav/files/<user>/), behind HTTP Basic
authentication as Nextcloud and ownCloud ask for it. The test changes the shared folder on disk
and the server answers from it as it is.

    with WebDavServer(tmp_path / "share", "alice", "s3cret") as dav:
        dav.url("Notes/")
"""

from __future__ import annotations

import logging
import threading
from pathlib import Path
from socketserver import ThreadingMixIn
from types import TracebackType
from typing import Any
from urllib.parse import quote
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer, make_server

from wsgidav.wsgidav_app import WsgiDAVApp


class _Server(ThreadingMixIn, WSGIServer):
    daemon_threads = True
    block_on_close = False


class _QuietHandler(WSGIRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
        pass


class WebDavServer:
    """`root` shared over WebDAV to `user` with `password` on 127.0.0.1, on a free port."""

    def __init__(self, root: Path, user: str, password: str) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.root = root
        self.user = user
        self.mount = f"/remote.php/dav/files/{user}"
        config = {
            "provider_mapping": {self.mount: str(root)},
            "simple_dc": {"user_mapping": {"*": {user: {"password": password}}}},
            "http_authenticator": {
                "accept_basic": True,
                "accept_digest": False,
                "default_to_digest": False,
            },
            "dir_browser": {"enable": False},
            "verbose": 0,
            "logging": {"enable": False},
        }
        logging.getLogger("wsgidav").setLevel(logging.ERROR)
        self.httpd = make_server(
            "127.0.0.1", 0, WsgiDAVApp(config), server_class=_Server, handler_class=_QuietHandler
        )
        self._thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def port(self) -> int:
        return int(self.httpd.server_address[1])

    def url(self, path: str = "") -> str:
        """The URL of `path` (relative to the shared folder) as a person copies it."""
        return f"http://127.0.0.1:{self.port}{self.mount}/{quote(path)}"

    def start(self) -> WebDavServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread.is_alive():
            self.httpd.shutdown()
            self._thread.join(5)
        self.httpd.server_close()

    def __enter__(self) -> WebDavServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
