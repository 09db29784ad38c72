"""Short excerpts of a chunk around the query's terms, with the matches marked.

Matching is by word prefix so that "running" is marked for the query term "run" the way the
porter-stemmed BM25 leg matched it, and, for a passage in a language Snowball stems, by stem
(German *Häuser* for *Haus*); a term of a script written without spaces (a Japanese or
Thai bigram, `loci.store.text_analysis`) is found anywhere, and overlapping matches are marked
as one. Marks are `**…**` (Markdown bold), which the CLI renders. An excerpt is cut only
between grapheme clusters, never between a letter and its marks or inside an emoji sequence.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence

import regex

from loci.graph.links import as_read
from loci.store.stemming import ENGLISH, SNOWBALL, analyze
from loci.store.text_analysis import is_segmented, normalize

STEM_PREFIX = 5  # long enough to avoid junk matches, short enough to join inflections
CONTEXT_BEFORE = 40
_CLUSTER = regex.compile(r"\X")
_LONGEST_CLUSTER = 64  # how far back a cut looks for the cluster it falls in
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+")

Span = tuple[int, int]


def _stem_key(word: str) -> str:
    return word.lower()[:STEM_PREFIX]


def term_pattern(terms: Sequence[str]) -> re.Pattern[str] | None:
    """A regex matching whole words that start with any word term's stem key, and any term
    of a space-less script wherever it occurs."""
    keys = sorted({_stem_key(t) for t in terms if t and not is_segmented(t)}, key=len, reverse=True)
    pieces = sorted({t for t in terms if t and is_segmented(t)}, key=len, reverse=True)
    if not keys and not pieces:
        return None
    # A short term must match the whole word; a long one matches its inflections too.
    words = [re.escape(k) + (r"\w*" if len(k) >= STEM_PREFIX else "") for k in keys]
    alternatives = [r"(?<!\w)(?:" + "|".join(words) + r")(?!\w)"] if words else []
    alternatives += [re.escape(p) for p in pieces]
    return re.compile("|".join(alternatives), re.IGNORECASE)


def _spans(text: str, pattern: re.Pattern[str]) -> list[Span]:
    """Where the terms occur, overlapping occurrences (the bigrams of one phrase) merged.

    Terms are normalised (`loci.store.text_analysis.normalize`: full-width folded, Thai SARA AM
    split, vowel points dropped), so they are looked for in the text normalised alike, one
    grapheme cluster at a time, and each match is mapped back to the clusters it covers."""
    if text.isascii():
        folded, bounds = text, None
    else:
        pieces: list[str] = []
        bounds = []
        for cluster in _CLUSTER.finditer(text):
            piece = normalize(cluster.group())
            pieces.append(piece)
            bounds += [cluster.span()] * len(piece)
        folded = "".join(pieces)
    found: list[Span] = []
    at = 0
    while (match := pattern.search(folded, at)) is not None:
        start, end = match.span()
        at = start + 1  # the next bigram of a phrase starts one character on
        if end == start:
            continue
        if bounds is not None:
            start, end = bounds[start][0], bounds[end - 1][1]
        if found and start <= found[-1][1]:
            found[-1] = (found[-1][0], max(found[-1][1], end))
        else:
            found.append((start, end))
    return found


def cluster_start(text: str, index: int) -> int:
    """`index` moved back to the start of the grapheme cluster it falls inside."""
    if index <= 0 or index >= len(text):
        return max(0, min(index, len(text)))
    for match in _CLUSTER.finditer(text, max(0, index - _LONGEST_CLUSTER)):
        if match.end() > index:
            return int(match.start())
    return index


def _stem_spans(text: str, terms: Sequence[str], stemmer: str) -> list[Span]:
    """Words of `text` whose stem in its language is a term's (German *Häuser* for *Haus*,
    Russian *кошками* for *кошка*), which a prefix of the term does not always find."""
    wanted = {stem for t in terms for stem in analyze(t, stemmer)}
    if not wanted:
        return []
    return [
        m.span()
        for m in _WORD.finditer(text)
        if any(s in wanted for s in analyze(m.group(), stemmer))
    ]


def _head(word: str) -> str:
    bare = "".join(
        c for c in unicodedata.normalize("NFKD", word[:6]) if not unicodedata.combining(c)
    )
    return bare.casefold()[:2]


def _merged(spans: list[Span]) -> list[Span]:
    out: list[Span] = []
    for start, end in sorted(spans):
        if out and start <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], end))
        else:
            out.append((start, end))
    return out


def make_snippet(
    text: str, terms: Sequence[str], width: int = 240, language: str | None = None
) -> str:
    """The `width`-character window of `text` holding the most matched terms, marked; a brain
    page's links read as their labels. `language` (the passage's, ISO 639-1) lets a word be
    marked by its stem in a language Snowball stems."""
    text = as_read(text)
    pattern = term_pattern(terms)
    matches = _spans(text, pattern) if pattern else []
    stemmer = SNOWBALL.get(language or "")
    if stemmer is not None and stemmer != ENGLISH and terms:
        matches = _merged(matches + _stem_spans(text, terms, stemmer))
    if not matches:
        flat = " ".join(text[: width * 2].split())
        cut = cluster_start(flat, width)
        return flat[:cut] + ("…" if len(flat) > width or len(text) > width * 2 else "")
    # Pick the window start that covers the most matches (two pointers over match positions).
    best_start, best_count, j = matches[0][0], 0, 0
    for i, (begin, _) in enumerate(matches):
        while j < i and matches[j][0] < begin - width + CONTEXT_BEFORE:
            j += 1
        if i - j + 1 > best_count:
            best_count, best_start = i - j + 1, matches[j][0]
    start = max(0, best_start - CONTEXT_BEFORE)
    if start > 0:  # snap to a word boundary so the excerpt does not open mid-word
        space = text.rfind(" ", 0, start + 1)
        start = space + 1 if space >= 0 and start - space < 20 else start
    start = cluster_start(text, start)
    end = cluster_start(text, min(len(text), start + width))
    parts: list[str] = []
    at = start
    for begin, finish in matches:
        begin, finish = max(begin, start), min(finish, end)
        if begin >= finish or begin < at:
            continue
        parts += [text[at:begin], "**", text[begin:finish], "**"]
        at = finish
    parts.append(text[at:end])
    marked = " ".join("".join(parts).split())
    return ("…" if start > 0 else "") + marked + ("…" if end < len(text) else "")
