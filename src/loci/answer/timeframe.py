"""Plain time phrases in a question ("this week", "last month", "recently") as a date range.

Rules only, so the same question always gets the same range. The range applies to when a
document was added to the brain (the only date every document has), as `[after, before)` in
ISO dates. Used only when the caller gave no explicit dates.

Only phrases relative to now are read: in a second brain "what did I save this week" is about
the person's own recent adding. A named year or month ("what happened in 2023", "the March 2024
decision") is almost always about when the content happened, not when it was kept, so it is
left to the search terms; a caller who means the date added says so with explicit dates.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

RECENT_DAYS = 30

# Most specific first: "last 3 months" must not be read as "last month".
TODAY = re.compile(r"\btoday\b", re.I)
YESTERDAY = re.compile(r"\byesterday\b", re.I)
THIS = re.compile(r"\bthis (week|month|year)\b", re.I)
LAST = re.compile(r"\b(?:last|previous|past) (week|month|year)\b", re.I)
LAST_N = re.compile(r"\b(?:last|past) (\d{1,3}) (days?|weeks?|months?)\b", re.I)
RECENTLY = re.compile(
    r"\b(recently|lately|recent (?:notes?|documents?|files?|pages?|uploads?))\b", re.I
)


@dataclass(frozen=True)
class TimeRange:
    after: str | None  # ISO date, inclusive
    before: str | None  # ISO date, exclusive
    phrase: str  # the words it was read from, as the question has them


def time_range(question: str, today: dt.date | None = None) -> TimeRange | None:
    """The date range a question's time phrase names, or None."""
    day = today or dt.date.today()
    if m := TODAY.search(question):
        return _range(day, day + dt.timedelta(days=1), m)
    if m := YESTERDAY.search(question):
        return _range(day - dt.timedelta(days=1), day, m)
    if m := LAST_N.search(question):
        count, unit = int(m.group(1)), m.group(2).lower().rstrip("s")
        days = count * {"day": 1, "week": 7, "month": 30}[unit]
        return TimeRange((day - dt.timedelta(days=days)).isoformat(), None, m.group(0))
    if m := THIS.search(question):
        start = _start_of(m.group(1).lower(), day)
        return _range(start, _next(m.group(1).lower(), start), m)
    if m := LAST.search(question):
        unit = m.group(1).lower()
        end = _start_of(unit, day)
        return _range(_start_of(unit, end - dt.timedelta(days=1)), end, m)
    if m := RECENTLY.search(question):
        return TimeRange((day - dt.timedelta(days=RECENT_DAYS)).isoformat(), None, m.group(0))
    return None


def _range(after: dt.date, before: dt.date, match: re.Match[str]) -> TimeRange:
    return TimeRange(after.isoformat(), before.isoformat(), match.group(0))


def _start_of(unit: str, day: dt.date) -> dt.date:
    if unit == "week":  # weeks start on Monday (ISO 8601)
        return day - dt.timedelta(days=day.weekday())
    if unit == "month":
        return day.replace(day=1)
    return day.replace(month=1, day=1)


def _next(unit: str, start: dt.date) -> dt.date:
    if unit == "week":
        return start + dt.timedelta(days=7)
    if unit == "month":
        return dt.date(start.year + start.month // 12, start.month % 12 + 1, 1)
    return dt.date(start.year + 1, 1, 1)
