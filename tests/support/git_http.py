"""git's smart HTTP protocol on loopback: `git http-backend` (the CGI program that GitHub-like
servers' front ends run) behind a request handler that asks for HTTP Basic authentication.

    handler = git_http_handler(repositories_folder, "tess", "t0ken")
    with Loopback(handler, tls=context) as site:
        ...  site.url("/origin.git")
"""

from __future__ import annotations

import base64
import subprocess
from pathlib import Path
from typing import Any

from tests.support.loopback import HandlerFactory, QuietHandler


def git_http_handler(root: Path, user: str, password: str) -> HandlerFactory:
    """A handler serving every repository under `root` to `user` with `password`."""
    expected = "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()

    class GitHttp(QuietHandler):
        def do_GET(self) -> None:
            self._backend()

        def do_POST(self) -> None:
            self._backend()

        def _backend(self) -> None:
            if self.headers.get("Authorization") != expected:
                self.send(401, b"", headers={"WWW-Authenticate": 'Basic realm="git"'})
                return
            path, _, query = self.path.partition("?")
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            env = {
                "GIT_PROJECT_ROOT": str(root),
                "GIT_HTTP_EXPORT_ALL": "1",
                "GIT_CONFIG_NOSYSTEM": "1",
                "HOME": str(root),
                "PATH_INFO": path,
                "QUERY_STRING": query,
                "REQUEST_METHOD": self.command,
                "CONTENT_TYPE": self.headers.get("Content-Type", ""),
                "CONTENT_LENGTH": str(len(body)),
                "REMOTE_USER": user,
                "REMOTE_ADDR": self.client_address[0],
                "GIT_PROTOCOL": self.headers.get("Git-Protocol", ""),
            }
            if self.headers.get("Content-Encoding") == "gzip":
                env["HTTP_CONTENT_ENCODING"] = "gzip"
            done = subprocess.run(
                ["git", "http-backend"], input=body, env=env, capture_output=True, timeout=60
            )
            head, _, payload = done.stdout.partition(b"\r\n\r\n")
            status, headers = 200, {}
            for line in head.decode("latin-1").split("\r\n"):
                name, _, value = line.partition(":")
                if name.lower() == "status":
                    status = int(value.split()[0])
                elif name:
                    headers[name] = value.strip()
            content_type = headers.pop("Content-Type", None)
            self.send(status, payload, content_type=content_type, headers=headers)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib's name
            pass

    return GitHttp
