"""A document as BM25 reads it whole: its index title and the text of its passages, each stretch
of text once.

The passage index scores passages; a document-level score says how much of a whole document is
about the question (`loci.search.document_words`). Both backends keep it on write from the
same terms: the SQLite store in its in-memory index (`loci.store.document_index`), PostgreSQL in
`document_terms` (`loci.store.postgres.document_lexical`).

Consecutive passages of a section overlap by whole sentences (`loci.ingest.chunking`: every
passage's text is a slice `char_start:char_end` of the document's text, the overlap an earlier
start), so each passage contributes only what the passage before it did not cover: a sentence
on a boundary counts once, as it does in the document. The title counts once, with the title's
weight, where each of the document's passages carries it in the passage index.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

# A weighted term frequency is kept in 16 bits by the in-memory index; PostgreSQL clips alike.
MAX_TF = 65_535


@dataclass(frozen=True)
class PassageText:
    """What a document row is made from, per passage in index order."""

    text: str
    char_start: int
    char_end: int
    stemmer: str  # of the passage's language (`loci.store.stemming.stemmer_for`)


def own_parts(passages: Sequence[PassageText]) -> list[tuple[str, str]]:
    """(text, stemmer) of each passage without the start it shares with the passage before:
    cut only where the two really hold the same text there (offsets alone might be anyone's)."""
    parts: list[tuple[str, str]] = []
    before: PassageText | None = None
    for p in passages:
        text = p.text
        if before is not None and _overlap(before, p):
            text = text[before.char_end - p.char_start :]
        before = p
        if text:
            parts.append((text, p.stemmer))
    return parts


def _overlap(before: PassageText, p: PassageText) -> bool:
    """Whether `p` starts with the end of `before`, as consecutive chunks of a section do."""
    if not before.char_start <= p.char_start < before.char_end:
        return False
    if len(before.text) != before.char_end - before.char_start:
        return False  # not the slice its offsets say: nothing to cut by
    if len(p.text) != p.char_end - p.char_start:
        return False
    shared = before.char_end - p.char_start
    return before.text[len(before.text) - shared :] == p.text[:shared]


def document_columns(
    title: str, passages: Sequence[PassageText], tokenize: Callable[[str, str], list[str]]
) -> tuple[list[str], list[str], list[str]]:
    """The document's (title, heading path, body) terms as a passage row has them: the title in
    its first passage's language, no heading path (headings are lines of the text), the body
    each passage's own part in its own language."""
    if not passages:
        return [], [], []
    body: list[str] = []
    for text, stemmer in own_parts(passages):
        body += tokenize(text, stemmer)
    return tokenize(title, passages[0].stemmer), [], body


def weighted_terms(
    columns: tuple[list[str], list[str], list[str]], weights: tuple[int, int, int]
) -> tuple[Counter[str], int]:
    """(term -> weighted frequency, BM25 length) of a row's columns: lengths count every term
    once plus one (FTS5's brain token, which both backends count)."""
    counts: Counter[str] = Counter()
    for terms, weight in zip(columns, weights, strict=True):
        for term, n in Counter(terms).items():
            counts[term] += weight * n
    for term, n in counts.items():
        if n > MAX_TF:
            counts[term] = MAX_TF
    return counts, 1 + sum(len(terms) for terms in columns)
