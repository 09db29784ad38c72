"""Notion's "Markdown & CSV" export: a zip (a big workspace's is a zip of `Part-N.zip`s) or the
folder it unpacks to. Every page is a Markdown file named by its title and its Notion id
("Trip to Lisbon 0f5c…9a1b.md", the title cut short when long), its sub-pages, images and files
in a folder named like it; a database is a CSV of its rows ("Reading list <id>.csv", and
"…_all.csv" with every row rather than the view's) and a folder of the rows' own pages. Links
between pages are Markdown links to the other page's file, by a URL-encoded relative path.

A page becomes a document keyed by its Notion id, so the same page exported again (renamed,
moved) is the same document, and two pages of one title stay two. Its title is its first
heading (whole, where the file name is cut short); its place the titles of the pages above it;
the properties Notion writes under the title ("Status: Done") stay as text, and its
"Created"/"Last edited time" give its dates. A link to another page of the export is recorded
as a link and reads as that page's title, pointing at the page in Notion; an image or file a
page shows becomes its attachment.

A database becomes one document with a section per row: the row's title as its heading and
every column as "Column: value", so a search cites the row by its name and finds it by any of
its values with the column's name beside them. A row with a page of its own keeps that page as
a document too, linked from its row."""

from __future__ import annotations

import csv
import io
import mimetypes
import posixpath
import re
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from urllib.parse import unquote

from loci.imports.archive import Member, is_zip, read_zip
from loci.imports.items import Attachment, Export, ExportRefused, Item, ItemFailure, Limits
from loci.imports.markdown import file_name, note_markdown

_ID = r"[0-9a-f]{32}"
_NAMED = re.compile(rf"^(?P<title>.*?)\s*(?P<id>{_ID})(?P<all>_all)?\.(?P<ext>md|csv)$")
_FOLDER = re.compile(rf"^(?:(?P<title>.*?)\s+)?(?P<id>{_ID})$")
_PART = re.compile(r"^[^/]*-Part-\d+/")  # a part zip's members, as `read_zip` names them
_ANY_ID = re.compile(rf"(?<![0-9a-f])({_ID})(?![0-9a-f])")
# Notion leaves parentheses in a file name unencoded ("Budget%20(2023)%20<id>.md").
# An image's "!" is left out of the pattern: one that starts with "[" runs twenty times faster.
_LINK = re.compile(r"\[(?P<text>[^\]\n]*)\]\((?P<target>(?:[^()\s]|\([^()\s]*\))+)\)")
_CELL_LINK = re.compile(rf"\s*\((?P<target>(?:[^()]|\([^()]*\))*?{_ID}\.(?:md|csv))\)")
_PROPERTY = re.compile(r"^(?P<name>[^:\n]{1,60}):\s(?P<value>.*)$")
_CREATED = ("created", "created time", "date created", "created at")
_UPDATED = ("last edited time", "last edited", "updated", "last updated", "edited")
_DATE_FORMATS = (
    "%B %d, %Y %I:%M %p",  # "January 5, 2023 10:15 AM", Notion's default
    "%B %d, %Y %H:%M",
    "%B %d, %Y",
    "%Y/%m/%d %H:%M",
    "%Y/%m/%d",
    "%d/%m/%Y %H:%M",
    "%m/%d/%Y %H:%M",
    "%Y-%m-%dT%H:%M:%S",
    "%Y-%m-%d %H:%M",
    "%Y-%m-%d",
)
_WEB = "https://www.notion.so/"


@dataclass
class _Page:
    key: str
    path: str
    title: str
    text: str


@dataclass
class _Database:
    key: str
    path: str
    title: str
    data: bytes
    rows: list[_Page] = field(default_factory=list)  # the pages of its rows, in export order


