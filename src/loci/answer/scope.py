"""Where an answer may look: the filters every search of one ask applies, checked, with the
dates a question's time phrase names when the caller gave none, and the words that tell a
reader what was searched when nothing was found."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field, replace

from loci.answer.events import Scoped
from loci.answer.timeframe import time_range
from loci.models import SearchFilters
from loci.search.filters import check_filters

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

    def event(self, brains: list[str]) -> Scoped:
        return Scoped(tuple(brains), self.filters, self.from_question, self.describe())


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


def _day_before(iso: str) -> str | None:
    """The last day of a range whose end is an exclusive date ("before 2025-02-01" →
    2025-01-31); None for a date and time."""
    try:
        return (dt.date.fromisoformat(iso) - dt.timedelta(days=1)).isoformat()
    except ValueError:
        return None
