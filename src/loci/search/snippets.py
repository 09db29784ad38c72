"""Short excerpts of a chunk around the query's terms, with where the matches are.

Matching is by word prefix so that "running" is marked for the query term "run" the way the
porter-stemmed BM25 leg matched it, and, for a passage in a language Snowball stems, by stem
(German *Häuser* for *Haus*); a term of a script written without spaces (a Japanese or
Thai bigram, `loci.store.text_analysis`) is found anywhere, and overlapping matches are marked
as one. The matches travel as data — `highlights`, (start, end) character offsets into the
excerpt — never as marks inside its text: `**` is Markdown bold, which a passage may hold
itself (a timeline's bold dates lit up as matches). An excerpt is cut only between grapheme
clusters, never between a letter and its marks or inside an emoji sequence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import regex

from loci.graph.links import as_read
from loci.store.stemming import ENGLISH, SNOWBALL, analyze
from loci.store.text_analysis import is_normal, is_segmented, normalize

STEM_PREFIX = 5  # long enough to avoid junk matches, short enough to join inflections
CONTEXT_BEFORE = 40
_CLUSTER = regex.compile(r"\X")
_LONGEST_CLUSTER = 64  # how far back a cut looks for the cluster it falls in
_WORD = regex.compile(r"[\p{L}\p{M}\p{N}]+")

Span = tuple[int, int]
ELLIPSIS = "…"


@dataclass(frozen=True)
class Snippet:
    """An excerpt as a person reads it, and the (start, end) offsets of its matched terms."""

    text: str
    highlights: tuple[Span, ...] = ()


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
    if is_normal(text):  # every character its own normal form: positions map one to one
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
) -> Snippet:
    """The `width`-character window of `text` holding the most matched terms, with where they
    are; a brain page's links read as their labels. `language` (the passage's, ISO 639-1) lets
    a word be matched by its stem in a language Snowball stems."""
    text = as_read(text)
    pattern = term_pattern(terms)
    matches = _spans(text, pattern) if pattern else []
    stemmer = SNOWBALL.get(language or "")
    if stemmer is not None and stemmer != ENGLISH and terms:
        matches = _merged(matches + _stem_spans(text, terms, stemmer))
    if not matches:
        flat = " ".join(text[: width * 2].split())
        cut = cluster_start(flat, width)
        more = len(flat) > width or len(text) > width * 2
        return Snippet(flat[:cut] + (ELLIPSIS if more else ""))
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
    inside = [
        (max(begin, start) - start, min(finish, end) - start)
        for begin, finish in matches
        if max(begin, start) < min(finish, end)
    ]
    flat, spans = _collapsed(text[start:end], inside)
    lead = ELLIPSIS if start > 0 else ""
    shift = len(lead)
    return Snippet(
        lead + flat + (ELLIPSIS if end < len(text) else ""),
        tuple((a + shift, b + shift) for a, b in spans),
    )


_SPACE = re.compile(r"\s+")


def _collapsed(window: str, spans: Sequence[Span]) -> tuple[str, list[Span]]:
    """`window` with each run of whitespace made one space and the ends trimmed, as a line of
    an excerpt reads, and `spans` moved to where their text now is."""
    pieces: list[str] = []
    # at[i]: the offset in the collapsed text of window[i] (or of what follows it, for space)
    at = [0] * (len(window) + 1)
    out = 0
    last = 0
    for run in _SPACE.finditer(window):
        for k in range(last, run.start()):
            at[k] = out + k - last
        out += run.start() - last
        pieces.append(window[last : run.start()])
        keep = 0 if run.start() == 0 or run.end() == len(window) else 1
        for k in range(run.start(), run.end()):
            at[k] = out
        out += keep
        pieces.append(" " * keep)
        last = run.end()
    for k in range(last, len(window)):
        at[k] = out + k - last
    out += len(window) - last
    pieces.append(window[last:])
    at[len(window)] = out
    moved = []
    for begin, finish in spans:
        a, b = at[begin], at[finish - 1] + 1
        if b > a:
            moved.append((a, b))
    return "".join(pieces), moved
