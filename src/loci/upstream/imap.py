"""An IMAP folder followed on a schedule (`imaps://user@host/Folder`, `imap://…`): each message
in it is an entry, fetched as its RFC 822 bytes, an `.eml` that Loci reads with its attachments.

Keys: a message keeps its UID for as long as the folder keeps its UIDVALIDITY (RFC 3501
2.3.1.1), so the key is "UIDVALIDITY:UID"; a server that renumbers a folder changes UIDVALIDITY
and every message then reads as replaced. A message's content never changes under its UID, so
the version is constant: flags are not content, and a message read on a phone is not fetched
again. A message moved away or expunged is no longer listed, and neither is one flagged
\\Deleted and waiting for an expunge, which mail clients already hide.

Following a folder changes nothing in it: the folder is opened read-only (EXAMINE) and messages
are read with BODY.PEEK, so none is marked read. One connection serves a run (a listing and its
fetches); `close()` logs out.

Transport: `imaps://` speaks TLS from the first byte, `imap://` upgrades with STARTTLS; plain
text is used only to a loopback host (a local bridge) or when the options say `"tls": "none"`.
Certificates are checked against the host's name (the policy's `ca_file` is trusted too). As
for web fetches, the host's addresses are vetted by the fetch policy and the socket goes to
exactly a vetted address.
"""

from __future__ import annotations

import base64
import contextlib
import email.parser
import email.policy
import imaplib
import re
import socket
import ssl
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from email.message import Message
from typing import Any, Literal, TypeVar
from urllib.parse import unquote, urlsplit

from loci.errors import FetchError, FileTooLarge, InvalidInput
from loci.imports.markdown import file_name
from loci.ingest.addresses import vetted_addresses
from loci.ingest.fetch_policy import MB, FetchPolicy
from loci.ingest.host_literals import is_loopback_host
from loci.upstream.base import Entry, Fetched, Listing

__all__ = ["ImapFolder", "open"]

Tls = Literal["implicit", "starttls", "none"]
T = TypeVar("T")

_PORTS = {"imap": 143, "imaps": 993}
_TLS_MODES: tuple[Tls, ...] = ("implicit", "starttls", "none")
# Content never changes under a UID (see the module's docstring).
_VERSION = "1"
_KEY = re.compile(r"(\d+):(\d+)")
_SIZE = re.compile(rb"RFC822\.SIZE (\d+)")
_SERVER_WORDS = re.compile(r"\[b?['\"](.*)['\"]\]$")


@dataclass(frozen=True)
class _Place:
    host: str
    port: int
    user: str
    folder: str
    tls: Tls

    @property
    def shown(self) -> str:
        return f"{self.folder} of {self.user} on {self.host}"


def open(  # noqa: A001 - the name every upstream module exposes
    location: str, options: Mapping[str, Any], secret: str | None, fetch: FetchPolicy
) -> ImapFolder:
    """The folder `location` names, to be read as its user with the password `secret`.

    Options: "user" (when the URL has none), "tls" ("implicit", "starttls" or "none"),
    "max_message_bytes" (default: the policy's `max_bytes`). Raises InvalidInput for a
    location or options that cannot work; nothing is contacted until `list`."""
    place = _place(location, options)
    if not secret:
        raise InvalidInput(f"reading IMAP as {place.user} needs their password")
    limit = options.get("max_message_bytes", fetch.max_bytes)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InvalidInput(f"max_message_bytes must be a positive number, not {limit!r}")
    return ImapFolder(place, secret, fetch, limit)


