"""Search filters: checked once, for every surface, before anything is searched; and the same
test the stores' SQL applies, for reads that list documents instead of searching them."""

from __future__ import annotations

import datetime as dt
import fnmatch
from typing import get_args

from loci.errors import InvalidInput
from loci.models import Document, DocumentKind, SearchFilters

KINDS: tuple[str, ...] = get_args(DocumentKind)
MAX_TAGS = 20
MAX_NAME = 300


def check_filters(filters: SearchFilters) -> None:
    """Bad filters are refused with the reason, never searched as-is (a misspelt kind or date
    would quietly match nothing)."""
    for kind in filters.kinds:
        if kind not in KINDS:
            raise InvalidInput(f"unknown document kind {kind!r} (one of {', '.join(KINDS)})")
    if len(filters.tags) > MAX_TAGS:
        raise InvalidInput(f"at most {MAX_TAGS} tags, got {len(filters.tags)}")
    if any(not t.strip() for t in filters.tags):
        raise InvalidInput("a tag is empty")
    if filters.name and len(filters.name) > MAX_NAME:  # "" is no name filter, as in search
        raise InvalidInput(f"a file name filter is at most {MAX_NAME} characters")
    after = _date("after", filters.created_after)
    before = _date("before", filters.created_before)
    if after and before and after >= before:
        raise InvalidInput(
            f"'after' ({filters.created_after}) must come before "
            f"'before' ({filters.created_before})"
        )


def admits(document: Document, filters: SearchFilters) -> bool:
    """Whether the filters let this document in (as the stores' SQL does, for reads that list
    documents instead of searching them)."""
    f = filters
    if f.kinds and document.kind not in f.kinds:
        return False
    if any(t not in document.tags for t in f.tags):
        return False
    if f.document_ids and document.id not in f.document_ids:
        return False
    if f.created_after and document.created_at < f.created_after:
        return False
    if f.created_before and document.created_at >= f.created_before:
        return False
    if f.name:
        names = [document.name, document.title or ""]
        if any(ch in f.name for ch in "*?["):
            return any(fnmatch.fnmatchcase(n, f.name) for n in names)
        return f.name in names
    return True


def _date(which: str, value: str | None) -> dt.datetime | None:
    if value is None:
        return None
    try:
        parsed = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise InvalidInput(
            f"{which}: {value!r} is not a date; use YYYY-MM-DD (or an ISO date and time)"
        ) from None
    return parsed.replace(tzinfo=None)
