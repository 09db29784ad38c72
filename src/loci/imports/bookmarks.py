"""Browser bookmarks: the Netscape bookmark file Chrome, Firefox, Safari, Edge and Raindrop
export (`<!DOCTYPE NETSCAPE-Bookmark-file-1>`), and Pocket's export, which is the same idea in
plain HTML lists.

The Netscape file is HTML no parser agrees on the shape of (`<DT>` and `<p>` are never closed),
so it is read as a stream of tags: a folder is the `<H3>` before a `<DL>`, which holds the
folder's bookmarks until its `</DL>`; a bookmark is an `<A HREF=… ADD_DATE=… TAGS=…>`, and a
`<DD>` after it is its description. Pocket writes `<h1>Unread</h1><ul><li><a href=…
time_added=… tags=…>`: there any heading before a list names it.

Each link is an item with its address and no body: the import fetches it through the safe
fetcher, so what is kept is the page as it is now. Its folders are its place (`where`) and
its tags (but not the toolbar or "other bookmarks" folder every bookmark of a browser sits
in), its own tags too. A link that is not a web address (`javascript:`, `place:`, `file:`)
is skipped with the reason. The same address in two folders is one item, with the tags of
both. HTML declares no entities of its own, so there is nothing to expand."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from loci.imports.export_files import text_file
from loci.imports.items import Export, ExportRefused, Item, ItemFailure, Limits

DOCTYPE = "netscape-bookmark-file-1"
# Folders a browser puts every bookmark in: where a bookmark is, not what it is about.
_BROWSER_FOLDER_MARKS = ("personal_toolbar_folder", "unfiled_bookmarks_folder")
_LISTS = ("dl", "ul", "ol")
_HEADINGS = ("h1", "h2", "h3", "h4", "h5", "h6")
_DEFAULT_PORTS = {"http": 80, "https": 443}
MAX_DEPTH = 100  # folders inside folders: deeper is a hostile file, not a person's bookmarks


@dataclass
class _Folder:
    name: str
    tagged: bool  # its name is a tag of what it holds


@dataclass
class _Link:
    href: str
    title: str
    folders: tuple[_Folder, ...]
    added: str | None
    modified: str | None
    tags: tuple[str, ...]
    description: str = ""


class _Reader(HTMLParser):
    """The stream of tags of a bookmark file, as links with their folders."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.netscape = False
        self.links: list[_Link] = []
        self.timestamps = 0  # links carrying ADD_DATE / time_added: a bookmark export's mark
        self._folders: list[_Folder | None] = []  # per open list, the folder it is (if any)
        self._heading: _Folder | None = None  # the last heading read, naming the next list
        self._heading_marked = False
        self._capture: str | None = None  # "heading", "link", "description": where text goes
        self._text: list[str] = []
        self._link: _Link | None = None
        self._after_link = False  # the last thing read was a link: a <DD> now describes it

    def handle_decl(self, decl: str) -> None:
        if DOCTYPE in decl.lower():
            self.netscape = True

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = {k.lower(): v or "" for k, v in attrs}
        if tag in ("dt", "dd", "li", "a", *_LISTS, *_HEADINGS):
            self._finish()  # what a file left open ends where the next entry starts
        if tag in _LISTS:
            if len(self._folders) >= MAX_DEPTH:
                raise ExportRefused(
                    f"folders nest deeper than {MAX_DEPTH} levels; nothing was imported"
                )
            self._folders.append(self._heading)
            self._heading = None
            self._after_link = False
        elif tag in _HEADINGS and (not self.netscape or tag == "h3"):
            self._start("heading")
            self._heading_marked = any(values.get(m) for m in _BROWSER_FOLDER_MARKS)
        elif tag == "a" and values.get("href"):
            self._start("link")
            added = values.get("add_date") or values.get("time_added")
            if added:
                self.timestamps += 1
            self._link = _Link(
                href=values["href"].strip(),
                title="",
                folders=tuple(f for f in self._folders if f is not None),
                added=_date(added),
                modified=_date(values.get("last_modified")),
                tags=_tags(values.get("tags", "")),
            )
        elif tag == "dd" and self._after_link:
            # (A <DD> after a folder's <H3> describes the folder: not kept.)
            self._start("description")

    def handle_endtag(self, tag: str) -> None:
        if tag in _LISTS:
            self._finish()
            if self._folders:
                self._folders.pop()
            self._heading = None
            self._after_link = False
        elif (tag in _HEADINGS and self._capture == "heading") or (
            tag == "a" and self._capture == "link"
        ):
            self._finish()

    def handle_data(self, data: str) -> None:
        if self._capture is not None:
            self._text.append(data)

    def close(self) -> None:
        super().close()
        self._finish()

    def _start(self, capture: str) -> None:
        self._finish()
        self._capture = capture
        self._text = []

    def _finish(self) -> None:
        """Whatever is being read ends here: a heading names the next list, a link is kept,
        a description goes to the link before it."""
        text = " ".join("".join(self._text).split())
        if self._capture == "heading":
            self._heading = _Folder(text, not self._heading_marked) if text else None
            self._after_link = False
        elif self._capture == "link" and self._link is not None:
            self._link.title = text
            self.links.append(self._link)
            self._link = None
            self._after_link = True
        elif self._capture == "description" and self.links and text:
            self.links[-1].description = text
        self._capture = None
        self._text = []