def read(path: Path, limits: Limits) -> Export:
    members = _members(path, limits)
    export = Export(kind="notion")
    files = {m.path: m.data for m in members}
    pages: dict[str, _Page] = {}
    databases: dict[str, _Database] = {}
    for member in members:
        name = member.path.rsplit("/", 1)[-1]
        named = _NAMED.match(name)
        if name.endswith(".md"):
            try:
                text = member.data.decode("utf-8-sig")
            except UnicodeDecodeError:
                export.failed.append(ItemFailure(member.path, "not UTF-8 text"))
                continue
            key = named["id"] if named else member.path
            title = _heading(text) or (named["title"] if named else name[: -len(".md")])
            pages[key] = _Page(key, member.path, title.strip() or "Untitled", text)
        elif named and named["ext"] == "csv":
            known = databases.get(named["id"])
            # "…_all.csv" has every row; the other only those of the view it was exported from.
            if known is None or (named["all"] and not known.path.endswith("_all.csv")):
                title = named["title"].strip() or "Untitled database"
                databases[named["id"]] = _Database(named["id"], member.path, title, member.data)
    for key, database in databases.items():
        if key in pages:  # a page and a database of one id: both kept, apart
            database.key = f"{key}.csv"
    if not pages and not databases:
        raise ExportRefused(
            f"{path.name} holds no Notion pages (.md or .csv files named with Notion's ids);"
            " is it a 'Markdown & CSV' export?"
        )
    titles = {k: p.title for k, p in pages.items()} | {k: d.title for k, d in databases.items()}
    folders = _folders(
        [(k, p.path) for k, p in pages.items()] + [(k, d.path) for k, d in databases.items()]
    )
    for page in pages.values():
        parent = folders.get(posixpath.dirname(page.path))
        if parent in databases:
            databases[parent].rows.append(page)
    context = _Context(files, titles, folders)
    for page in pages.values():
        export.add(_page_item(page, context), limits)
    for database in databases.values():
        try:
            export.add(_database_item(database, context), limits)
        except (csv.Error, UnicodeDecodeError) as error:
            export.failed.append(ItemFailure(database.path, f"unreadable CSV ({error})"))
    return export


def _members(path: Path, limits: Limits) -> list[Member]:
    if path.is_dir():
        found: list[Member] = []
        total = 0
        for file in sorted(path.rglob("*")):
            # A symlink could lead anywhere on the machine: only the export's own files.
            if file.is_symlink() or not file.is_file():
                continue
            size = file.stat().st_size
            total += size
            if size > limits.max_item_bytes or total > limits.max_bytes:
                raise ExportRefused(
                    f"{file.name} takes this export past its limits ({limits.max_item_bytes:,}"
                    f" bytes a file, {limits.max_bytes:,} in all); nothing was imported"
                )
            found.append(Member(file.relative_to(path).as_posix(), file.read_bytes()))
            if len(found) > limits.max_items * 4:
                raise ExportRefused(
                    f"this export holds more than {limits.max_items * 4:,} files; nothing was"
                    " imported (raise LOCI_IMPORT_MAX_ITEMS to import it)"
                )
        return found
    if is_zip(path):
        # A big export's parts each hold a share of one tree (a page in Part-1, its
        # sub-pages in Part-2): their members are put back into that one tree.
        return [Member(_PART.sub("", m.path, count=1), m.data) for m in read_zip(path, limits)]
    raise ExportRefused(f"{path.name} is neither a zip nor a folder; Notion exports a zip")


class _Context:
    """What every page's links are resolved against: the export's files and the titles of its
    pages and databases by id."""

    def __init__(
        self, files: dict[str, bytes], titles: dict[str, str], folders: dict[str, str]
    ) -> None:
        self.files = files
        self.titles = titles
        self.folders = folders

    def where(self, path: str) -> tuple[str, ...]:
        """The titles of the pages (and database) a file sits under. Folders that are not a
        page's (Notion's "Export-<uuid>" wrapper, a "Part-1") are left out."""
        place: list[str] = []
        parts = path.split("/")[:-1]
        for depth, folder in enumerate(parts, 1):
            owner = self.folders.get("/".join(parts[:depth]))
            named = _FOLDER.match(folder)
            if owner is not None:
                place.append(self.titles[owner])
            elif named:  # a page not in this export (another part, or left out)
                place.append(self.titles.get(named["id"]) or (named["title"] or "").strip())
        return tuple(p for p in place if p)

    def resolve(self, text: str, base: str) -> tuple[str, list[str], list[Attachment]]:
        """`text` with its links to pages made to read as their titles (pointing at Notion),
        the ids it links to, and the files it shows."""
        links: list[str] = []
        attachments: dict[str, Attachment] = {}

        def replace(match: re.Match[str]) -> str:
            target = match["target"]
            label = match["text"]
            if target.startswith(("http://", "https://", "mailto:")):
                found = _ANY_ID.search(target) if "notion.so" in target else None
                if found and found.group(1) in self.titles:
                    links.append(found.group(1))
                    return f"[{self.titles[found.group(1)]}]({_WEB}{found.group(1)})"
                return match.group(0)
            path = posixpath.normpath(posixpath.join(base, unquote(target.split("#")[0])))
            named = _NAMED.match(posixpath.basename(path))
            if named is None and path not in self.files:
                found = _ANY_ID.search(posixpath.basename(path))
                named_id = found.group(1) if found else None
            else:
                named_id = named["id"] if named else None
            if named_id is not None and named_id in self.titles:
                links.append(named_id)
                return f"[{self.titles[named_id]}]({_WEB}{named_id})"
            data = self.files.get(path)
            if data is None:
                return match.group(0)  # a file not in the export: left as Notion wrote it
            name = posixpath.basename(path)
            attachments.setdefault(
                path, Attachment(name=name, data=data, mime_type=mimetypes.guess_type(name)[0])
            )
            shown = name.replace(" ", "%20").replace("(", "%28").replace(")", "%29")
            return f"[{label or name}]({shown})"  # an image's "!" stays where it is

        return _LINK.sub(replace, text), links, list(attachments.values())


