"""Migration 28: text stemmed in its own language, on SQLite as on PostgreSQL.

The FTS table used FTS5's Porter tokenizer, which stems English only. Text is now analysed in
Python (`loci.store.stemming`: each passage in its language, FTS5's own Porter for English) and
the table holds the analysed text under a plain `unicode61` tokenizer, which splits it back
into exactly those terms. FTS5 cannot change a table's tokenizer, so the table is dropped and
filled again from `chunks`, the canonical text: derived data only, nothing lost. Passages
indexed before this have no detected language and are stemmed as English, as they were, so
their terms do not change; `loci reindex` detects their languages. It costs about a second
per 20,000 chunks, once. (Migration 16 rebuilt the same table for the shared segmentation of
every script; this rebuild does all it did, so 16 now leaves the table to it.)
"""

from __future__ import annotations

import itertools
import json

import apsw

from loci.context_line import index_title
from loci.store.sqlite.rows import INSERT_FTS, fts_values
from loci.store.stemming import FTS_TOKENIZE_SQL, stemmer_for

BATCH = 2_000


def add_languages(conn: apsw.Connection) -> None:
    conn.execute(
        "ALTER TABLE brains ADD COLUMN text_language TEXT NOT NULL DEFAULT 'auto';"
        " ALTER TABLE documents ADD COLUMN language TEXT;"
        " ALTER TABLE chunks ADD COLUMN language TEXT;"
        " CREATE INDEX documents_language ON documents(brain_id, language);"
    )
    reindex_text(conn)


def reindex_text(conn: apsw.Connection) -> None:
    conn.execute("DROP TABLE chunks_fts")
    conn.execute(
        "CREATE VIRTUAL TABLE chunks_fts USING fts5(brain, title, headings, body,"
        f" content='', contentless_delete=1, tokenize=\"{FTS_TOKENIZE_SQL}\")"
    )
    # The title replace_index gives FTS5 (`loci.context_line.index_title`).
    cursor = conn.execute(
        "SELECT c.id, c.brain_id, d.title, d.name, d.kind, c.heading_path, c.text,"
        " b.text_language, c.language FROM chunks c JOIN documents d ON d.id = c.document_id"
        " JOIN brains b ON b.id = c.brain_id ORDER BY c.id"
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
                    stemmer_for(str(brain_language), language),
                )
                for cid, brain, title, name, kind, headings, text, brain_language, language in batch
            ],
        )
