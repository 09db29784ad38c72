"""The period a digest covers: `7d`, `24h`, `2w` back from now, or since a date (`2026-11-01`).

Every timestamp Loci keeps is UTC ISO text; a period is `[start, end)` in UTC. A digest page's id
comes from the period's dates, so the same period saved twice (the same day's weekly run, say)
lands on the same page.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from loci.errors import InvalidInput

RELATIVE = re.compile(r"^(\d{1,4})\s*([hdw])$")
UNIT_HOURS = {"h": 1, "d": 24, "w": 24 * 7}
MAX_HOURS = 24 * 366 * 5  # `9999d` is a typo, not a review; a date may go back any way
DEFAULT = "7d"


@dataclass(frozen=True)
class Period:
    start: dt.datetime  # UTC, inclusive
    end: dt.datetime  # UTC, exclusive
    since: str  # as the caller wrote it

    def contains(self, timestamp: str | None) -> bool:
        moment = parse_timestamp(timestamp)
        return moment is not None and self.start <= moment < self.end

    @property
    def first_day(self) -> str:
        return self.start.date().isoformat()

    @property
    def last_day(self) -> str:
        return (self.end - dt.timedelta(microseconds=1)).date().isoformat()

    def describe(self) -> str:
        if self.first_day == self.last_day:
            return self.first_day
        return f"{self.first_day} to {self.last_day}"


def period_since(since: str | None, now: dt.datetime | None = None) -> Period:
    """The period from `since` (default 7d) until `now`; a clear `InvalidInput` otherwise."""
    text = (since or DEFAULT).strip().lower()
    end = now or dt.datetime.now(dt.UTC)
    relative = RELATIVE.match(text)
    if relative:
        hours = int(relative.group(1)) * UNIT_HOURS[relative.group(2)]
        if not 0 < hours <= MAX_HOURS:
            raise InvalidInput(f"--since {since!r} is out of range: from 1h to five years")
        return Period(end - dt.timedelta(hours=hours), end, text)
    try:
        day = dt.date.fromisoformat(text)
    except ValueError:
        raise InvalidInput(
            f"since {since!r} is not a period: use 24h, 7d, 2w or a date like 2026-11-01"
        ) from None
    start = dt.datetime.combine(day, dt.time(), dt.UTC)
    if start >= end:
        raise InvalidInput(f"--since {since!r} is not in the past")
    return Period(start, end, text)


def parse_timestamp(value: str | None) -> dt.datetime | None:
    """A stored ISO date or time as an aware UTC datetime (a bare date is its midnight)."""
    if not value:
        return None
    try:
        moment = dt.datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment.replace(tzinfo=dt.UTC) if moment.tzinfo is None else moment.astimezone(dt.UTC)
