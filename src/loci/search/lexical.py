"""Turning a natural-language question into terms for the BM25 leg.

FTS engines treat bare words as AND: a ten-word question then matches almost nothing (0.05 nDCG@10
on SciFact, against 0.70 for an OR of the terms). The question becomes a de-duplicated list of word
terms that the store ORs together; common function words are dropped because they add nothing to
BM25 but cost time.

The question is analysed as the indexed text was (`loci.store.text_analysis`): normalised, and
a Japanese, Chinese, Korean or Thai phrase cut into the bigrams the index holds, each a term.
A word keeps its combining marks (Devanagari or Thai vowel signs are marks, not letters)."""

from __future__ import annotations

import functools
import re
import unicodedata

from loci.store.text_analysis import is_segmented, segment


def _mark_ranges() -> str:
    """The combining marks of the Basic Multilingual Plane, as a character-class body."""
    ranges: list[str] = []
    start = -1
    for code in range(0x300, 0x10000 + 1):
        mark = code < 0x10000 and unicodedata.category(chr(code)).startswith("M")
        if mark and start < 0:
            start = code
        elif not mark and start >= 0:
            ranges.append(f"\\u{start:04x}-\\u{code - 1:04x}")
            start = -1
    return "".join(ranges)


@functools.cache
def word_pattern() -> re.Pattern[str]:
    """A word: letters and digits with the marks among them, apostrophes inside (built on first
    use: listing the marks takes tens of milliseconds a command line should not wait for)."""
    letter = rf"(?:[^\W_]|[{_mark_ranges()}])"
    return re.compile(rf"[^\W_]{letter}*(?:['’]{letter}+)*")


STOPWORDS = frozenset(
    [
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "down",
        "during",
        "each",
        "few",
        "for",
        "from",
        "further",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "herself",
        "him",
        "himself",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "me",
        "more",
        "most",
        "my",
        "myself",
        "no",
        "nor",
        "not",
        "of",
        "off",
        "on",
        "once",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "ourselves",
        "out",
        "over",
        "own",
        "same",
        "she",
        "should",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "themselves",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "to",
        "too",
        "under",
        "until",
        "up",
        "very",
        "was",
        "we",
        "were",
        "what",
        "when",
        "where",
        "which",
        "while",
        "who",
        "whom",
        "why",
        "will",
        "with",
        "would",
        "you",
        "your",
        "yours",
        "yourself",
        "yourselves",
    ]
)

MAX_TERMS = 64


def query_terms(question: str) -> list[str]:
    """Distinct lowercase terms of `question`; stopwords dropped unless nothing else is left."""
    words: list[str] = []
    for piece in segment(question).split():
        if is_segmented(piece):
            words.append(piece)  # a bigram (or a lone character) of a space-less script
        else:
            words += (w.lower().replace("’", "'") for w in word_pattern().findall(piece))
    seen: dict[str, None] = {}
    for word in words:
        if word not in STOPWORDS:
            seen.setdefault(word, None)
    if not seen:
        for word in words:
            seen.setdefault(word, None)
    return list(seen)[:MAX_TERMS]
