"""The sentences of a passage, as a reader sees them.

A full stop does not end a sentence after "Dr.", "Prof. K.", "3 Feb.", "No. 4" or "e.g.", nor in
"10.30" or "2.5.1": cutting there turned an answer into "Next check-up with Dr. [1]". The cutting
is done by a maintained segmenter, `sentencex` (Wikimedia's rules and abbreviation lists for some
250 languages, with fallbacks between related ones), inside the lines a passage is made of: a new
line ends a sentence too, so a list item or a table row is never glued to the next one.

The rules are those of the passage's own language when the caller knows it (Loci detects it per
passage): German's keep "am 3. Oktober" whole, where English's cut after "3.". Without it, the
language is read from the text's script (kana: Japanese, Hangul: Korean, Han: Chinese, Cyrillic:
Russian, …) and Latin-script text is segmented with English rules, whose abbreviations ("Dr.",
"e.g.", initials) serve most European languages better than none.

No segmenter is right every time, so two of its cuts are undone where the text says they are
wrong, in any language: one with no space after it ("FRITZ!Box", "Yahoo!Mail": a sentence ends
before a space or a line's end), and, in the languages that write ordinals with a full stop
(German, the Nordic and most Central European languages: "am 14. November", "der 2. Stock"),
one right after a day or an ordinal's number.
"""

from __future__ import annotations

import re
import unicodedata
from functools import cache

# The first script found decides; a few letters of another script (a name, a unit) do not.
_SCRIPTS: tuple[tuple[str, str], ...] = (
    ("HIRAGANA", "ja"),
    ("KATAKANA", "ja"),
    ("HANGUL", "ko"),
    ("CJK", "zh"),
    ("THAI", "th"),
    ("ARABIC", "ar"),
    ("HEBREW", "he"),
    ("DEVANAGARI", "hi"),
    ("CYRILLIC", "ru"),
    ("GREEK", "el"),
)
_SAMPLE = 400  # characters looked at to tell the script
# After "。", "！" or "？", unless a closing quote or bracket (or another stop) follows it.
_IDEOGRAPHIC_STOPS = "。！？"
# Languages whose ordinals (and days of the month) are written with a full stop: "3. Oktober".
ORDINAL_DOT = frozenset(
    {"de", "da", "nb", "nn", "no", "is", "fo", "fi", "et", "lv", "lt", "cs", "sk", "pl", "sl",
     "hr", "bs", "sr", "hu", "tr"}
)  # fmt: skip
_ORDINAL_END = re.compile(r"(?<![\d.,])\b\d{1,3}\.\s*$")
_IDEOGRAPHIC_END = re.compile(r"(?<=[。！？])(?![。！？」』）】”’\]\)\s]|$)")


def split_sentences(text: str, language: str | None = None) -> list[str]:
    """The sentences of `text`, stripped, in order; `language` (an ISO 639 code) overrides the
    guess from the script."""
    from sentencex import segment  # a compiled extension: loaded on first use, not at start-up

    lang = language or script_language(text)
    pieces: list[str] = []
    for piece in segment(lang, text):
        # An ideographic full stop always ends a sentence; the segmenter misses one followed by
        # a Latin word ("…付けられます。aliasコマンドで…").
        pieces += [part for part in _IDEOGRAPHIC_END.split(piece) if part]
    found: list[str] = []
    for piece in pieces:
        if found and _wrong_cut(found[-1], piece, lang):
            found[-1] += piece
        else:
            found.append(piece)
    return [stripped for piece in found if (stripped := piece.strip())]


def _wrong_cut(before: str, after: str, language: str) -> bool:
    """Whether a cut between `before` and `after` (as the segmenter left them, spaces kept)
    cannot be a sentence's end: nothing separates them (an ideographic stop needs no space),
    or the dot it follows is a number's, in a language that writes ordinals so."""
    if not before[-1:].isspace() and not after[:1].isspace():
        return before[-1:] not in _IDEOGRAPHIC_STOPS
    return language in ORDINAL_DOT and bool(_ORDINAL_END.search(before))


def script_language(text: str) -> str:
    """A language whose sentence rules fit the text's script ("en" for Latin script)."""
    counts: dict[str, int] = {}
    for ch in text[:_SAMPLE]:
        if ch.isalpha() and ord(ch) > 0x24F:
            lang = _language_of(ch)
            if lang:
                counts[lang] = counts.get(lang, 0) + 1
    letters = sum(1 for ch in text[:_SAMPLE] if ch.isalpha())
    if not counts or max(counts.values()) * 5 < letters:
        return "en"
    if counts.get("ja"):  # Japanese mixes kana with Han; Chinese has no kana
        return "ja"
    return max(counts, key=lambda lang: counts[lang])


@cache
def _language_of(ch: str) -> str | None:
    name = unicodedata.name(ch, "")
    for script, lang in _SCRIPTS:
        if name.startswith(script):
            return lang
    return None
