"""Migration 16: term statistics again, for the shared segmentation of every script.

Chunks counted before it hold a Japanese or Chinese sentence as one term, Thai or Hindi words
broken at their vowel signs, full-width letters unfolded. The analysis runs in Python
(`loci.store.text_analysis`, then FTS5's tokenizer or `to_tsvector`), so this step is a
function, not SQL: each brain holding any non-ASCII text has its chunks' terms counted again,
in its own language. ASCII text analyses exactly as before, so a brain of only that is left
as it is. Derived data only: the chunks themselves are untouched.
"""

from __future__ import annotations

import psycopg

from loci.store.postgres import lexical
from loci.store.postgres.connection import Row
from loci.store.postgres.index import reanalyze


def recount_terms(conn: psycopg.Connection[Row]) -> None:
    with conn.cursor() as cur:
        # Row-level security binds the schema's owner too: this step spans every brain.
        cur.execute("SELECT set_config('loci.brain_id', '*', true)")
        cur.execute(
            "SELECT b.id, b.text_language FROM brains b WHERE EXISTS (SELECT 1 FROM chunks c"
            " JOIN documents d ON d.id = c.document_id WHERE c.brain_id = b.id"
            " AND (c.text ~ '[^\\x01-\\x7f]' OR c.heading_path::text ~ '[^\\x01-\\x7f]'"
            " OR coalesce(d.title, '') ~ '[^\\x01-\\x7f]' OR d.name ~ '[^\\x01-\\x7f]'))"
            " ORDER BY b.id"
        )
        for brain in cur.fetchall():
            lexical.lock_stats(cur, int(brain["id"]))
            reanalyze(cur, int(brain["id"]), str(brain["text_language"]))
