"""BM25 over whole documents in SQL, kept on write beside the passage postings (lexical.py).

A document's terms (`loci.store.document_terms`: its index title and each stretch of its
passages' text once) are kept in `document_terms` (document, term, weighted frequency), how many
documents hold each term in `document_term_df`, a document's BM25 length on its row
(`documents.lex_length`, 0 while it has no passages) and the brain's document count and total
length in `lexical_stats`. The SQLite store's document index (`loci.store.document_index`)
scores from the same terms with the same formula, so the two backends rank the same.

A search asks only for the documents of the passages it has found, so a query reads the
postings of those documents for the question's terms (the primary key), never a term's whole
list. Writers hold the brain's lexical lock (`lexical.lock_stats`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from loci.context_line import index_title
from loci.store.document_terms import PassageText, document_columns, weighted_terms
from loci.store.postgres import lexical
from loci.store.postgres.connection import Cursor
from loci.store.postgres.lexical import BODY_WEIGHT, HEADINGS_WEIGHT, TITLE_WEIGHT
from loci.store.stemming import analyze, stemmer_for

WEIGHTS = (TITLE_WEIGHT, HEADINGS_WEIGHT, BODY_WEIGHT)
DOCUMENTS_AT_ONCE = 500  # documents indexed by one set of statements when a brain is counted


def add_documents(
    cur: Cursor, brain_id: int, documents: Sequence[tuple[int, str, Sequence[PassageText]]]
) -> None:
    """Index documents whose passages were just written, given (id, index title, passages)
    each, in four statements for all of them (caller holds lock_stats and has removed what the
    documents had). A document without passages is not indexed."""
    ids, words, tfs, lengths = _counted(documents)
    if not lengths:
        return
    cur.execute(
        "INSERT INTO document_terms(brain_id, document_id, term, tf)"
        " SELECT %s, * FROM unnest(%b::bigint[], %b::text[], %b::int[])",
        (brain_id, ids, words, tfs),
    )
    # One df increment per (document, term); sorted so concurrent writers meet rows in one order.
    cur.execute(
        "INSERT INTO document_term_df(brain_id, term, df)"
        " SELECT %s, term, count(*) FROM unnest(%b::text[]) AS term GROUP BY term ORDER BY term"
        " ON CONFLICT (brain_id, term) DO UPDATE SET df = document_term_df.df + excluded.df",
        (brain_id, words),
    )
    cur.execute(
        "UPDATE documents d SET lex_length = l.length"
        " FROM unnest(%s::bigint[], %s::int[]) AS l(id, length) WHERE d.id = l.id",
        (list(lengths), list(lengths.values())),
    )
    cur.execute(
        "UPDATE lexical_stats SET documents = documents + %s,"
        " document_length = document_length + %s WHERE brain_id = %s",
        (len(lengths), sum(lengths.values()), brain_id),
    )


def _counted(
    documents: Sequence[tuple[int, str, Sequence[PassageText]]],
) -> tuple[list[int], list[str], list[int], dict[int, int]]:
    """(document ids, terms, weighted frequencies) flattened, and each document's BM25 length,
    of the documents that have passages."""
    ids: list[int] = []
    words: list[str] = []
    tfs: list[int] = []
    lengths: dict[int, int] = {}
    for document_id, title, passages in documents:
        if not passages:
            continue
        counts, lengths[document_id] = weighted_terms(
            document_columns(title, passages, analyze), WEIGHTS
        )
        ids += [document_id] * len(counts)
        words += list(counts)
        tfs += list(counts.values())
    return ids, words, tfs, lengths


def replace_documents(
    cur: Cursor, brain_id: int, documents: Sequence[tuple[int, str, Sequence[PassageText]]]
) -> None:
    """Index documents again after their passages were written (an edit), given (id, index
    title, passages) each: only the terms whose weight changed are written, as an edit changes
    a part of a file and its other terms stay (caller holds lock_stats). A document without
    passages is left unindexed."""
    ids, words, tfs, lengths = _counted(documents)
    every = [document_id for document_id, _, _ in documents]
    # The terms a document no longer has go, and their document frequencies drop.
    cur.execute(
        "WITH new AS (SELECT * FROM unnest(%b::bigint[], %b::text[]) AS n(document_id, term)),"
        " gone AS (DELETE FROM document_terms t WHERE t.document_id = ANY(%s) AND NOT EXISTS"
        " (SELECT 1 FROM new WHERE new.document_id = t.document_id AND new.term = t.term)"
        " RETURNING t.term),"
        " n AS (SELECT term, count(*) AS k FROM gone GROUP BY term)"
        " UPDATE document_term_df f SET df = f.df - n.k FROM n"
        " WHERE f.brain_id = %s AND f.term = n.term",
        (ids, words, every, brain_id),
    )
    # New terms are added (their frequencies rise), changed weights rewritten, the rest kept.
    # `xmax = 0` tells a row inserted from one updated on conflict.
    cur.execute(
        "WITH up AS (INSERT INTO document_terms(brain_id, document_id, term, tf)"
        " SELECT %s, * FROM unnest(%b::bigint[], %b::text[], %b::int[])"
        " ON CONFLICT (document_id, term) DO UPDATE SET tf = excluded.tf"
        " WHERE document_terms.tf <> excluded.tf RETURNING term, xmax = 0 AS inserted)"
        " INSERT INTO document_term_df(brain_id, term, df)"
        " SELECT %s, term, count(*) FROM up WHERE inserted GROUP BY term ORDER BY term"
        " ON CONFLICT (brain_id, term) DO UPDATE SET df = document_term_df.df + excluded.df",
        (brain_id, ids, words, tfs, brain_id),
    )
    new_lengths = [lengths.get(document_id, 0) for document_id in every]
    cur.execute(
        "WITH old AS (SELECT id, lex_length AS length FROM documents WHERE id = ANY(%s)),"
        " new AS (SELECT * FROM unnest(%s::bigint[], %s::int[]) AS l(id, length)),"
        " upd AS (UPDATE documents d SET lex_length = new.length FROM new WHERE d.id = new.id)"
        " UPDATE lexical_stats SET"
        " documents = documents + (SELECT count(*) FROM new WHERE length > 0)"
        " - (SELECT count(*) FROM old WHERE length > 0),"
        " document_length = document_length + (SELECT coalesce(sum(length), 0) FROM new)"
        " - (SELECT coalesce(sum(length), 0) FROM old) WHERE brain_id = %s",
        (every, every, new_lengths, brain_id),
    )


def remove_documents(cur: Cursor, brain_id: int, where: str, params: Sequence[Any]) -> None:
    """Unindex the brain's documents matching `where` (on documents `d`) (caller holds
    lock_stats)."""
    cur.execute(
        "WITH gone AS (DELETE FROM document_terms t USING documents d"
        f" WHERE t.document_id = d.id AND d.brain_id = %s AND {where} RETURNING t.term),"
        " n AS (SELECT term, count(*) AS k FROM gone GROUP BY term)"
        " UPDATE document_term_df f SET df = f.df - n.k FROM n"
        " WHERE f.brain_id = %s AND f.term = n.term",
        (brain_id, *params, brain_id),
    )
    cur.execute(
        "WITH gone AS (UPDATE documents d SET lex_length = 0 FROM (SELECT id, lex_length"
        f" FROM documents d WHERE d.brain_id = %s AND d.lex_length > 0 AND {where}) old"
        " WHERE d.id = old.id RETURNING old.lex_length)"
        " UPDATE lexical_stats s SET documents = s.documents - g.n,"
        " document_length = s.document_length - g.len"
        " FROM (SELECT count(*) AS n, coalesce(sum(lex_length), 0) AS len FROM gone) g"
        " WHERE s.brain_id = %s",
        (brain_id, *params, brain_id),
    )


def index_documents(cur: Cursor, brain_id: int, language: str, where: str = "true") -> None:
    """Index the brain's documents matching `where` (on documents `d`) from their passages as
    stored (caller holds lock_stats and has removed them)."""
    cur.execute(
        "SELECT d.id, d.title, d.name, d.kind, c.text, c.char_start, c.char_end, c.language"
        " FROM documents d JOIN chunks c ON c.document_id = d.id"
        f" WHERE d.brain_id = %s AND {where} ORDER BY d.id, c.idx",
        (brain_id,),
    )
    documents: dict[int, tuple[int, str, list[PassageText]]] = {}
    for row in cur.fetchall():
        document_id = int(row["id"])
        if document_id not in documents and len(documents) >= DOCUMENTS_AT_ONCE:
            add_documents(cur, brain_id, list(documents.values()))
            documents.clear()
        if document_id not in documents:
            title = index_title(row["title"] or None, str(row["name"]), str(row["kind"]))
            documents[document_id] = (document_id, str(title), [])
        documents[document_id][2].append(
            PassageText(
                str(row["text"]), int(row["char_start"]), int(row["char_end"]),
                stemmer_for(language, row["language"]),
            )
        )  # fmt: skip
    add_documents(cur, brain_id, list(documents.values()))


# The brain's document statistics and the query's term weights over documents, as
# `lexical._WEIGHTS` has them over passages.
_WEIGHTS = (
    "WITH q AS (SELECT term, count(*)::float8 AS n FROM unnest(%(tokens)s::text[]) AS term"
    " GROUP BY term),"
    " s AS (SELECT documents::float8 AS total,"
    " document_length::float8 / greatest(documents, 1) AS avgdl"
    " FROM lexical_stats WHERE brain_id = %(brain)s),"
    " w AS (SELECT q.term, q.n * CASE WHEN x.idf > 0 THEN x.idf ELSE %(floor)s END AS idf"
    " FROM q JOIN document_term_df df ON df.brain_id = %(brain)s AND df.term = q.term"
    " AND df.df > 0 CROSS JOIN s"
    " CROSS JOIN LATERAL (SELECT ln((s.total - df.df + 0.5) / (df.df + 0.5)) AS idf) x)"
)

# The indexed documents of the passages a search found, with their lengths.
OWNERS_SQL = (
    "SELECT c.id AS chunk_id, c.document_id, d.lex_length FROM chunks c JOIN documents d"
    " ON d.id = c.document_id AND d.lex_length > 0"
    " WHERE c.id = ANY(%(chunks)s) AND c.brain_id = %(brain)s"
)

# Those documents' BM25 (a document holding none of the terms is not listed), and first, as
# document NULL, the ceiling. Their ids are given, so the postings are probed by (document,
# term) on the primary key: joined to the documents inside one statement, the planner read
# every document's posting of each term instead. One statement: its planning is most of it.
SCORES_SQL = (
    _WEIGHTS + ","
    " x AS (SELECT * FROM unnest(%(documents)s::bigint[], %(lengths)s::int[]) AS x(id, len)),"
    " t AS (SELECT document_id, term, tf FROM document_terms"
    " WHERE document_id = ANY(%(documents)s) AND term = ANY(%(tokens)s::text[]))"
    " SELECT NULL::bigint AS document_id, coalesce(sum(w.idf), 0) * %(k1p)s AS score FROM w"
    " UNION ALL"
    " SELECT t.document_id, sum(w.idf * t.tf * %(k1p)s"
    " / (t.tf + %(k1)s * (1 - %(b)s + %(b)s * x.len / s.avgdl)))"
    " FROM t JOIN w ON w.term = t.term JOIN x ON x.id = t.document_id"
    " CROSS JOIN s GROUP BY t.document_id"
)


def passage_scores(
    cur: Cursor, brain_id: int, tokens: Sequence[str], chunk_ids: Sequence[int]
) -> tuple[dict[int, float], float]:
    """(chunk id -> its document's BM25, the documents' ceiling) for the indexed passages among
    `chunk_ids`."""
    params = lexical.score_params(brain_id, tokens)
    cur.execute(OWNERS_SQL, {**params, "chunks": list(chunk_ids)})
    owner: dict[int, int] = {}
    lengths: dict[int, int] = {}
    for r in cur.fetchall():
        owner[int(r["chunk_id"])] = document = int(r["document_id"])
        lengths[document] = int(r["lex_length"])
    documents = sorted(lengths)
    cur.execute(
        SCORES_SQL, {**params, "documents": documents, "lengths": [lengths[d] for d in documents]}
    )
    ceiling = 0.0
    scores: dict[int, float] = {}
    for r in cur.fetchall():
        if r["document_id"] is None:
            ceiling = float(r["score"])
        else:
            scores[int(r["document_id"])] = float(r["score"])
    return {chunk: scores.get(document, 0.0) for chunk, document in owner.items()}, ceiling
