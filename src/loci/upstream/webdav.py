"""A WebDAV folder followed on a schedule (Nextcloud, ownCloud, a NAS, Apache's mod_dav): each
file under it is an entry known by its path relative to the folder, its version the server's
ETag (or, on a server without ETags, its modification time and size), fetched with a GET.

The listing walks the tree with PROPFIND Depth: 1, one request per folder (servers commonly
refuse Depth: infinity, Nextcloud among them), asking only for what a listing needs. A folder
that is gone, or a login the server refuses, stops the run with an error saying which: a
listing that missed a folder would read as all its files deleted.

Locations: `webdav://host/path` and `webdavs://…` (both over TLS), or the folder's `https://`
URL as Nextcloud shows it (…/remote.php/dav/files/<user>/<folder>). Plain `http://` is taken to
a loopback host, or elsewhere only with the option "plaintext" (a password would cross the
network in clear). Every request goes through the vetted transport, so the fetch policy decides
which addresses are reached, and no redirect is followed. Responses are read to a size cap and
their XML parsed with no DTD, no entity expansion and no network.
"""

from __future__ import annotations

import re
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import PurePosixPath
from typing import Any
from urllib.parse import quote, unquote, urljoin, urlsplit

import httpx
from lxml import etree

from loci.errors import FetchError, FileTooLarge, InvalidInput
from loci.ingest.addresses import checked_url
from loci.ingest.fetch_policy import FetchPolicy
from loci.ingest.host_literals import is_loopback_host
from loci.ingest.vetted_transport import vetted_transport
from loci.upstream.base import Entry, Fetched, Listing
from loci.upstream.paths import PathFilter, path_filter

__all__ = ["WebDavFolder", "open"]

_DAV = "{DAV:}"
_PROPFIND = (
    b'<?xml version="1.0" encoding="utf-8"?>\n'
    b'<d:propfind xmlns:d="DAV:"><d:prop>'
    b"<d:resourcetype/><d:getetag/><d:getlastmodified/><d:getcontentlength/>"
    b"</d:prop></d:propfind>"
)
_SCHEMES = {
    "webdav": "https",
    "webdavs": "https",
    "davs": "https",
    "https": "https",
    "http": "http",
}
_DECLARATIONS = re.compile(rb"<!(?:DOCTYPE|ENTITY)", re.IGNORECASE)
_MAX_ENTRIES = 200_000  # files and folders in one followed tree
_MAX_DEPTH = 64
_LIST_TIMEOUT_S = 600.0  # the whole walk of a large tree


def _xml_parser() -> etree.XMLParser:
    # No entities resolved, no DTD loaded, nothing fetched, no huge-tree mode: a hostile
    # server's "billion laughs" or external entity reads as nothing, not as a file of ours.
    return etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False, huge_tree=False)


@dataclass(frozen=True)
class _Item:
    path: str  # relative to the followed folder, decoded, no trailing "/"
    folder: bool
    etag: str | None
    modified: str | None
    size: int | None


def open(  # noqa: A001 - the name every upstream module exposes
    location: str, options: Mapping[str, Any], secret: str | None, fetch: FetchPolicy
) -> WebDavFolder:
    """The folder at `location`, read as options["user"] (or the URL's user) with the
    password (an app password, for Nextcloud) in `secret`.

    Options: "user", "include" / "exclude" globs, "max_file_bytes" (default: the policy's
    `max_bytes`), "plaintext" (allow http:// to a host that is not this machine). Raises
    InvalidInput for a location or options that cannot work; nothing is contacted until
    `list`."""
    parts = urlsplit(location.strip())
    scheme = _SCHEMES.get(parts.scheme.lower())
    if scheme is None:
        raise InvalidInput(f"a WebDAV folder is a webdav:// or https:// URL, not {location}")
    if parts.query or parts.fragment:
        raise InvalidInput(f"a WebDAV folder's URL has no ?query or #fragment: {location}")
    if parts.password is not None:
        raise InvalidInput("put the password in the source's secret, not in its URL")
    host = parts.hostname
    if not host:
        raise InvalidInput(f"no host in {location}")
    try:
        port = parts.port
    except ValueError as exc:
        raise InvalidInput(f"not a port in {location}") from exc
    user = options.get("user") or (unquote(parts.username) if parts.username else None)
    if user is not None and (not isinstance(user, str) or ":" in user):
        raise InvalidInput(f"not a user name: {user!r}")
    if secret is not None and user is None:
        raise InvalidInput(f"a password is given for {location} but no user")
    if scheme == "http" and not options.get("plaintext") and not is_loopback_host(host):
        raise InvalidInput(
            f"http:// would send the password to {host} in clear; use https:// (or, on a"
            ' network you trust, the option "plaintext": true)'
        )
    netloc = host if ":" not in host else f"[{host}]"
    if port is not None:
        netloc += f":{port}"
    path = parts.path if parts.path.endswith("/") else parts.path + "/"
    root = checked_url(f"{scheme}://{netloc}{path}")
    files = path_filter(options, max_bytes=fetch.max_bytes)
    auth = httpx.BasicAuth(user, secret or "") if user is not None else None
    return WebDavFolder(root, user, auth, files, fetch)


