"""The one rule for the names people give brains and users — letters of any script, digits,
'.', '_' and '-' (`loci.api.schemas.common.BRAIN_NAME` is its pattern for the API's schema; a
URL carries a name percent-encoded) — and the one way two user names are compared
(`user_key`). Names others choose and a person reads, like an OAuth application's on the
consent page (`loci.auth.oauth.clients`), are held to its parts: nothing `HIDDEN`, and no word
mixing alphabets (`one_script`)."""

from __future__ import annotations

import unicodedata

import regex

from loci.errors import InvalidInput

# A letter or digit of any script, then letters, combining marks (a Devanagari vowel sign, a
# Thai tone mark), digits, '.', '_' or '-': 64 characters at most.
NAME_PATTERN = regex.compile(r"[\p{L}\p{Nd}][\p{L}\p{M}\p{Nd}._-]{0,63}")
# The same rule for JSON Schema (the HTTP API's and MCP's tool arguments; the length is theirs).
NAME_SCHEMA_PATTERN = r"^[\p{L}\p{Nd}][\p{L}\p{M}\p{Nd}._-]*$"
# Scripts that may share a name with Latin letters, as Unicode's "highly restrictive" level
# (UTS #39) allows: Japanese and Korean are written with Han and kana or Hangul, often beside
# Latin words. Latin with Cyrillic or Greek is refused: 'pаypal' with a Cyrillic 'а' is
# another name that looks the same.
_JAPANESE = frozenset({"Han", "Hiragana", "Katakana", "Latin"})
_KOREAN = frozenset({"Han", "Hangul", "Latin"})
_CHINESE = frozenset({"Han", "Bopomofo", "Latin"})
_SCRIPTS = (
    "Latin", "Cyrillic", "Greek", "Armenian", "Georgian", "Hebrew", "Arabic", "Syriac",
    "Thaana", "Devanagari", "Bengali", "Gurmukhi", "Gujarati", "Oriya", "Tamil", "Telugu",
    "Kannada", "Malayalam", "Sinhala", "Thai", "Lao", "Tibetan", "Myanmar", "Khmer",
    "Ethiopic", "Mongolian", "Han", "Hiragana", "Katakana", "Hangul", "Bopomofo",
)  # fmt: skip
_SCRIPT_OF = {name: regex.compile(rf"\p{{Script={name}}}") for name in _SCRIPTS}
# What shows nothing, or changes how the text around it is shown: control and format characters
# (bidirectional overrides and isolates, which make "\u202eedualC" read "Claude"; zero-width
# spaces and joiners; the soft hyphen), surrogate, private-use and unassigned code points, line
# and paragraph separators, and whatever else Unicode draws as nothing (Hangul fillers,
# variation selectors).
HIDDEN = regex.compile(
    r"[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]"
)


# Accents, not the vowel signs and viramas of Indic or Thai words, which change the word.
_ACCENTS = regex.compile("[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]")


def check_name(kind: str, name: str) -> str:
    """`name` if it is a valid brain or user name. Names are kept as they were typed, so
    they must already be in their compatibility form (NFKC): 'ｍｙ' is asked for as 'my'."""
    normal = unicodedata.normalize("NFKC", name)
    if name != normal and NAME_PATTERN.fullmatch(normal):
        raise InvalidInput(f"{kind} name {name!r} must be written {normal!r}")
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidInput(
            f"{kind} name {name!r} must be 1–64 letters, digits, '.', '_' or '-',"
            " starting with a letter or digit"
        )
    if not one_script(name):
        raise InvalidInput(
            f"{kind} name {name!r} mixes alphabets (Latin with Cyrillic or Greek, say): a name"
            " that looks like another must not be another"
        )
    return name


def one_script(word: str) -> bool:
    """Whether the letters of `word` are of one script, or of a mix a language is written in."""
    scripts = {script for script, p in _SCRIPT_OF.items() for c in word if p.match(c)}
    if len(scripts) <= 1:
        return True
    return any(scripts <= allowed for allowed in (_JAPANESE, _KOREAN, _CHINESE))


def user_key(name: str) -> str:
    """The form in which user names are looked up, kept unique and counted by the sign-in
    limiter: NFKC, case folded, accents dropped.

    Computed here, once, and never by a database: SQLite's NOCASE folds ASCII only, and
    PostgreSQL's `lower()` follows the server's locale (`lower('İ')` is `i` there, while
    Python's casefold makes it `i` + a combining dot), so letting each side fold its own way
    gave one person several names — and several budgets of failed sign-ins. The key is stored
    beside the name (`users.name_key`, unique), so 'Jürgen', 'JÜRGEN' and 'jurgen' are one
    user on every backend; a key outside the name alphabet means no one.
    """
    folded = unicodedata.normalize("NFKC", name).casefold()
    bare = _ACCENTS.sub("", unicodedata.normalize("NFKD", folded))
    return unicodedata.normalize("NFC", bare)


def is_user_key(key: str) -> bool:
    """Whether a stored user could have this key (if not, a look-up can stop here)."""
    return NAME_PATTERN.fullmatch(key) is not None
