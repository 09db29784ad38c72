"""Plain time phrases in a question ("this week", "last month", "in 2025") as a date range.

Rules only, so the same question always gets the same range. The range applies to when a
document was added to the brain (the only date every document has), as `[after, before)` in
ISO dates. Used only when the caller gave no explicit dates.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

MONTHS = (
    "january", "february", "march", "april", "may", "june", "july", "august", "september",
    "october", "november", "december",
)  # fmt: skip
RECENT_DAYS = 30

# Most specific first: "last month" must not be read as "month", "in March 2025" not as "2025".
TODAY = re.compile(r"\btoday\b", re.I)
YESTERDAY = re.compile(r"\byesterday\b", re.I)
THIS = re.compile(r"\bthis (week|month|year)\b", re.I)
LAST = re.compile(r"\b(?:last|previous|past) (week|month|year)\b", re.I)
LAST_N = re.compile(r"\b(?:last|past) (\d{1,3}) (days?|weeks?|months?)\b", re.I)
RECENTLY = re.compile(
    r"\b(recently|lately|recent (?:notes?|documents?|files?|pages?|uploads?))\b", re.I
)
MONTH_YEAR = re.compile(
    r"\b(?:in|during|from|since) (" + "|".join(MONTHS) + r")(?: of)? ((?:19|20)\d\d)\b", re.I
)
YEAR = re.compile(r"\b(?:in|during|from|throughout) ((?:19|20)\d\d)\b", re.I)


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
    if m := MONTH_YEAR.search(question):
        start = dt.date(int(m.group(2)), MONTHS.index(m.group(1).lower()) + 1, 1)
        return _range(start, _next("month", start), m)
    if m := YEAR.search(question):
        start = dt.date(int(m.group(1)), 1, 1)
        return _range(start, dt.date(start.year + 1, 1, 1), m)
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