class WebDavFolder:
    """One followed WebDAV folder (see the module's docstring)."""

    def __init__(
        self,
        root: httpx.URL,
        user: str | None,
        auth: httpx.Auth | None,
        files: PathFilter,
        policy: FetchPolicy,
    ) -> None:
        self._root = root
        self._root_path = root.path  # httpx gives it decoded
        self._user = user
        self._auth = auth
        self._files = files
        self._policy = policy

    def __str__(self) -> str:
        return f"{self._root.host}{self._root_path}"

    def list(self, state: Mapping[str, Any]) -> Listing:
        entries: list[Entry] = []
        seen = 0
        with self._client(_LIST_TIMEOUT_S) as client:
            folders: deque[tuple[str, int]] = deque([("", 0)])
            visited = {""}
            while folders:
                folder, depth = folders.popleft()
                for item in self._propfind(client, folder):
                    seen += 1
                    if seen > _MAX_ENTRIES:
                        raise FetchError(
                            f"{self} holds more than {_MAX_ENTRIES:,} files and folders;"
                            " follow a smaller folder"
                        )
                    if item.folder:
                        if item.path not in visited and depth < _MAX_DEPTH:
                            visited.add(item.path)
                            folders.append((item.path, depth + 1))
                    elif self._files.takes(item.path, item.size):
                        entries.append(Entry(item.path, _version(item), title=item.path))
        entries.sort(key=lambda entry: entry.key)
        return Listing(entries=tuple(entries), state={"files": self._files.fingerprint()})

    def fetch(self, entry: Entry) -> Fetched:
        url = self._url(entry.key)
        limit = self._files.max_bytes or self._policy.max_bytes
        with self._client(self._policy.total_timeout) as client:
            try:
                with client.stream("GET", url) as response:
                    self._check(response, entry.key, "file")
                    declared = response.headers.get("content-length", "")
                    if declared.isdigit() and int(declared) > limit:
                        raise FileTooLarge(_too_large(entry.key, int(declared), limit))
                    data = _read(response, limit, entry.key)
                    content_type = response.headers.get("content-type")
                    etag = response.headers.get("etag")
            except httpx.TimeoutException as exc:
                raise FetchError(f"timed out fetching {entry.key} from {self}") from exc
            except (httpx.TransportError, OSError) as exc:
                raise FetchError(f"could not fetch {entry.key} from {self}: {exc}") from exc
        media_type = content_type.split(";", 1)[0].strip().lower() if content_type else None
        name = PurePosixPath(entry.key).name
        return Fetched(
            name=name,
            data=data,
            mime_type=media_type or None,
            title=entry.key,
            metadata={
                "path": entry.key,
                "folder": str(self._root),
                **({"etag": etag} if etag else {}),
            },
        )

    def _client(self, budget: float) -> httpx.Client:
        policy = self._policy
        try:
            transport = vetted_transport(policy, deadline=time.monotonic() + budget)
        except (OSError, ValueError) as exc:
            raise FetchError(f"could not load the CA file {policy.ca_file}: {exc}") from exc
        timeout = httpx.Timeout(
            connect=policy.connect_timeout,
            read=policy.read_timeout,
            write=policy.read_timeout,
            pool=policy.connect_timeout,
        )
        return httpx.Client(
            transport=transport,
            timeout=timeout,
            auth=self._auth,
            follow_redirects=False,
            trust_env=False,  # no proxy from the environment, no ~/.netrc
            headers={"User-Agent": policy.user_agent, "Accept-Encoding": "identity"},
        )

    def _url(self, path: str) -> httpx.URL:
        quoted = "/".join(quote(part, safe="") for part in path.split("/")) if path else ""
        return self._root.join(quoted)

    def _propfind(self, client: httpx.Client, folder: str) -> Sequence[_Item]:
        """The files and folders directly in `folder` (relative to the root)."""
        url = self._url(folder + "/" if folder else "")
        shown = folder or "the folder itself"
        try:
            with client.stream(
                "PROPFIND",
                url,
                content=_PROPFIND,
                headers={"Depth": "1", "Content-Type": "application/xml; charset=utf-8"},
            ) as response:
                self._check(response, folder, "folder")
                if response.status_code != 207:
                    raise FetchError(
                        f"{self} answered {response.status_code} instead of a listing of {shown}"
                    )
                body = _read(response, self._policy.max_bytes, f"the listing of {shown}")
        except httpx.TimeoutException as exc:
            raise FetchError(f"timed out listing {shown} of {self}") from exc
        except (httpx.TransportError, OSError) as exc:
            raise FetchError(f"could not list {self}: {exc}") from exc
        return self._items(body, url, folder)

    def _check(self, response: httpx.Response, path: str, what: str) -> None:
        status = response.status_code
        where = f"{self}{path}"
        if status == 401:
            who = f"for {self._user}" if self._user else "without a user"
            raise FetchError(f"WebDAV login failed {who} on {self._root.host} ({status})")
        if status == 403:
            raise FetchError(f"{self._user or 'no user'} may not read {where} (403)")
        if status in (404, 410):
            raise FetchError(
                f"the WebDAV {what} {where} is not there ({status}): moved or deleted?"
            )
        if 300 <= status < 400:
            moved = response.headers.get("location", "elsewhere")
            raise FetchError(f"{where} moved to {moved}; follow the new address instead")
        if status >= 400:
            raise FetchError(f"{self} answered {status} for {where}")

    def _items(self, body: bytes, url: httpx.URL, folder: str) -> Sequence[_Item]:
        if _DECLARATIONS.search(body):
            # A multistatus never needs a DTD; one that declares entities is an attack.
            raise FetchError(f"{self} answered a listing with a DTD or entity declarations")
        try:
            tree = etree.fromstring(body, _xml_parser())
        except etree.XMLSyntaxError as exc:
            raise FetchError(f"{self} answered a listing that is not XML: {exc}") from exc
        if tree.tag != f"{_DAV}multistatus":
            raise FetchError(f"{self} answered a listing that is not a WebDAV multistatus")
        items = []
        for response in tree.iterfind(f"{_DAV}response"):
            href = (response.findtext(f"{_DAV}href") or "").strip()
            path = self._relative(str(url), href)
            if path is None or path == folder:
                continue  # the folder itself, or something outside the followed folder
            props = _found_props(response)
            if props is None:
                continue
            resource_type = props.find(f"{_DAV}resourcetype")
            is_folder = (
                resource_type is not None and resource_type.find(f"{_DAV}collection") is not None
            )
            size = (props.findtext(f"{_DAV}getcontentlength") or "").strip()
            items.append(
                _Item(
                    path=path,
                    folder=is_folder,
                    etag=(props.findtext(f"{_DAV}getetag") or "").strip() or None,
                    modified=(props.findtext(f"{_DAV}getlastmodified") or "").strip() or None,
                    size=int(size) if size.isdigit() else None,
                )
            )
        return items

    def _relative(self, base: str, href: str) -> str | None:
        """`href` (absolute, or a path on the server) as a path below the followed folder."""
        if not href:
            return None
        target = urlsplit(urljoin(base, href))
        if target.netloc and target.netloc.lower() != urlsplit(base).netloc.lower():
            return None
        path = unquote(target.path)
        if not path.startswith(self._root_path):
            return None
        relative = path[len(self._root_path) :].strip("/")
        parts = relative.split("/") if relative else []
        if any(part in (".", "..") for part in parts):
            return None
        return "/".join(parts)