def _place(location: str, options: Mapping[str, Any]) -> _Place:
    parts = urlsplit(location.strip())
    scheme = parts.scheme.lower()
    if scheme not in _PORTS:
        raise InvalidInput(f"an IMAP folder is named imaps://user@host/Folder, not {location}")
    if parts.query or parts.fragment:
        raise InvalidInput(f"an IMAP folder's URL has no ?query or #fragment: {location}")
    host = parts.hostname
    if not host:
        raise InvalidInput(f"no host in {location}")
    try:
        port = parts.port or _PORTS[scheme]
    except ValueError as exc:
        raise InvalidInput(f"not a port in {location}") from exc
    user = options.get("user") or unquote(parts.username or "")
    if not isinstance(user, str) or not user:
        raise InvalidInput(f"no user in {location} (imaps://user@host/Folder) nor in options")
    folder = unquote(parts.path.lstrip("/")) or "INBOX"
    if any(c in folder for c in "\r\n\0") or any(c in user for c in "\r\n\0"):
        raise InvalidInput(f"a line break or NUL in the folder or user of {location}")
    return _Place(host, port, user, folder, _tls(scheme, host, options.get("tls")))


def _tls(scheme: str, host: str, asked: Any) -> Tls:
    if asked is None:
        if scheme == "imaps":
            return "implicit"
        return "none" if is_loopback_host(host) else "starttls"
    if asked not in _TLS_MODES:
        raise InvalidInput(f"tls must be one of {', '.join(_TLS_MODES)}, not {asked!r}")
    if scheme == "imaps" and asked != "implicit":
        raise InvalidInput("imaps:// speaks TLS from the start; use imap:// for STARTTLS or none")
    if scheme == "imap" and asked == "implicit":
        raise InvalidInput("TLS from the start is imaps://, not imap://")
    return asked  # type: ignore[no-any-return]  # checked against _TLS_MODES


class _Client(imaplib.IMAP4):
    """imaplib's client connecting to a vetted address (TLS first when `context` is given),
    while the server's name is kept for SNI and the certificate check."""

    # imaplib refuses lines over 1 MB, and the UIDs of a folder of 150,000 messages come in
    # one such line; this allows some two million, still bounded.
    max_line = 16 * MB

    def __init__(
        self,
        place: _Place,
        addresses: list[str],
        context: ssl.SSLContext | None,
        policy: FetchPolicy,
    ) -> None:
        self._addresses = addresses
        self._context = context
        self._policy = policy
        super().__init__(place.host, place.port, timeout=policy.connect_timeout)

    def readline(self) -> bytes:
        line = self.file.readline(self.max_line + 1)
        if len(line) > self.max_line:
            # The rest of the response is still on the wire: the connection is done for.
            raise self.abort(f"the server sent a line over {self.max_line:,} bytes")
        return line if isinstance(line, bytes) else line.encode()

    def _create_socket(self, timeout: float | None) -> socket.socket:
        failure: OSError | None = None
        for address in self._addresses:
            try:
                sock = socket.create_connection((address, self.port), timeout)
            except OSError as exc:
                failure = exc
                continue
            sock.settimeout(self._policy.read_timeout)
            if self._context is None:
                return sock
            return self._context.wrap_socket(sock, server_hostname=self.host)
        assert failure is not None  # vetted_addresses never returns an empty list
        raise failure


