"""Dates as keys that match whatever way they are written.

"How much gas did we use in February 2026?" is answered by a table row that says `2026-02`, and
"Wann ist der Termin am 3. Oktober?" by a note that says `03.10.` — the same day in other words.
Matching words alone misses them, so a date in a question or a passage also yields keys in one
form: `2026-02` for a month of a year, `2026-02-14` for a day, `02-14` for a day without its year.
Month names are read in English, German, French, Spanish and Italian, whole or abbreviated.
"""

from __future__ import annotations

import re

_MONTH_NAMES: dict[int, tuple[str, ...]] = {
    1: ("january", "jan", "januar", "jänner", "janvier", "janv", "enero", "ene", "gennaio", "gen"),
    2: ("february", "feb", "februar", "février", "fevrier", "févr", "fevr", "febrero", "febbraio"),
    3: ("march", "mar", "märz", "maerz", "mars", "marzo"),
    4: ("april", "apr", "avril", "avr", "abril", "abr", "aprile"),
    5: ("may", "mai", "mayo", "maggio", "mag"),
    6: ("june", "jun", "juni", "juin", "junio", "giugno", "giu"),
    7: ("july", "jul", "juli", "juillet", "juil", "julio", "luglio", "lug"),
    8: ("august", "aug", "août", "aout", "agosto", "ago"),
    9: ("september", "sep", "sept", "septembre", "septiembre", "settembre", "set"),
    10: ("october", "oct", "oktober", "okt", "octobre", "octubre", "ottobre", "ott"),
    11: ("november", "nov", "novembre", "noviembre"),
    12: ("december", "dec", "dezember", "dez", "décembre", "decembre", "déc", "diciembre", "dic"),
}
_MONTH = {name: number for number, names in _MONTH_NAMES.items() for name in names}
_NAME = "|".join(sorted((re.escape(n) for n in _MONTH), key=len, reverse=True))
_DAY = r"(?P<day>[0-3]?\d)(?:\.|er|st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_PATTERNS = (
    # 2026-02-14, 2026-02, 2026/02/14
    re.compile(
        r"(?<!\d)(?P<year>(?:19|20)\d\d)[-/](?P<month>[01]?\d)(?:[-/](?P<day>[0-3]?\d))?(?!\d)"
    ),
    # 14.02.2026, 14/02/2026, 14.2.26 (day first, as Europe writes it), 03.10.
    re.compile(
        r"(?<![\d.])(?P<day>[0-3]?\d)[./](?P<month>[01]?\d)[./](?P<year>(?:19|20)?\d\d)?(?![\d])"
    ),
    # 14 February 2026, 3. Oktober, 1er mai 2026, 3 Feb. 2027
    re.compile(rf"(?<!\w){_DAY}\s+(?P<name>{_NAME})\.?(?:\s+{_YEAR})?(?!\w)", re.I),
    # February 14, 2026; February 2026; Februar 2026
    re.compile(
        rf"(?<!\w)(?P<name>{_NAME})\.?(?:\s+(?P<day>[0-3]?\d)(?:st|nd|rd|th)?,?)?\s+{_YEAR}(?!\w)",
        re.I,
    ),
)


def date_keys(text: str) -> set[str]:
    """The dates `text` writes, as keys: 'YYYY-MM', 'YYYY-MM-DD' and 'MM-DD' as known."""
    keys: set[str] = set()
    for pattern in _PATTERNS:
        for found in pattern.finditer(text):
            parts = found.groupdict()
            month = _MONTH.get(parts["name"].lower()) if parts.get("name") else None
            if month is None and parts.get("month"):
                month = int(parts["month"])
            if month is None or not 1 <= month <= 12:
                continue
            year = parts.get("year")
            if year and len(year) == 2:
                year = "20" + year
            day = int(parts["day"]) if parts.get("day") else None
            if day is not None and not 1 <= day <= 31:
                continue
            if year:
                keys.add(f"{year}-{month:02d}")
                if day:
                    keys.add(f"{year}-{month:02d}-{day:02d}")
            if day:
                keys.add(f"{month:02d}-{day:02d}")
    return keys