def _found_props(response: Any) -> Any:
    """The <prop> of the response's propstat whose status is 200, if any."""
    for propstat in response.iterfind(f"{_DAV}propstat"):
        status = (propstat.findtext(f"{_DAV}status") or "").split()
        if len(status) >= 2 and status[1] == "200":
            return propstat.find(f"{_DAV}prop")
    return None


def _version(item: _Item) -> str:
    if item.etag:
        # The opaque tag alone: servers differ in quoting it in PROPFIND (WsgiDAV does not),
        # and a weak tag changes with the content all the same.
        return item.etag.removeprefix("W/").strip('"') or item.etag
    if item.modified:
        try:
            stamp = parsedate_to_datetime(item.modified).isoformat()
        except (TypeError, ValueError):
            stamp = item.modified
        return f"{stamp}|{item.size if item.size is not None else '?'}"
    # Neither: the size is all there is, and an edit that keeps it goes unnoticed.
    return f"size:{item.size}"


def _read(response: httpx.Response, limit: int, what: str) -> bytes:
    """The body as sent, at most `limit` bytes. Identity was asked for: a compressed body
    would be stored compressed, so it is refused rather than inflated without a bound."""
    encoding = response.headers.get("content-encoding", "identity").strip().lower()
    if encoding not in ("", "identity"):
        raise FetchError(f"{what} came {encoding}-compressed though it was asked for as is")
    parts: list[bytes] = []
    size = 0
    for chunk in response.iter_raw():
        size += len(chunk)
        if size > limit:
            raise FileTooLarge(_too_large(what, None, limit))
        parts.append(chunk)
    return b"".join(parts)


def _too_large(what: str, size: int | None, limit: int) -> str:
    shown = f" ({size:,} bytes)" if size is not None else ""
    return f"{what}{shown} is over the {limit:,} bytes allowed"