class ImapFolder:
    """One followed IMAP folder (see the module's docstring)."""

    def __init__(self, place: _Place, password: str, policy: FetchPolicy, limit: int) -> None:
        self._place = place
        self._password = password
        self._policy = policy
        self._limit = limit
        self._client: _Client | None = None
        self._uidvalidity: str | None = None

    def list(self, state: Mapping[str, Any]) -> Listing:
        def listing(client: _Client) -> tuple[str, list[bytes]]:
            uidvalidity = self._select(client)
            typ, data = client.uid("SEARCH", "UNDELETED")
            if typ != "OK":
                raise FetchError(f"the IMAP server would not list {self._place.shown}")
            return uidvalidity, b" ".join(d for d in data if d).split()

        uidvalidity, uids = self._run(listing)
        entries = tuple(Entry(f"{uidvalidity}:{int(uid)}", _VERSION) for uid in uids)
        return Listing(entries=entries, state={"uidvalidity": int(uidvalidity)})

    def fetch(self, entry: Entry) -> Fetched:
        match = _KEY.fullmatch(entry.key)
        if match is None:
            raise InvalidInput(f"not a message of an IMAP folder: {entry.key}")
        uidvalidity, uid = match.groups()
        data = self._run(lambda client: self._message(client, uidvalidity, uid))
        headers = email.parser.BytesHeaderParser(policy=email.policy.default).parsebytes(data)
        subject = _header(headers, "subject")
        metadata = {
            "folder": self._place.folder,
            "uid": int(uid),
            "uidvalidity": int(uidvalidity),
            "message_id": _header(headers, "message-id"),
            "date": _header(headers, "date"),
        }
        return Fetched(
            name=file_name(subject or "", f"message {uid}", ".eml"),
            data=data,
            mime_type="message/rfc822",
            title=subject,
            metadata={k: v for k, v in metadata.items() if v is not None},
        )

    def close(self) -> None:
        """Log out; the next `list` or `fetch` connects again."""
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(imaplib.IMAP4.error, OSError):
                client.logout()

    def __enter__(self) -> ImapFolder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _message(self, client: _Client, uidvalidity: str, uid: str) -> bytes:
        if self._uidvalidity is None:
            self._select(client)
        if self._uidvalidity != uidvalidity:
            raise FetchError(
                f"{self._place.folder} on {self._place.host} was renumbered (its UIDVALIDITY"
                " changed); the next run lists its messages again"
            )
        typ, data = client.uid("FETCH", uid, "(RFC822.SIZE)")
        sizes = [_SIZE.search(d) for d in data if isinstance(d, bytes)]
        size = next((int(m.group(1)) for m in sizes if m), None)
        if typ != "OK" or size is None:
            raise FetchError(f"message {uid} is no longer in {self._place.shown}")
        if size > self._limit:
            raise FileTooLarge(
                f"message {uid} in {self._place.folder} is {size:,} bytes, over the"
                f" {self._limit:,} allowed"
            )
        typ, data = client.uid("FETCH", uid, "(BODY.PEEK[])")
        body = next((d[1] for d in data if isinstance(d, tuple) and len(d) == 2), None)
        if typ != "OK" or not isinstance(body, bytes):
            raise FetchError(f"message {uid} is no longer in {self._place.shown}")
        return body

    def _select(self, client: _Client) -> str:
        """Open the folder read-only; its UIDVALIDITY."""
        self._uidvalidity = None
        try:
            typ, data = client.select(_quoted(_utf7(self._place.folder)), readonly=True)
        except imaplib.IMAP4.abort:
            raise
        except imaplib.IMAP4.error as exc:
            typ, data = "BAD", [str(exc).encode()]
        if typ != "OK":
            said = b" ".join(d for d in data if isinstance(d, bytes)).decode(errors="replace")
            raise FetchError(
                f"IMAP folder {self._place.shown} could not be opened"
                f" (the server said: {said.strip() or typ})"
            )
        _typ, values = client.response("UIDVALIDITY")
        value = values[0] if values else None
        if not isinstance(value, bytes) or not value.strip().isdigit():
            raise FetchError(f"the IMAP server gave no UIDVALIDITY for {self._place.shown}")
        self._uidvalidity = value.strip().decode()
        return self._uidvalidity

    def _run(self, work: Callable[[_Client], T]) -> T:
        """`work` on the open connection; a connection that dropped since (an idle timeout
        on the server) is opened again once."""
        for attempt in (1, 2):
            fresh = self._client is None
            client = self._connect() if self._client is None else self._client
            try:
                return work(client)
            except (imaplib.IMAP4.abort, OSError) as exc:
                self._client = None
                self._uidvalidity = None
                with contextlib.suppress(OSError):
                    client.shutdown()
                if fresh or attempt == 2:
                    raise FetchError(
                        f"the IMAP connection to {self._place.host} failed: {exc}"
                    ) from exc
            except imaplib.IMAP4.error as exc:
                raise FetchError(
                    f"the IMAP server {self._place.host} refused a command: {_said(exc)}"
                ) from exc
        raise AssertionError("unreachable")

    def _connect(self) -> _Client:
        place = self._place
        addresses = vetted_addresses(place.host, place.port, self._policy)
        context = _tls_context(self._policy) if place.tls != "none" else None
        where = f"{place.host}:{place.port}"
        try:
            client = _Client(
                place, addresses, context if place.tls == "implicit" else None, self._policy
            )
        except ssl.SSLCertVerificationError as exc:
            raise FetchError(f"the IMAP server {where} has no trusted certificate: {exc}") from exc
        except (OSError, imaplib.IMAP4.error) as exc:
            raise FetchError(f"could not connect to the IMAP server {where}: {exc}") from exc
        try:
            if place.tls == "starttls":
                self._starttls(client, context)
            self._login(client)
        except BaseException:
            with contextlib.suppress(OSError):
                client.shutdown()
            raise
        self._client = client
        return client

    def _starttls(self, client: _Client, context: ssl.SSLContext | None) -> None:
        where = f"{self._place.host}:{self._place.port}"
        if "STARTTLS" not in client.capabilities:
            raise FetchError(
                f"the IMAP server {where} does not offer STARTTLS; use imaps:// or, on a"
                ' network you trust, the option "tls": "none"'
            )
        try:
            client.starttls(context)
        except ssl.SSLCertVerificationError as exc:
            raise FetchError(f"the IMAP server {where} has no trusted certificate: {exc}") from exc
        except (OSError, imaplib.IMAP4.error) as exc:
            raise FetchError(f"STARTTLS with the IMAP server {where} failed: {exc}") from exc

    def _login(self, client: _Client) -> None:
        user, password = self._place.user, self._password
        try:
            if "AUTH=PLAIN" in client.capabilities:
                # SASL PLAIN carries UTF-8; LOGIN's quoted strings only ASCII.
                credentials = f"\0{user}\0{password}".encode()
                client.authenticate("PLAIN", lambda _challenge: credentials)
            else:
                client.login(user, password)
        except imaplib.IMAP4.abort as exc:
            raise FetchError(
                f"IMAP login failed for {user} on {self._place.host}: the server hung up"
            ) from exc
        except (imaplib.IMAP4.error, UnicodeEncodeError) as exc:
            said = _said(exc) if isinstance(exc, imaplib.IMAP4.error) else "non-ASCII password"
            raise FetchError(
                f"IMAP login failed for {user} on {self._place.host} (the server said: {said})"
            ) from None  # the exception's arguments may hold the credentials


