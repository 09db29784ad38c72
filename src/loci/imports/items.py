"""What a reader makes of an export: `Item`s, the items it could not read (`ItemFailure`),
and the `Limits` it reads within. A reader reads the whole export before anything is written,
so an export it refuses (`ExportRefused`: not that format, a zip bomb, too many items) imports
nothing at all, while one bad item among good ones fails alone, with its reason."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from loci.errors import InvalidInput


class ExportRefused(InvalidInput):
    """The whole export is refused: nothing of it is imported."""

    code = "export_refused"


@dataclass(frozen=True)
class Limits:
    """What one export may hold. Past any of them the export is refused whole, with the limit
    named, so a hostile file costs bounded memory and time and a real one is told what to
    raise (`LOCI_IMPORT_MAX_ITEMS`, `LOCI_IMPORT_MAX_BYTES`)."""

    max_items: int = 50_000
    max_bytes: int = 2 * 1024**3  # everything read, decompressed
    max_item_bytes: int = 200 * 1024**2  # one item or attachment
    max_ratio: int = 200  # a zip member's decompressed size over its compressed size
    max_depth: int = 2  # zips inside zips (Notion exports its parts as zips in a zip)


@dataclass(frozen=True)
class Attachment:
    """A file an item carries (an Evernote resource, a Notion page's image): kept as a
    document of its own, linked to its item (`attached_to`)."""

    name: str
    data: bytes
    mime_type: str | None = None


@dataclass(frozen=True)
class Item:
    """One note, page, conversation, highlight set or bookmark, as it will be kept.

    `key` is its identity in its tool, stable from one export to the next (Notion's page id,
    a conversation's id, a note's path in the export): the document's origin is
    "<kind>:<key>". `body` is what is kept and indexed, usually Markdown made by the reader
    (`loci.imports.markdown`); `name` the file name it is kept under. `where` is its place in
    its tool (notebook, folder path), `links` the keys of other items of the same export it
    links to, `url` the address it stands for, if any (a bookmark, a highlight's article)."""

    key: str
    name: str
    body: bytes
    mime_type: str = "text/markdown"
    title: str | None = None
    created: str | None = None  # ISO 8601, as the tool recorded it
    updated: str | None = None
    tags: tuple[str, ...] = ()
    where: tuple[str, ...] = ()
    links: tuple[str, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    url: str | None = None
    # What else the tool says of it and a reader may want to filter on later (pinned,
    # archived, author): kept in the document's metadata under "import".
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ItemFailure:
    """An item of the export that could not be read: it alone is not imported."""

    name: str  # what the person would recognise: a title, a file name in the export
    reason: str


@dataclass
class Export:
    """Everything a reader found, in the export's order."""

    kind: str
    items: list[Item] = field(default_factory=list)
    failed: list[ItemFailure] = field(default_factory=list)
    # Items a reader deliberately leaves out (trashed notes, empty conversations), with why.
    skipped: list[ItemFailure] = field(default_factory=list)

    def add(self, item: Item, limits: Limits) -> None:
        if len(self.items) >= limits.max_items:
            raise ExportRefused(
                f"this export holds more than {limits.max_items:,} items; nothing was imported"
                " (raise LOCI_IMPORT_MAX_ITEMS to import it)"
            )
        self.items.append(item)
