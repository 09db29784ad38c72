"""Kindle's `My Clippings.txt`: every highlight, note and bookmark made on the device, one
after another, each ended by a line of ten "=". An entry is the book's title line
("Title (Author)"), a line of what it is and where ("- Your Highlight on page 12 | Location
170-172 | Added on Sunday, 5 March 2023 10:14:02"; other languages word it their own way, so
only its numbers and its " | " parts are relied on), a blank line and the clipped text.

A book is one document: its highlights in reading order, each under a heading naming its
location, so a passage found is cited to the book and the place in it. A note made on a
highlight follows it; bookmarks (no text) are left out. The device appends a highlight again
when it is widened, so a highlight contained in a later one of the same place is dropped."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from loci.imports.export_files import text_file
from loci.imports.items import Export, ExportRefused, Item, ItemFailure, Limits
from loci.imports.markdown import file_name, note_markdown

SEPARATOR = re.compile(r"^={10}\s*$", re.MULTILINE)
_NUMBERS = re.compile(r"\d+(?:\s*[-–]\s*\d+)?")
_AUTHOR = re.compile(r"^(?P<title>.*?)\s*\((?P<author>[^()]*)\)\s*$")


@dataclass
class _Clip:
    kind: str  # "highlight", "note", "bookmark"
    page: str | None
    location: str | None
    added: str
    text: str


@dataclass
class _Book:
    title: str
    author: str | None
    clips: list[_Clip] = field(default_factory=list)


def read(path: Path, limits: Limits) -> Export:
    text = text_file(path, limits, "as Kindle writes My Clippings.txt")
    text = text.replace("\r\n", "\n").replace("\ufeff", "")
    entries = [e.strip("\n") for e in SEPARATOR.split(text)]
    entries = [e for e in entries if e.strip()]
    if not entries or not SEPARATOR.search(text):
        raise ExportRefused(
            f"{path.name} has no clippings (entries ended by a line of ==========); is it"
            " Kindle's My Clippings.txt?"
        )
    export = Export(kind="kindle")
    books: dict[str, _Book] = {}
    for number, entry in enumerate(entries, 1):
        lines = entry.split("\n")
        if len(lines) < 2 or not lines[1].startswith("- "):
            export.failed.append(ItemFailure(f"entry {number}", "not a clipping: no '- ' line"))
            continue
        head = lines[0].strip()
        clip = _clip(lines[1], "\n".join(lines[2:]).strip())
        if clip.kind == "bookmark" or not clip.text:
            continue
        match = _AUTHOR.match(head)
        title, author = (match["title"], match["author"]) if match else (head, None)
        book = books.setdefault(head, _Book(title or head, author))
        book.clips.append(clip)
    for key, book in books.items():
        clips = _widest(book.clips)
        sections = []
        for clip in clips:
            where = " · ".join(
                p for p in (clip.location and f"Location {clip.location}",
                            clip.page and f"page {clip.page}") if p
            ) or clip.added  # fmt: skip
            label = "Note" if clip.kind == "note" else "Highlight"
            body = clip.text if clip.kind == "note" else "> " + clip.text.replace("\n", "\n> ")
            sections.append(f"## {label} at {where}\n\n{body}\n\n*added {clip.added}*")
        export.add(
            Item(
                key=key,
                name=file_name(book.title, "clippings"),
                body=note_markdown(
                    book.title,
                    "\n\n".join(sections),
                    where=("Kindle",) + ((book.author,) if book.author else ()),
                ),
                title=book.title,
                where=("Kindle",),
                extra={"author": book.author, "clippings": len(clips)},
            ),
            limits,
        )
    return export


def _clip(meta: str, text: str) -> _Clip:
    parts = [p.strip() for p in meta[2:].split("|")]
    first = parts[0].lower()
    kind = "highlight"
    if any(w in first for w in ("note", "notiz", "nota", "メモ")):
        kind = "note"
    elif any(w in first for w in ("bookmark", "lesezeichen", "marcador", "signet", "ブックマーク")):
        kind = "bookmark"
    page = location = None
    for part in parts[:-1] if len(parts) > 1 else parts:
        numbers = _NUMBERS.findall(part)
        if not numbers:
            continue
        lowered = part.lower()
        is_page = any(w in lowered for w in ("page", "seite", "página", "ページ"))
        value = numbers[-1].replace(" ", "")
        if is_page and page is None:
            page = value
        elif location is None:
            location = value
    added = parts[-1] if len(parts) > 1 else ""
    added = re.sub(r"^(Added on|Hinzugefügt am|Añadido el|Ajouté le)\s+", "", added)
    return _Clip(kind, page, location, added, text)


def _widest(clips: list[_Clip]) -> list[_Clip]:
    """Each highlight once: one whose text a later highlight of the same book contains (the
    same passage, widened) is left out."""
    kept: list[_Clip] = []
    for i, clip in enumerate(clips):
        later = clips[i + 1 : i + 6]  # a widened highlight is saved right after the first
        if clip.kind == "highlight" and any(
            c.kind == "highlight" and c is not clip and clip.text in c.text for c in later
        ):
            continue
        kept.append(clip)
    return kept
