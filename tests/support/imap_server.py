"""A real IMAP server on loopback for tests: pymap's in-memory backend, run as its own process,
with one user. Tests change the mailbox the way another mail client would, over IMAP
(`ImapServer.mailbox()`): append, move, delete and expunge, drop and recreate a folder.

    with ImapServer("alice", "s3cret") as server:
        with server.mailbox() as box:
            box.append("INBOX", None, None, message(...))
"""

from __future__ import annotations

import contextlib
import hashlib
import imaplib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from email.message import EmailMessage
from pathlib import Path
from types import TracebackType

# pymap checks passwords with 500,000 rounds of PBKDF2, a second of CPU per login here; the
# check is the same with fewer rounds, and the tests log in some thirty times.
_LAUNCH = (
    "import pysasl.hashing as h; h.BuiltinHash.__init__.__kwdefaults__['rounds'] = 1000;"
    " from pymap.main import main; main()"
)


def message(subject: str, body: str, *, attachment: tuple[str, bytes] | None = None) -> bytes:
    """An RFC 822 message as a mail client would send it, with an attachment if given."""
    mail = EmailMessage()
    mail["From"] = "Bob <bob@example.org>"
    mail["To"] = "Alice <alice@example.org>"
    mail["Subject"] = subject
    mail["Date"] = "Tue, 01 Dec 2026 10:00:00 +0000"
    mail["Message-ID"] = f"<{hashlib.sha256(subject.encode()).hexdigest()[:16]}@example.org>"
    mail.set_content(body)
    if attachment is not None:
        name, data = attachment
        mail.add_attachment(data, maintype="application", subtype="octet-stream", filename=name)
    return mail.as_bytes().replace(b"\n", b"\r\n")


class ImapServer:
    """pymap serving `user`/`password` on 127.0.0.1 (STARTTLS offered with `cert`/`key`), on
    a free port or on `port` (a server restarted where its clients knew it)."""

    def __init__(
        self,
        user: str,
        password: str,
        *,
        cert: Path | None = None,
        key: Path | None = None,
        port: int | None = None,
    ) -> None:
        self.user = user
        self.password = password
        self.host = "127.0.0.1"
        self.port = port or _free_port()
        command = [
            sys.executable,
            "-c",
            _LAUNCH,
            "--no-service",
            "admin",
            "--host",
            self.host,
            "--port",
            str(self.port),
        ]
        if cert is not None and key is not None:
            command += ["--cert", str(cert), "--key", str(key)]
        command += ["dict", "--demo-user", user, "--demo-password", password]
        self._command = command
        self._process: subprocess.Popen[bytes] | None = None

    def url(self, folder: str = "INBOX", scheme: str = "imap") -> str:
        return f"{scheme}://{self.user}@{self.host}:{self.port}/{folder}"

    def start(self) -> ImapServer:
        self._process = subprocess.Popen(
            self._command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        deadline = time.monotonic() + 30
        while True:
            # Up once it greets: a state, checked until it holds (or the process died).
            if self._process.poll() is not None:
                error = self._process.stderr.read() if self._process.stderr else b""
                raise AssertionError(f"pymap exited: {error.decode(errors='replace')}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection((self.host, self.port), timeout=1) as sock,
            ):
                if sock.recv(64).startswith(b"* OK"):
                    return self
            if time.monotonic() > deadline:
                raise AssertionError("pymap did not come up within 30 s")
            time.sleep(0.05)

    def stop(self) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(10)
        if self._process is not None and self._process.stderr is not None:
            self._process.stderr.close()

    @contextlib.contextmanager
    def mailbox(self) -> Iterator[imaplib.IMAP4]:
        """Another mail client of the same user, logged in."""
        client = imaplib.IMAP4(self.host, self.port, timeout=10)
        try:
            client.login(self.user, self.password)
            yield client
        finally:
            with contextlib.suppress(imaplib.IMAP4.error, OSError):
                client.logout()

    def __enter__(self) -> ImapServer:
        return self.start()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def append(client: imaplib.IMAP4, folder: str, data: bytes) -> int:
    """Put `data` into `folder`; the UID the server gave it."""
    typ, response = client.append(folder, None, None, data)
    assert typ == "OK", response
    said = response[0].decode() if isinstance(response[0], bytes) else ""
    # RFC 4315's [APPENDUID uidvalidity uid]
    return int(said.split("APPENDUID", 1)[1].split("]", 1)[0].split()[1])


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])
