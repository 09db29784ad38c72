"""Splitting text into the terms the BM25 leg counts, per brain language.

A brain in 'english' (the default) uses exactly the analyzer of the SQLite store's FTS5 table
(`porter unicode61 remove_diacritics 2`, run through APSW's in-memory SQLite), so both backends
count the same terms and rank alike. Any other language names a PostgreSQL text-search
configuration ('simple', 'french', 'german', ...), and PostgreSQL's `to_tsvector` splits the text:
each lexeme counted once per position. Either way the text is first normalised and its
space-less scripts cut into bigrams (`loci.store.text_analysis`), as on SQLite.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence

import apsw

from loci.store.postgres.connection import Cursor
from loci.store.sqlite.connection import FTS_TOKENIZER
from loci.store.text_analysis import segment

PORTER = "english"
_local = threading.local()


def porter_tokens(text: str) -> list[str]:
    """FTS5's own tokenizer, as the SQLite store's chunks_fts table applies it (after the
    shared segmentation of `loci.store.text_analysis`)."""
    tokenizer = getattr(_local, "tokenizer", None)
    if tokenizer is None:
        _local.conn = apsw.Connection(":memory:")
        tokenizer = _local.tokenizer = _local.conn.fts5_tokenizer(*FTS_TOKENIZER)
    tokens = tokenizer(
        segment(text).encode(),
        apsw.FTS5_TOKENIZE_DOCUMENT,
        None,
        include_offsets=False,
        include_colocated=False,
    )
    return [str(t) for t in tokens]


def analyze(cur: Cursor, language: str, texts: Sequence[str]) -> list[Counter[str]]:
    """Term counts of each text, in the brain's language."""
    if language == PORTER:
        return [Counter(porter_tokens(t)) for t in texts]
    counts: list[Counter[str]] = [Counter() for _ in texts]
    if not texts:
        return counts
    cur.execute(
        "SELECT t.n, v.lexeme, coalesce(array_length(v.positions, 1), 1) AS k"
        " FROM unnest(%s::text[]) WITH ORDINALITY AS t(body, n),"
        " unnest(to_tsvector(%s::regconfig, t.body)) AS v",
        ([segment(t) for t in texts], language),
    )
    for row in cur.fetchall():
        counts[int(row["n"]) - 1][str(row["lexeme"])] += int(row["k"])
    return counts


def text_languages(cur: Cursor) -> list[str]:
    """The languages a brain may use: the Porter default and the server's configurations."""
    cur.execute("SELECT cfgname FROM pg_ts_config ORDER BY cfgname")
    return sorted({PORTER, *(str(r["cfgname"]) for r in cur.fetchall())})
