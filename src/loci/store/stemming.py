"""The terms BM25 counts: text analysed and stemmed in its language, the same on both backends.

Every text goes through one function, `analyze`, before any BM25 sees it: the SQLite store's
FTS5 table (contentless, so it holds the analysed text and its own tokenizer, `unicode61`
without a stemmer, only splits it again), the in-memory BM25 index and PostgreSQL's term
counts. Because the stemmer runs in Python for both backends, they count the same terms and
rank alike whatever the language.

- English ('english') is stemmed by FTS5's own Porter tokenizer, through APSW, exactly as
  before stemming followed the language: an English brain's terms (and its SciFact figures)
  are unchanged. Snowball's 'english' (Porter2) differs from it on words like "technology".
- Any other language with a Snowball stemmer is stemmed by it (PyStemmer, the C library's
  binding) after `unicode61` has split, lowercased and folded the diacritics of the text.
- 'simple' stems nothing.

A brain's language is 'auto' (each passage is stemmed in the language detected for it; one
without a detected language, or in a language Snowball has no stemmer for, as English: its
Latin words are most likely English, and Porter leaves other scripts alone) or one stemmer
for all of its text, chosen with `loci reindex --language`.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence

import apsw
import Stemmer

from loci.errors import InvalidInput
from loci.models import IndexedChunk
from loci.store.text_analysis import segment

AUTO = "auto"
ENGLISH = "english"
SIMPLE = "simple"

# ISO 639-1 codes (what the language detector gives) to Snowball's algorithm names.
SNOWBALL = {
    "ar": "arabic",
    "ca": "catalan",
    "cs": "czech",
    "da": "danish",
    "de": "german",
    "el": "greek",
    "en": ENGLISH,
    "eo": "esperanto",
    "es": "spanish",
    "et": "estonian",
    "eu": "basque",
    "fa": "persian",
    "fi": "finnish",
    "fr": "french",
    "ga": "irish",
    "hi": "hindi",
    "hu": "hungarian",
    "hy": "armenian",
    "id": "indonesian",
    "it": "italian",
    "lt": "lithuanian",
    "nb": "norwegian",
    "ne": "nepali",
    "nl": "dutch",
    "nn": "norwegian",
    "no": "norwegian",
    "pl": "polish",
    "pt": "portuguese",
    "ro": "romanian",
    "ru": "russian",
    "sr": "serbian",
    "sv": "swedish",
    "ta": "tamil",
    "tr": "turkish",
    "yi": "yiddish",
}

# What `unicode61` makes a token of, as the FTS table is declared: letters, numbers, private
# use and marks (so Thai or Devanagari words keep their vowel signs), diacritics folded.
UNICODE61 = ("unicode61", ["remove_diacritics", "2", "categories", "L* N* Co M*"])
PORTER = ("porter", ["unicode61", "remove_diacritics", "2", "categories", "L* N* Co M*"])
FTS_TOKENIZE_SQL = "unicode61 remove_diacritics 2 categories 'L* N* Co M*'"

_local = threading.local()


def stemmers() -> list[str]:
    """Every language a brain may be set to."""
    return sorted({AUTO, SIMPLE, ENGLISH, *(a for a in Stemmer.algorithms() if a != "porter")})


def check_stemmer(language: str) -> None:
    """InvalidInput unless a brain may be set to `language`."""
    if language not in stemmers():
        raise InvalidInput(f"no text-search language {language!r}: one of {', '.join(stemmers())}")


def document_language(chunks: Sequence[IndexedChunk]) -> str | None:
    """The language most of a document's text is in, from its passages' (by characters)."""
    weights: Counter[str] = Counter()
    for chunk in chunks:
        if chunk.language:
            weights[chunk.language] += len(chunk.draft.text)
    return weights.most_common(1)[0][0] if weights else None


def stemmer_for(brain_language: str, text_language: str | None) -> str:
    """The stemmer of a text in `text_language` (ISO 639-1, None when unknown) of a brain."""
    if brain_language != AUTO:
        return brain_language
    return SNOWBALL.get(text_language or "", ENGLISH)


def query_stemmers(brain_language: str, languages: Iterable[str]) -> list[str]:
    """The stemmers a question is analysed with: the brain's one, or for an 'auto' brain
    those of `languages` (the languages the question may be in: the brain's, the question's
    own), English when none is given."""
    if brain_language != AUTO:
        return [brain_language]
    return list(dict.fromkeys(stemmer_for(AUTO, language) for language in languages)) or [ENGLISH]


def analyze(text: str, stemmer: str) -> list[str]:
    """The terms of `text`: segmented (`text_analysis`), split, folded and stemmed."""
    if stemmer == ENGLISH:
        return _tokens(PORTER, text)
    tokens = _tokens(UNICODE61, text)
    if stemmer == SIMPLE or not tokens:
        return tokens
    found: Stemmer.Stemmer = _stemmer(stemmer)
    # Some stemmers strip a word to nothing (Nepali's, of a suffix standing alone): no term.
    return [str(t) for t in found.stemWords(tokens) if t]


def analyzed_text(text: str, stemmer: str) -> str:
    """`analyze` joined by spaces: what the contentless FTS table is given, which its
    `unicode61` tokenizer splits back into exactly these terms."""
    return " ".join(analyze(text, stemmer))


def query_phrases(terms: Sequence[str], stemmer_names: Iterable[str]) -> list[list[str]]:
    """The question's terms analysed in each of `stemmer_names` (the languages of the brain's
    text): per term, each distinct analysis once, as a phrase of its tokens. A term that is
    several tokens ("don't") is a phrase FTS5 matches whole and the other BM25s count as its
    tokens. Two terms with the same analysis are both kept, as FTS5 counts both."""
    names = list(dict.fromkeys(stemmer_names)) or [ENGLISH]
    phrases: list[list[str]] = []
    for term in terms:
        seen: set[tuple[str, ...]] = set()
        for name in names:
            tokens = analyze(term, name)
            if tokens and tuple(tokens) not in seen:
                seen.add(tuple(tokens))
                phrases.append(tokens)
    return phrases


def query_tokens(terms: Sequence[str], stemmer_names: Iterable[str]) -> list[str]:
    """`query_phrases`, flat: the tokens the in-memory index and PostgreSQL score."""
    return [token for phrase in query_phrases(terms, stemmer_names) for token in phrase]


def _tokens(tokenizer: tuple[str, list[str]], text: str) -> list[str]:
    cache: dict[str, apsw.FTS5Tokenizer] | None = getattr(_local, "tokenizers", None)
    if cache is None:
        _local.conn = apsw.Connection(":memory:")
        cache = _local.tokenizers = {}
    found = cache.get(tokenizer[0])
    if found is None:
        found = cache[tokenizer[0]] = _local.conn.fts5_tokenizer(*tokenizer)
    tokens = found(
        segment(text).encode(),
        apsw.FTS5_TOKENIZE_DOCUMENT,
        None,
        include_offsets=False,
        include_colocated=False,
    )
    # Without offsets or colocated tokens the result is a plain list of strings.
    return [str(t) for t in tokens]


def _stemmer(name: str) -> Stemmer.Stemmer:
    """A Snowball stemmer for this thread (they keep state between calls)."""
    cache: dict[str, Stemmer.Stemmer] | None = getattr(_local, "stemmers", None)
    if cache is None:
        cache = _local.stemmers = {}
    found = cache.get(name)
    if found is None:
        found = cache[name] = Stemmer.Stemmer(name, 10_000)
    return found