def read(path: Path, limits: Limits) -> Export:
    text = text_file(path, limits, "as browsers write their bookmarks")
    reader = _Reader()
    reader.feed(text)
    reader.close()
    if not reader.netscape and not reader.timestamps:
        raise ExportRefused(
            f"{path.name} is not a bookmarks export (no <!DOCTYPE NETSCAPE-Bookmark-file-1>,"
            " no links with the dates browsers and Pocket write); nothing was imported"
        )
    export = Export(kind="bookmarks")
    found: dict[str, Item] = {}
    for link in reader.links:
        name = link.title or link.href
        key = normal_url(link.href)
        if key is None:
            export.skipped.append(ItemFailure(name, _not_fetched(link.href)))
            continue
        folders = [f.name for f in link.folders]
        tags = tuple(dict.fromkeys([f.name for f in link.folders if f.tagged] + list(link.tags)))
        earlier = found.get(key)
        if earlier is not None:  # the same page bookmarked twice: one item, both folders' tags
            found[key] = Item(
                key=earlier.key,
                name=earlier.name,
                body=b"",
                mime_type=earlier.mime_type,
                title=earlier.title,
                created=earlier.created,
                updated=earlier.updated,
                tags=tuple(dict.fromkeys(earlier.tags + tags)),
                where=earlier.where,
                url=earlier.url,
                extra={**earlier.extra, "also_in": [*earlier.extra.get("also_in", []), folders]},
            )
            continue
        found[key] = Item(
            key=key,
            name=name,
            body=b"",
            mime_type="text/html",
            title=link.title or None,
            created=link.added,
            updated=link.modified,
            tags=tags,
            where=tuple(folders),
            url=link.href,
            extra={"description": link.description or None},
        )
    for item in found.values():
        export.add(item, limits)
    return export


def normal_url(href: str) -> str | None:
    """The address a bookmark stands for, written one way (scheme and host in lower case, no
    default port, no fragment), or None when it is not an http(s) address."""
    try:
        parts = urlsplit(href.strip())
        port = parts.port
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname:
        return None
    host = parts.hostname.lower()
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    if port is not None and port != _DEFAULT_PORTS[scheme]:
        host = f"{host}:{port}"
    if parts.username or parts.password:
        return None  # see `_not_fetched`
    return urlunsplit((scheme, host, parts.path or "/", parts.query, ""))


def _not_fetched(href: str) -> str:
    scheme = href.split(":", 1)[0].lower() if ":" in href else ""
    if scheme in _DEFAULT_PORTS:
        try:
            netloc = urlsplit(href.strip()).netloc
        except ValueError:
            netloc = ""
        if "@" in netloc:
            # A password in a bookmark is not sent anywhere, nor kept in a document's origin.
            return "its address carries a user name or password; Loci does not fetch those"
        return "not a valid web address"
    if scheme and scheme.isascii() and scheme.replace("+", "").replace("-", "").isalnum():
        return f"a {scheme}: link, not a web page; only http(s) addresses are fetched"
    return "not a web address; only http(s) addresses are fetched"


def _date(value: str | None) -> str | None:
    """A bookmark's time as ISO 8601: seconds since 1970, as browsers write it (some write
    milliseconds or microseconds)."""
    if not value or not value.strip().isdigit():
        return None
    number = int(value.strip())
    while number > 100_000_000_000:  # past the year 5138 in seconds: finer units
        number //= 1000
    try:
        moment = dt.datetime.fromtimestamp(number, dt.UTC)
    except (OverflowError, OSError, ValueError):
        return None
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _tags(raw: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(t.strip() for t in raw.split(",") if t.strip()))