def _folders(named: list[tuple[str, str]]) -> dict[str, str]:
    """The folder holding each page's sub-pages (or database's rows), by its path, to its id.
    Notion names it like the page's file, "Title <id>"; some exports leave the id out of
    the folder's name ("Title"), and a title cut short may leave only the id: all three."""
    folders: dict[str, str] = {}
    for key, path in named:
        stem = re.sub(r"(_all)?\.(md|csv)$", "", path)
        folders.setdefault(stem, key)
        parent = posixpath.dirname(path)
        match = _NAMED.match(posixpath.basename(path))
        if match and match["title"].strip():
            folders.setdefault(posixpath.join(parent, match["title"].strip()), key)
        folders.setdefault(posixpath.join(parent, key), key)
    return folders


def _page_item(page: _Page, context: _Context) -> Item:
    body = page.text.replace("\r\n", "\n")
    lines = body.split("\n")
    if lines and lines[0].startswith("# "):
        body = "\n".join(lines[1:])
    properties = _properties(body)
    created = _date(properties, _CREATED)
    updated = _date(properties, _UPDATED)
    text, links, attachments = context.resolve(body, posixpath.dirname(page.path))
    where = context.where(page.path)
    return Item(
        key=page.key,
        name=file_name(page.title, "page"),
        body=note_markdown(page.title, text, where=where, created=created, updated=updated),
        title=page.title,
        created=created,
        updated=updated,
        where=where,
        links=tuple(dict.fromkeys(k for k in links if k != page.key)),
        attachments=tuple(attachments),
        extra={"path": page.path, "properties": properties or None},
    )


def _database_item(database: _Database, context: _Context) -> Item:
    text = database.data.decode("utf-8-sig")
    records = [r for r in csv.reader(io.StringIO(text, newline="")) if any(c.strip() for c in r)]
    header = [h.strip() for h in records[0]] if records else []
    # A row's own page is found by its title among the pages in the database's folder; two
    # rows of one title take their pages in order.
    row_pages: dict[str, list[_Page]] = {}
    for page in database.rows:
        row_pages.setdefault(page.title, []).append(page)
    base = posixpath.dirname(database.path)
    links: list[str] = [p.key for p in database.rows]
    sections: list[str] = []
    for record in records[1:]:
        cells = [_cell(c, base, context, links) for c in record]
        title = cells[0] if cells and cells[0] else "Untitled"
        lines = [f"## {title}", ""]
        for column, value in zip(header, cells, strict=False):
            if value:
                lines.append(f"- {column or 'Column'}: {value}")
        own = row_pages.get(title)
        if own:
            page = own.pop(0)
            lines.append(f"- Page: [{page.title}]({_WEB}{page.key})")
        sections.append("\n".join(lines))
    where = context.where(database.path)
    count = len(records) - 1 if records else 0
    summary = f"A Notion database of {count} rows" + (
        f", with the columns {', '.join(header)}." if header else "."
    )
    return Item(
        key=database.key,
        name=file_name(database.title, "database"),
        body=note_markdown(database.title, summary + "\n\n" + "\n\n".join(sections), where=where),
        title=database.title,
        where=where,
        links=tuple(dict.fromkeys(links)),
        extra={"path": database.path, "database": True, "rows": count, "columns": header},
    )


def _cell(value: str, base: str, context: _Context, links: list[str]) -> str:
    """A cell as text: a relation to another page ("Other page (Other%20page%20<id>.md)")
    recorded as a link and left as the page's title."""

    def replace(match: re.Match[str]) -> str:
        found = _ANY_ID.search(unquote(match["target"]))
        if found and found.group(1) in context.titles:
            links.append(found.group(1))
        return ""

    return " ".join(_CELL_LINK.sub(replace, value).split())


def _heading(text: str) -> str | None:
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    return first[2:].strip() if first.startswith("# ") else None


def _properties(body: str) -> dict[str, str]:
    """The "Name: value" lines Notion writes under a page's title, up to the first blank line
    after them."""
    found: dict[str, str] = {}
    for line in body.lstrip("\n").split("\n"):
        match = _PROPERTY.match(line.strip())
        if not match:
            break
        found[match["name"].strip()] = match["value"].strip()
    return found


def _date(properties: dict[str, str], names: tuple[str, ...]) -> str | None:
    for name, value in properties.items():
        if name.lower() in names:
            for form in _DATE_FORMATS:
                try:
                    return datetime.strptime(value, form).isoformat()
                except ValueError:
                    continue
    return None
