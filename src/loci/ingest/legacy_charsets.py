"""Which legacy 8-bit code page a text that is not UTF-8 is written in, by what its letters say.

A statistical guesser needs many non-ASCII bytes to tell code pages apart, and a short note has
a handful: charset-normalizer read "Café Zürich" in a 283-byte cp1252 note as a Baltic code page
("Cafķ Z³rich"). Most legacy text is in a few code pages (Western, Central European, Cyrillic,
Greek, Turkish), so each of those is tried and its decoding judged the way a reader would:

- every non-ASCII letter belongs to the alphabet of a language written in that code page, and
  few languages are needed to cover them all ("é" and "ü" are both French; "ø", "è" and "ů"
  together are no language's);
- no symbol sits between two letters ("Z³rich", "Za¿ó³æ" are Polish read as cp1252), and no
  word mixes scripts ("CAFи" is French read as cp1251);
- no word switches from lower to upper case mid-way, and most letters are lower case ("пРИВЕТ"
  and "ПРИВЕТ" are KOI8-R's "Привет" and "привет" read as cp1251);
- no Latin word has three accented letters in a row (Greek or Cyrillic read as Latin).

The plausible decoding that needs the fewest languages wins, in the order of `_CANDIDATES` on a
tie. When no decoding is plausible the answer is None and the caller guesses statistically.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_FRENCH = "àâæçéèêëîïôœùûüÿ"
_GERMAN = "äöüß"
_WESTERN: dict[str, str] = {
    "french": _FRENCH,
    "german": _GERMAN,
    "spanish": "áéíñóúü",
    "portuguese": "áàâãçéêíóôõú",
    "italian": "àèéìíîòóù",
    "catalan": "àçèéíïòóúü",
    "dutch": "áéëïóöüè",
    "danish": "åæøé",
    "swedish": "åäöé",
    "finnish": "åäöšž",
    "icelandic": "áæðéíóöúýþ",
}
_CENTRAL: dict[str, str] = {
    "polish": "ąćęłńóśźż",
    "czech": "áčďéěíňóřšťúůýž",
    "slovak": "áäčďéíĺľňóôŕšťúýž",
    "hungarian": "áéíóöőúüű",
    "croatian": "čćđšž",
    "romanian": "ăâîşţșț",
    "german": _GERMAN,
}
_RUSSIAN = "абвгдежзийклмнопрстуфхцчшщъыьэюяё"
_CYRILLIC: dict[str, str] = {
    "russian": _RUSSIAN,
    "ukrainian": "абвгґдеєжзиіїйклмнопрстуфхцчшщьюя",
    "belarusian": "абвгдеёжзійклмнопрстуўфхцчшыьэюя",
    "bulgarian": "абвгдежзийклмнопрстуфхцчшщъьюя",
    "serbian": "абвгдђежзијклљмнњопрстћуфхцчџш",
}
_GREEK: dict[str, str] = {"greek": "αβγδεζηθικλμνξοπρσςτυφχψωάέήίόύώϊϋΐΰ"}
_TURKISH: dict[str, str] = {"turkish": "çğıöşüâîû", **_WESTERN}

# Tried in this order; on a tie the earlier wins, so Western text stays cp1252 whenever a
# Central European or Turkish reading is no more plausible.
_CANDIDATES: tuple[tuple[str, dict[str, str]], ...] = (
    ("cp1252", _WESTERN),
    ("cp1250", _CENTRAL),
    ("iso-8859-2", _CENTRAL),
    ("cp1251", _CYRILLIC),
    ("koi8-r", _CYRILLIC),
    ("cp1254", _TURKISH),
    ("cp1253", _GREEK),
)
# Non-letters that may stand between two letters: apostrophes, Catalan's middle dot, dashes and
# the soft hyphen.
_INSIDE_WORDS = frozenset("’‘·–—\u00ad")
_HARD = 3  # what one implausible character costs, against 1 for each extra language needed
_MAX_LANGUAGES = 2
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_SAMPLE = 64 * 1024  # enough letters to judge; keeps a large file cheap


@dataclass(frozen=True)
class _Verdict:
    encoding: str
    cost: int
    plausible: bool


def plausible_decoding(data: bytes) -> str | None:
    """The name of the code page `data` reads most plausibly in, or None if none fits."""
    sample = data[:_SAMPLE]
    best: _Verdict | None = None
    for encoding, languages in _CANDIDATES:
        verdict = _judge(sample, encoding, languages)
        if verdict is None or not verdict.plausible:
            continue
        if best is None or verdict.cost < best.cost:
            best = verdict
    return best.encoding if best is not None else None


def _judge(sample: bytes, encoding: str, languages: dict[str, str]) -> _Verdict | None:
    try:
        text = sample.decode(encoding)
    except UnicodeDecodeError:
        # A multi-byte character cut by the sample's end is not the code page's fault, but a
        # single-byte code page has no such thing: an undefined byte rules it out.
        return None
    if any(0x80 <= ord(c) <= 0x9F for c in text):
        return None  # C1 control characters are never text
    hard = upper = lower = 0
    letters: set[str] = set()
    for match in _NON_ASCII.finditer(text):
        i, char = match.start(), match.group()
        if char.isalpha():
            letters.add(char.lower())
            upper += char.isupper()
            lower += char.islower()
            hard += _case_break(text, i) + _accent_run(text, i) + _script_break(text, i)
        elif char not in _INSIDE_WORDS and _between_letters(text, i):
            hard += 1
    alphabet = set("".join(languages.values()))
    foreign = {c for c in letters if c not in alphabet}
    hard += len(foreign)
    needed = _languages_needed(letters - foreign, languages)
    # Shouting is rarer than prose: a reading in capitals loses a tie to one in lower case.
    cost = _HARD * hard + max(0, needed - 1) + int(upper > lower)
    return _Verdict(encoding, cost, plausible=hard == 0 and needed <= _MAX_LANGUAGES)


def _between_letters(text: str, i: int) -> bool:
    return 0 < i < len(text) - 1 and text[i - 1].isalpha() and text[i + 1].isalpha()


def _case_break(text: str, i: int) -> int:
    """1 if the letter at `i` is upper case right after a lower-case letter ("пРИВЕТ")."""
    return int(i > 0 and text[i].isupper() and text[i - 1].islower())


def _script_break(text: str, i: int) -> int:
    """1 if the letter at `i` touches a letter of another script ("CAFи", "Zaї")."""
    script = _script(text[i])
    return int(
        any(
            0 <= j < len(text) and text[j].isalpha() and _script(text[j]) != script
            for j in (i - 1, i + 1)
        )
    )


def _script(char: str) -> str:
    return unicodedata.name(char, "").split(" ", 1)[0]


def _accent_run(text: str, i: int) -> int:
    """1 where a third non-ASCII Latin letter in a row ends (Greek or Cyrillic read as Latin)."""
    if i < 2 or not _latin(text[i]):
        return 0
    return int(all(not c.isascii() and c.isalpha() and _latin(c) for c in text[i - 2 : i]))


def _latin(char: str) -> bool:
    return _script(char) == "LATIN"


def _languages_needed(letters: set[str], languages: dict[str, str]) -> int:
    """How many of `languages` it takes to cover `letters` (greedy: small sets, close enough)."""
    left = set(letters)
    needed = 0
    while left:
        covered = max((left & set(alphabet) for alphabet in languages.values()), key=len)
        if not covered:
            return needed + len(left)
        left -= covered
        needed += 1
    return needed
