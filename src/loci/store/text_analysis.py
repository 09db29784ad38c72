"""The one step every text takes before a BM25 tokenizer sees it, on both backends, written
or asked: Unicode normalisation and segmentation of the scripts written without spaces.

FTS5's `unicode61` tokenizer (and PostgreSQL's parser) split at spaces and punctuation, so a
Japanese or Chinese sentence was one token and a search for a phrase inside it found nothing.
Here each run of Han, Hiragana, Katakana or Hangul becomes its overlapping character bigrams,
as Lucene's CJK analyzer does (a lone character stays a unigram), and each run of Thai, Lao,
Khmer or Myanmar becomes overlapping bigrams of its grapheme clusters (a consonant with its
vowel and tone marks), a fallback that needs no dictionary. The bigrams are joined by spaces,
so the tokenizer downstream takes each as one token; the FTS table is contentless, so what it
indexes may differ from the chunk text it points at.

Before that, NFKC folds full-width and half-width forms and compatibility characters
(`ＡＢＣ` → `ABC`, `ｶﾀｶﾅ` → `カタカナ`, `ﬁ` → `fi`), and Arabic and Hebrew vowel points
are dropped (as Lucene's Arabic normaliser does): they are optional in writing, so a query
without them must match a text with them. ASCII text is returned as it is: English is
indexed exactly as before.
"""

from __future__ import annotations

import re
import unicodedata

# Han (with its radicals, symbols 々〆〇, compatibility and extension planes), kana (with the
# prolonged sound mark), Bopomofo and Hangul: scripts Lucene's CJK bigram filter pairs.
_CJK = (
    "\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u3038-\u303c"
    "\u3041-\u3096\u3099-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3100-\u312f\u3131-\u318e"
    "\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7a3"
    "\ud7b0-\ud7ff\uf900-\ufaff\U00020000-\U0003134f"
)
# Letters, marks and digits of Thai, Lao, Myanmar and Khmer (their punctuation left out).
_SOUTHEAST = (
    "\u0e01-\u0e2e\u0e30-\u0e4e\u0e50-\u0e59\u0e81-\u0ec6\u0ec8-\u0ece\u0ed0-\u0edf"
    "\u1000-\u1049\u1050-\u109f\ua9e0-\ua9fe\uaa60-\uaa7f\u1780-\u17d3\u17d7\u17dc\u17dd"
    "\u17e0-\u17e9\u19e0-\u19ff"
)
_RUN = re.compile(f"[{_CJK}]+|[{_SOUTHEAST}]+")
_STACKERS = frozenset("\u17d2\u1039")
_CJK_CHAR = re.compile(f"[{_CJK}]")
# Arabic harakat, superscript alef and tatweel; Hebrew points and cantillation.
_POINTS = re.compile("[\u064b-\u065f\u0670\u0640\u0591-\u05bd\u05bf\u05c1\u05c2\u05c4\u05c5\u05c7]")


def normalize(text: str) -> str:
    """NFKC, without Arabic and Hebrew vowel points."""
    if text.isascii():
        return text
    return _POINTS.sub("", unicodedata.normalize("NFKC", text))


def is_normal(text: str) -> bool:
    """Whether `normalize` leaves `text` as it is (so each of its characters maps to itself):
    most text, accents and curly quotes included, is already in NFKC."""
    return text.isascii() or (
        unicodedata.is_normalized("NFKC", text) and _POINTS.search(text) is None
    )


def segment(text: str) -> str:
    """`text` as the BM25 tokenizer should see it: normalised, each space-less run as its
    bigrams separated by spaces (surrounded by spaces, so it never joins a neighbour)."""
    if text.isascii():
        return text
    return _RUN.sub(_bigrams, normalize(text))


def is_segmented(term: str) -> bool:
    """Whether `term` is written in a script `segment` cuts into bigrams."""
    return _RUN.search(term) is not None


def _bigrams(match: re.Match[str]) -> str:
    run = match.group()
    units = list(run) if _CJK_CHAR.match(run) else _clusters(run)
    if len(units) == 1:
        return f" {units[0]} "
    return " " + " ".join(a + b for a, b in zip(units, units[1:], strict=False)) + " "


def _clusters(run: str) -> list[str]:
    """Grapheme clusters, near enough for these scripts: a base letter with the marks after it
    (a mark at the start stands alone)."""
    units: list[str] = []
    for char in run:
        stacked = units and units[-1][-1] in _STACKERS  # Khmer coeng, Myanmar virama
        if units and (stacked or unicodedata.category(char).startswith("M")):
            units[-1] += char
        else:
            units.append(char)
    return units
