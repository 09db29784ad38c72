"""Where an answer may look: the filters every search of one ask applies, checked, with the
dates a question's time phrase names when the caller gave none, and the words that tell a
reader what was searched when nothing was found."""

from __future__ import annotations

import datetime as dt
import fnmatch
from dataclasses import dataclass, field, replace
from typing import Any, get_args

from loci.answer.timeframe import time_range
from loci.errors import InvalidInput
from loci.models import Document, DocumentKind, SearchFilters

KINDS: tuple[str, ...] = get_args(DocumentKind)
MAX_TAGS = 20
MAX_NAME = 300
KIND_WORDS = {
    "file": "files",
    "web": "web pages",
    "note": "notes",
    "page": "brain pages",
    "evidence": "evidence records",
    "item": "captured items",
}


@dataclass(frozen=True)
class Scope:
    filters: SearchFilters = field(default_factory=SearchFilters)
    from_question: str | None = None  # the time phrase the dates were read from, if they were

    def describe(self) -> str:
        """ "notes tagged travel, added from 2025-01-01 to 2025-01-31" — what was searched."""
        f = self.filters
        what = " or ".join(KIND_WORDS.get(k, k) for k in f.kinds) if f.kinds else "documents"
        parts = [what]
        if f.name:
            parts.append(f"named {f.name}")
        if f.tags:
            parts.append("tagged " + ", ".join(f.tags))
        last = _day_before(f.created_before) if f.created_before else None
        if f.created_after and last:
            span = f"on {last}" if last == f.created_after else f"from {f.created_after} to {last}"
            parts.append(f"added {span}")
        elif f.created_after:
            parts.append(f"added since {f.created_after}")
        if f.created_before and not (f.created_after and last):
            parts.append(f"added before {f.created_before}")
        words = " ".join(parts)
        return f"{words} ({self.from_question!r} in the question)" if self.from_question else words

    def event(self, brains: list[str]) -> dict[str, Any]:
        f = self.filters
        return {
            "brains": brains,
            "filters": {
                "name": f.name,
                "kinds": list(f.kinds),
                "tags": list(f.tags),
                "created_after": f.created_after,
                "created_before": f.created_before,
            },
            "from_question": self.from_question,
            "description": self.describe(),
        }


def scope_for(
    question: str, filters: SearchFilters | None = None, today: dt.date | None = None
) -> Scope:
    """The caller's filters, checked; without explicit dates, a time phrase in the question
    ("last month", "in 2025") becomes the date range."""
    filters = filters or SearchFilters()
    check_filters(filters)
    if filters.created_after or filters.created_before:
        return Scope(filters)
    found = time_range(question, today)
    if found is None:
        return Scope(filters)
    dated = replace(filters, created_after=found.after, created_before=found.before)
    return Scope(dated, found.phrase)


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


def _day_before(iso: str) -> str | None:
    """The last day of a range whose end is an exclusive date ("before 2025-02-01" →
    2025-01-31); None for a date and time."""
    try:
        return (dt.date.fromisoformat(iso) - dt.timedelta(days=1)).isoformat()
    except ValueError:
        return None