def _tls_context(policy: FetchPolicy) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if policy.ca_file is not None:
        context.load_verify_locations(cafile=policy.ca_file)
    return context


def _said(exc: imaplib.IMAP4.error) -> str:
    """The server's own words in one of imaplib's errors ("LOGIN command error: NO [b'…']")."""
    text = str(exc)
    match = _SERVER_WORDS.search(text)
    return (match.group(1) if match else text)[:300]


def _header(headers: Message, name: str) -> str | None:
    try:
        value = headers.get(name)
    except (ValueError, IndexError):  # a header too malformed for the modern parser
        return None
    text = " ".join(str(value).split()) if value is not None else ""
    return text or None


def _quoted(name: str) -> str:
    return '"' + name.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _utf7(name: str) -> str:
    """A folder name in IMAP's modified UTF-7 (RFC 3501 5.1.3): printable ASCII as itself
    ("&" as "&-"), anything else as "&" + modified base64 of its UTF-16 + "-"."""
    out: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            raw = "".join(pending).encode("utf-16-be")
            encoded = base64.b64encode(raw).decode("ascii").rstrip("=").replace("/", ",")
            out.append("&" + encoded + "-")
            pending.clear()

    for char in name:
        if 0x20 <= ord(char) <= 0x7E:
            flush()
            out.append("&-" if char == "&" else char)
        else:
            pending.append(char)
    flush()
    return "".join(out)
