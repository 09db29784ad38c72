"""BM25 in SQL over term statistics kept on write.

`ts_rank` is not BM25 and scores 0.43 nDCG@10 on SciFact where BM25 scores 0.70 (measured), so
this store keeps what BM25 needs, per brain, as chunks come and go: the postings (`chunk_terms`:
chunk, weighted term frequency, chunk length), the document frequency of each term (`term_df`)
and the brain's chunk count and total length (`lexical_stats`). A query is one SQL statement.

The formula is the SQLite store's BM25 index (`loci.store.lexical_index`, whose K1 and B it
imports): FTS5's `bm25()` with that index's k1 and b, idf = ln((N - n + 0.5) / (n + 0.5)) floored
at 1e-6, a title occurrence weighted 2, heading path and body 1, and a chunk's length counting
every column plus FTS5's one brain token. Statistics are the brain's own, as in that index.
A query term of several tokens ("don't") counts as its tokens, as there: postings keep no
positions for phrases. Every write first locks the brain's `lexical_stats` row, so
concurrent indexers of one brain take turns on its `term_df` rows instead of deadlocking.

A query reads, for each of its terms, at most PER_TERM postings, those with the highest impact
(BM25's tf part, stored when the posting is written); the scores of what it reads are exact. A
term in at most PER_TERM chunks — every term that carries weight — is read whole, so rankings
equal the SQLite store's; only very common terms (low idf) are cut to their best postings, which
keeps a query on a million chunks at a few thousand postings instead of hundreds of thousands.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from loci.store.lexical_index import IDF_FLOOR, K1, B
from loci.store.postgres.connection import Cursor
from loci.store.stemming import analyze

PER_TERM = 5000  # postings read per query term, best impact first
TITLE_WEIGHT, HEADINGS_WEIGHT, BODY_WEIGHT = 2, 1, 1


def lock_stats(cur: Cursor, brain_id: int) -> None:
    """Take the brain's lexical write lock (its stats row), creating the row if need be."""
    cur.execute(
        "INSERT INTO lexical_stats(brain_id) VALUES (%s) ON CONFLICT (brain_id) DO NOTHING",
        (brain_id,),
    )
    cur.execute("SELECT 1 FROM lexical_stats WHERE brain_id = %s FOR UPDATE", (brain_id,))


def chunk_terms(title: str, rows: Sequence[tuple[str, str, str]]) -> list[tuple[Counter[str], int]]:
    """(weighted term counts, BM25 length) of each chunk, given (heading path, body, stemmer)
    rows: the title and heading path are analysed with the stemmer of each chunk's language,
    as the SQLite store's FTS row holds them."""
    cache: dict[tuple[str, str], Counter[str]] = {}

    def counted(text: str, stemmer: str) -> Counter[str]:
        found = cache.get((text, stemmer))
        if found is None:
            found = cache[text, stemmer] = Counter(analyze(text, stemmer))
        return found

    out: list[tuple[Counter[str], int]] = []
    for heading, text, stemmer in rows:
        title_terms, heading_terms = counted(title, stemmer), counted(heading, stemmer)
        body = Counter(analyze(text, stemmer))
        weighted: Counter[str] = Counter()
        for terms, weight in (
            (title_terms, TITLE_WEIGHT),
            (heading_terms, HEADINGS_WEIGHT),
            (body, BODY_WEIGHT),
        ):
            for term, count in terms.items():
                weighted[term] += weight * count
        length = 1 + sum(title_terms.values()) + sum(heading_terms.values())
        out.append((weighted, length + sum(body.values())))
    return out


def add_postings(
    cur: Cursor, brain_id: int, chunk_ids: Sequence[int], terms: Sequence[tuple[Counter[str], int]]
) -> None:
    """Index new chunks (caller holds lock_stats)."""
    if not chunk_ids:
        return
    cur.execute("SELECT chunks, length FROM lexical_stats WHERE brain_id = %s", (brain_id,))
    stats = cur.fetchone()
    known = (int(stats["chunks"]), int(stats["length"])) if stats else (0, 0)
    new_length = sum(length for _, length in terms)
    mean = (known[1] + new_length) / (known[0] + len(chunk_ids))
    words: list[str] = []
    ids: list[int] = []
    tfs: list[int] = []
    lengths: list[int] = []
    impacts: list[float] = []
    for chunk_id, (counts, length) in zip(chunk_ids, terms, strict=True):
        for term, tf in counts.items():
            words.append(term)
            ids.append(chunk_id)
            tfs.append(tf)
            lengths.append(length)
            impacts.append(impact(tf, length, mean))
    cur.execute(
        "INSERT INTO chunk_terms(brain_id, term, chunk_id, tf, doc_len, impact)"
        " SELECT %s, * FROM unnest(%b::text[], %b::bigint[], %b::int[], %b::int[], %b::real[])",
        (brain_id, words, ids, tfs, lengths, impacts),
    )
    # One df increment per (chunk, term); sorted so concurrent writers meet rows in one order.
    cur.execute(
        "INSERT INTO term_df(brain_id, term, df)"
        " SELECT %s, term, count(*) FROM unnest(%b::text[]) AS term GROUP BY term ORDER BY term"
        " ON CONFLICT (brain_id, term) DO UPDATE SET df = term_df.df + excluded.df",
        (brain_id, words),
    )
    cur.execute(
        "UPDATE lexical_stats SET chunks = chunks + %s, length = length + %s WHERE brain_id = %s",
        (len(chunk_ids), new_length, brain_id),
    )


