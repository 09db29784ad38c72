"""Migration 16: the FTS table again, for the shared segmentation of every script.

Chunks indexed before it hold a Japanese or Chinese sentence as one token, and Thai or Hindi
words broken at their vowel signs. The tokenizer itself changes (marks become token
characters), and FTS5 cannot change a table's tokenizer, so the table is dropped and filled
again from `chunks`, the canonical text: derived data only, nothing lost. Rebuilding every
row rather than only those with non-ASCII text keeps one code path; it costs about a second
per 20,000 chunks, once. Saved in-memory BM25 indexes are left behind by their file format.
"""

from __future__ import annotations

import itertools
import json

import apsw

from loci.context_line import index_title
from loci.store.sqlite.connection import FTS_TOKENIZE_SQL
from loci.store.sqlite.rows import INSERT_FTS, fts_values

BATCH = 2_000


def reindex_text(conn: apsw.Connection) -> None:
    conn.execute("DROP TABLE chunks_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(brain, title, headings, body,"
        f" content='', contentless_delete=1, tokenize=\"{FTS_TOKENIZE_SQL}\")"
    )
    # The title replace_index gives FTS5 (`loci.context_line.index_title`).
    cursor = conn.execute(
        "SELECT c.id, c.brain_id, d.title, d.name, d.kind, c.heading_path, c.text"
        " FROM chunks c JOIN documents d ON d.id = c.document_id ORDER BY c.id"
    )
    while batch := list(itertools.islice(cursor, BATCH)):
        conn.executemany(
            INSERT_FTS,
            [
                fts_values(
                    cid,
                    brain,
                    index_title(title or None, str(name), str(kind)),
                    " / ".join(json.loads(headings)),
                    str(text),
                )
                for cid, brain, title, name, kind, headings, text in batch
            ],
        )
