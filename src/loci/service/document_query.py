"""Finding documents in a brain's list: by status, kind, format, tag and words in their names;
ordered by date, name, size, status or format; one page at a time.

The store hands over the brain's rows with the filters it can apply in SQL (one status, one
kind, a tag); the rest — formats, which follow from the name and kind, and words — are applied
here, over rows already in memory. A brain of 10,000 documents is read in a few tens of
milliseconds, so a list that sorts and pages in SQL would save little and cost a second
implementation per backend.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from loci.ingest.formats import Format, document_format
from loci.models import Document, DocumentKind, DocumentStatus

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


def _sort_key(sort: Sort) -> Callable[[Document], Any]:
    if sort == "name":
        return lambda d: ((d.title or d.name).casefold(), d.name.casefold(), d.id)
    if sort == "size":
        return lambda d: (d.size_bytes, d.id)
    if sort == "status":
        return lambda d: (_STATUS_ORDER.get(d.status, 3), d.id)
    if sort == "format":
        return lambda d: (document_format(d), d.id)
    return lambda d: d.id  # ids grow with creation, and `created_at` never changes


def _matches(query: DocumentQuery) -> Callable[[Document], bool]:
    words = (query.words or "").casefold().split()
    statuses, kinds, formats = set(query.statuses), set(query.kinds), set(query.formats)

    def keep(document: Document) -> bool:
        if statuses and document.status not in statuses:
            return False
        if kinds and document.kind not in kinds:
            return False
        if formats and document_format(document) not in formats:
            return False
        if words:
            fields = (document.name, document.title, document.source_path, document.source_url)
            haystack = " ".join(f for f in fields if f).casefold()
            return all(word in haystack for word in words)
        return True

    return keep


def select(documents: list[Document], query: DocumentQuery) -> DocumentPage:
    """The page of `documents` (already narrowed by what SQL could do) that `query` asks for."""
    keep = _matches(query)
    found = [d for d in documents if keep(d)] if query.narrowed else documents
    # Every key ends with the id: the order is total, so a page boundary never moves a row.
    ordered = sorted(found, key=_sort_key(query.sort), reverse=query.descending)
    end = None if query.limit is None else query.offset + query.limit
    return DocumentPage(ordered[query.offset : end], len(found))