def impact(tf: int, length: int, mean_length: float) -> float:
    """BM25's tf part at the brain's mean length when written: a term's postings in the order
    they would score (the mean drifts, the order barely does; scores use the current one)."""
    return tf * (K1 + 1.0) / (tf + K1 * (1.0 - B + B * length / max(mean_length, 1.0)))


def remove_postings(cur: Cursor, brain_id: int, where: str, params: Sequence[Any]) -> None:
    """Unindex the brain's chunks matching `where` (on chunks `c`) before they are deleted
    (caller holds lock_stats)."""
    cur.execute(
        "WITH gone AS (DELETE FROM chunk_terms t USING chunks c"
        f" WHERE t.chunk_id = c.id AND c.brain_id = %s AND {where} RETURNING t.term),"
        " n AS (SELECT term, count(*) AS k FROM gone GROUP BY term)"
        " UPDATE term_df d SET df = d.df - n.k FROM n WHERE d.brain_id = %s AND d.term = n.term",
        (brain_id, *params, brain_id),
    )
    cur.execute(
        "UPDATE lexical_stats s SET chunks = s.chunks - g.n, length = s.length - g.len"
        " FROM (SELECT count(*) AS n, coalesce(sum(lex_length), 0) AS len FROM chunks c"
        f" WHERE c.brain_id = %s AND {where}) g WHERE s.brain_id = %s",
        (brain_id, *params, brain_id),
    )


# The query's term weights, as the ranking query computes them (duplicates count twice).
_WEIGHTS = (
    "WITH q AS (SELECT term, count(*)::float8 AS n FROM unnest(%(tokens)s::text[]) AS term"
    " GROUP BY term),"
    " s AS (SELECT chunks::float8 AS total, length::float8 / greatest(chunks, 1) AS avgdl"
    " FROM lexical_stats WHERE brain_id = %(brain)s),"
    " w AS (SELECT q.term, q.n * CASE WHEN x.idf > 0 THEN x.idf ELSE %(floor)s END AS idf,"
    " CASE WHEN x.idf > 0 THEN x.idf ELSE %(floor)s END AS term_idf"
    " FROM q JOIN term_df df ON df.brain_id = %(brain)s AND df.term = q.term AND df.df > 0"
    " CROSS JOIN s"
    " CROSS JOIN LATERAL (SELECT ln((s.total - df.df + 0.5) / (df.df + 0.5)) AS idf) x)"
)

# The best score any chunk could reach: every matching term at saturation (see
# `loci.store.lexical_index.LexicalIndex.ceiling`, which the SQLite store computes alike).
CEILING_SQL = (
    _WEIGHTS + " SELECT coalesce(sum(w.idf), 0) * %(k1p)s AS ceiling,"
    " coalesce(max(w.term_idf), 0) AS best_idf, (SELECT total FROM s) AS total FROM w"
)


def bm25_sql(filter_where: str) -> str:
    """The ranking query; `filter_where` adds conditions on documents `d` (or is empty)."""
    restrict = (
        f" JOIN chunks c ON c.id = scored.chunk_id JOIN documents d ON d.id = c.document_id"
        f" WHERE true {filter_where}"
        if filter_where
        else ""
    )
    return (
        _WEIGHTS + ","
        " p AS (SELECT w.idf, t.chunk_id, t.tf, t.doc_len FROM w CROSS JOIN LATERAL"
        " (SELECT chunk_id, tf, doc_len FROM chunk_terms WHERE brain_id = %(brain)s"
        " AND term = w.term ORDER BY impact DESC LIMIT %(per_term)s) t),"
        " scored AS (SELECT p.chunk_id, sum(p.idf * p.tf * %(k1p)s"
        " / (p.tf + %(k1)s * (1 - %(b)s + %(b)s * p.doc_len / s.avgdl))) AS score"
        " FROM p CROSS JOIN s GROUP BY p.chunk_id)"
        f" SELECT scored.chunk_id, scored.score FROM scored{restrict}"
        " ORDER BY scored.score DESC, scored.chunk_id LIMIT %(limit)s"
    )


def score_params(brain_id: int, tokens: Sequence[str]) -> dict[str, Any]:
    """What every BM25 query binds: the question's tokens, the brain and the formula's
    constants (passages here, whole documents in `document_lexical`)."""
    return {
        "tokens": list(tokens),
        "brain": brain_id,
        "floor": IDF_FLOOR,
        "k1": K1,
        "k1p": K1 + 1.0,
        "b": B,
    }


def bm25_params(brain_id: int, tokens: Sequence[str], limit: int) -> dict[str, Any]:
    return {**score_params(brain_id, tokens), "limit": limit, "per_term": PER_TERM}
