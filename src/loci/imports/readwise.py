"""Readwise's exports of a person's highlights, of books, articles, tweets and podcasts.

The CSV (Export → CSV) has a row per highlight: `Highlight`, `Book Title`, `Book Author`,
`Amazon Book ID`, `Note` (the person's note on it), `Color`, `Tags` (the highlight's), `Location
Type` ("location", "page", "order", "time", "offset" or "none"), `Location`, `Highlighted at`
and `Document tags` (the book's); a field may hold quoted line breaks, and the file may start
with a BOM. As with Kindle's clippings, a book or article is one document: its highlights in
the export's order, each a section headed by its location ("Highlight at Location 170",
"Highlight at page 12"), so a passage found is cited to the book and the place in it. Its key
is its Amazon Book ID when it has one (the same book whatever Readwise calls it), else its
title and author; its tags are its document tags; a URL column, where an export has one, is
its address. A CSV without the `Highlight` and `Book Title` columns is not a Readwise export
and is refused whole; a row without a highlight or a title fails alone.

The Markdown export (Export → Markdown, a zip of `Books/`, `Articles/`, … with a page per
book) is simpler to take: each page is kept as Readwise wrote it, keyed by its path in the
export, its folder saying what it is. Its highlights are list items under one "Highlights"
heading, so a passage found there is cited to the book, not to a location."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path, PurePosixPath

from loci.imports.archive import is_zip
from loci.imports.export_files import export_members
from loci.imports.items import Export, ExportRefused, Item, ItemFailure, Limits
from loci.imports.markdown import file_name, note_markdown
from loci.imports.sections import demote_headings

TOOL = "Readwise"
REQUIRED = ("Highlight", "Book Title")
_URL_COLUMNS = ("URL", "Source URL", "Document URL")
_PLACES = {"location": "Location", "page": "page", "order": "#", "time": "time", "offset": "at"}


@dataclass
class _Highlight:
    text: str
    note: str
    place: str | None
    when: str | None
    tags: list[str]


@dataclass
class _Book:
    title: str
    author: str
    asin: str
    url: str | None = None
    tags: list[str] = field(default_factory=list)
    highlights: list[_Highlight] = field(default_factory=list)


def read(path: Path, limits: Limits) -> Export:
    if path.is_dir() or is_zip(path):
        return _markdown_export(path, limits)
    raw = path.read_bytes()[: limits.max_item_bytes + 1]
    if len(raw) > limits.max_item_bytes:
        raise ExportRefused(
            f"{path.name} is over {limits.max_item_bytes:,} bytes; nothing was imported"
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ExportRefused(
            f"{path.name} is not UTF-8 text ({error.reason} at byte {error.start}), as Readwise"
            " writes its CSV; nothing was imported"
        ) from None
    return _csv_export(path.name, text, limits)


def _csv_export(name: str, text: str, limits: Limits) -> Export:
    rows = csv.reader(io.StringIO(text, newline=""))
    try:
        header = [h.strip() for h in next(rows, [])]
    except csv.Error as error:
        raise ExportRefused(f"{name} is not a CSV file ({error}); nothing was imported") from None
    if not all(column in header for column in REQUIRED):
        seen = ", ".join(header[:6]) or "nothing"
        raise ExportRefused(
            f"{name} is not Readwise's CSV export: it has no {' and '.join(REQUIRED)} columns"
            f" (its first line reads {seen}); nothing was imported"
        )
    column = {h: i for i, h in reversed(list(enumerate(header)))}
    url_at = next((column[c] for c in _URL_COLUMNS if c in column), None)
    export = Export(kind="readwise")
    books: dict[str, _Book] = {}
    number = 0
    try:
        for number, row in enumerate(rows, 1):  # noqa: B007 - the number names a bad row
            if not any(cell.strip() for cell in row):
                continue

            def cell(name: str, row: list[str] = row) -> str:
                at = column.get(name)
                return row[at].strip() if at is not None and at < len(row) else ""

            if len(row) < len(header):
                export.failed.append(
                    ItemFailure(
                        f"row {number}", f"{len(row)} of the {len(header)} columns; left out"
                    )
                )
                continue
            title, highlight = cell("Book Title"), cell("Highlight")
            if not title or not highlight:
                what = "book title" if not title else "highlight"
                export.failed.append(ItemFailure(f"row {number}", f"no {what}; left out"))
                continue
            author, asin = cell("Book Author"), cell("Amazon Book ID")
            key = f"asin:{asin}" if asin else f"{title} — {author}" if author else title
            book = books.get(key)
            if book is None:
                book = books[key] = _Book(title, author, asin)
                book.tags = _tags(cell("Document tags"))
            if url_at is not None and row[url_at].strip() and book.url is None:
                book.url = row[url_at].strip()
            book.highlights.append(
                _Highlight(
                    text=highlight,
                    note=cell("Note"),
                    place=_place(cell("Location Type"), cell("Location")),
                    when=_when(cell("Highlighted at")),
                    tags=_tags(cell("Tags")),
                )
            )
    except csv.Error as error:
        raise ExportRefused(
            f"{name}: row {number + 1} cannot be read as CSV ({error}); nothing was imported"
        ) from None
    for key, book in books.items():
        export.add(_item(key, book), limits)
    return export


def _item(key: str, book: _Book) -> Item:
    sections = []
    for number, highlight in enumerate(book.highlights, 1):
        place = highlight.place
        heading = (
            f"Highlight {number}"
            if not place
            else f"Highlight {place}"  # in reading order: "Highlight #2"
            if place.startswith("#")
            else f"Highlight at {place}"
        )
        parts = ["> " + highlight.text.replace("\n", "\n> ")]
        if highlight.note:
            parts.append("Note: " + demote_headings(highlight.note, 2))
        facts = [f"tags: {', '.join(highlight.tags)}"] if highlight.tags else []
        facts += [f"highlighted {highlight.when[:10]}"] if highlight.when else []
        if facts:
            parts.append("*" + " · ".join(facts) + "*")
        sections.append(f"## {heading}\n\n" + "\n\n".join(parts))
    times = sorted(h.when for h in book.highlights if h.when)
    where = (TOOL, book.author) if book.author else (TOOL,)
    return Item(
        key=key,
        name=file_name(book.title, "highlights"),
        body=note_markdown(
            book.title, "\n\n".join(sections), where=where, tags=book.tags, url=book.url
        ),
        title=book.title,
        created=times[0] if times else None,
        updated=times[-1] if times else None,
        tags=tuple(book.tags),
        where=(TOOL,),
        url=book.url,
        extra={
            "author": book.author or None,
            "asin": book.asin or None,
            "highlights": len(book.highlights),
        },
    )


def _place(kind: str, value: str) -> str | None:
    if not value or kind.lower() == "none":
        return None
    word = _PLACES.get(kind.lower(), kind)
    return f"{word}{value}" if word == "#" else f"{word} {value}"


def _when(value: str) -> str | None:
    try:
        return datetime.fromisoformat(value).isoformat() if value else None
    except ValueError:
        return None


def _tags(value: str) -> list[str]:
    return list(dict.fromkeys(t.strip() for t in value.split(",") if t.strip()))


def _markdown_export(path: Path, limits: Limits) -> Export:
    export = Export(kind="readwise")
    pages = [m for m in export_members(path, limits) if m.path.lower().endswith(".md")]
    if not pages:
        raise ExportRefused(
            f"{path.name} holds no Markdown pages; is it Readwise's Markdown export (or its CSV)?"
        )
    for page in pages:
        try:
            text = page.data.decode("utf-8-sig")
        except UnicodeDecodeError:
            export.failed.append(ItemFailure(page.path, "not UTF-8 text, as Readwise writes it"))
            continue
        pure = PurePosixPath(page.path)
        title = next(
            (line[2:].strip() for line in text.splitlines() if line.startswith("# ")), pure.stem
        )
        folder = pure.parent.name
        where = (TOOL, folder) if folder and folder != "." else (TOOL,)
        export.add(
            Item(
                key=page.path,
                name=file_name(title, pure.stem),
                body=text.encode("utf-8"),
                title=title,
                where=where,
            ),
            limits,
        )
    return export
