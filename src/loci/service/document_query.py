"""Finding documents in a brain's list: by status, kind, format, tag and words in their names;
ordered by date, name, size, status or format; one page at a time.

The store hands over a light listing of the brain's documents (`DocumentListing`: no JSON
column to decode) with the filters SQL can apply (one status, one kind, a tag); the rest —
formats, which follow from the name and kind, and words — and the order are applied here; then
only the page's documents are read whole. For 10,000 documents decoding every full row took
most of the time (their tags and metadata are JSON); the listing makes a page of 50 cost the
same whatever the filter, with one implementation for both backends.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

from loci.ingest.formats import Format, format_of
from loci.models import Document, DocumentKind, DocumentListing, DocumentStatus

Sort = Literal["added", "name", "size", "status", "format"]
SORTS: tuple[Sort, ...] = ("added", "name", "size", "status", "format")
# Failed first, then what is still being worked on: what needs a person's eye comes first.
_STATUS_ORDER = {"failed": 0, "processing": 1, "ready": 2}


@dataclass(frozen=True)
class DocumentQuery:
    """What to list. Empty tuples and None mean "any"; `limit` None means all of them."""

    statuses: Sequence[DocumentStatus] = ()
    kinds: Sequence[DocumentKind] = ()
    formats: Sequence[Format] = ()
    tag: str | None = None
    words: str | None = None  # in the name, title, path or address, any case
    sort: Sort = "added"
    descending: bool = False
    limit: int | None = None
    offset: int = 0

    @property
    def narrowed(self) -> bool:
        """Whether anything but the order and the page was asked for: then an empty answer
        means "nothing matches", not "nothing yet"."""
        return bool(self.statuses or self.kinds or self.formats or self.tag or self.words)


@dataclass(frozen=True)
class DocumentPage:
    documents: list[Document]
    total: int  # how many match, over every page


Listed = TypeVar("Listed", Document, DocumentListing)


def listed_format(document: Document | DocumentListing) -> Format:
    return format_of(document.kind, document.name, document.mime_type)


def _sort_key(sort: Sort) -> Callable[[Document | DocumentListing], Any]:
    if sort == "name":
        return lambda d: ((d.title or d.name).casefold(), d.name.casefold(), d.id)
    if sort == "size":
        return lambda d: (d.size_bytes, d.id)
    if sort == "status":
        return lambda d: (_STATUS_ORDER.get(d.status, 3), d.id)
    if sort == "format":
        return lambda d: (listed_format(d), d.id)
    return lambda d: d.id  # ids grow with creation, and `created_at` never changes


def _matches(query: DocumentQuery) -> Callable[[Document | DocumentListing], bool]:
    words = (query.words or "").casefold().split()
    statuses, kinds, formats = set(query.statuses), set(query.kinds), set(query.formats)

    def keep(document: Document | DocumentListing) -> bool:
        if statuses and document.status not in statuses:
            return False
        if kinds and document.kind not in kinds:
            return False
        if formats and listed_format(document) not in formats:
            return False
        if words:
            fields = (document.name, document.title, document.source_path, document.source_url)
            haystack = " ".join(f for f in fields if f).casefold()
            return all(word in haystack for word in words)
        return True

    return keep


def select(documents: list[Listed], query: DocumentQuery) -> tuple[list[Listed], int]:
    """The page of `documents` (already narrowed by what SQL could do) that `query` asks for,
    and how many match over every page."""
    keep = _matches(query)
    found = [d for d in documents if keep(d)] if query.narrowed else documents
    # Every key ends with the id: the order is total, so a page boundary never moves a row.
    ordered = sorted(found, key=_sort_key(query.sort), reverse=query.descending)
    end = None if query.limit is None else query.offset + query.limit
    return ordered[query.offset : end], len(found)
