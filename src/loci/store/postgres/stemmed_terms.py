"""Migration 28: languages, and term statistics stemmed in Python as on SQLite.

A brain's `text_language` named a PostgreSQL text-search configuration, applied by
`to_tsvector`; terms are now made by `loci.store.stemming` for both backends (Snowball
through PyStemmer, FTS5's Porter for English), so the two count the same terms. 'english'
becomes 'auto' (each passage stemmed in its detected language; passages indexed before this
have none and are stemmed as English, as they were); a configuration that is also a Snowball
stemmer keeps its name, any other becomes 'simple'. Documents and chunks get their detected
language. Then the brains whose terms change are counted again: those in another language
than English, and those holding non-ASCII text, which migration 16 counted again for the
shared segmentation of every script (this does all 16 did, so 16 now leaves it here). Derived
data only: the chunks themselves are untouched.
"""

from __future__ import annotations

import psycopg

from loci.store.postgres import lexical
from loci.store.postgres.connection import Row
from loci.store.postgres.index import reanalyze
from loci.store.stemming import AUTO, SIMPLE, stemmers

SCHEMA = """
    ALTER TABLE brains ALTER COLUMN text_language SET DEFAULT 'auto';
    ALTER TABLE documents ADD COLUMN language text;
    ALTER TABLE chunks ADD COLUMN language text;
    CREATE INDEX documents_language ON documents(brain_id, language);
"""


def add_languages(conn: psycopg.Connection[Row]) -> None:
    with conn.cursor() as cur:
        # Row-level security binds the schema's owner too: this step spans every brain.
        cur.execute("SELECT set_config('loci.brain_id', '*', true)")
        cur.execute(SCHEMA)
        cur.execute("SELECT id, text_language FROM brains ORDER BY id")
        changed: dict[int, str] = {}
        for brain in cur.fetchall():
            old = str(brain["text_language"])
            new = AUTO if old == "english" else old if old in stemmers() else SIMPLE
            cur.execute("UPDATE brains SET text_language = %s WHERE id = %s", (new, brain["id"]))
            if new != AUTO:
                changed[int(brain["id"])] = new
        cur.execute(
            "SELECT b.id, b.text_language FROM brains b WHERE EXISTS (SELECT 1 FROM chunks c"
            " JOIN documents d ON d.id = c.document_id WHERE c.brain_id = b.id"
            " AND (c.text ~ '[^\\x01-\\x7f]' OR c.heading_path::text ~ '[^\\x01-\\x7f]'"
            " OR coalesce(d.title, '') ~ '[^\\x01-\\x7f]' OR d.name ~ '[^\\x01-\\x7f]'))"
            " ORDER BY b.id"
        )
        changed.update({int(r["id"]): str(r["text_language"]) for r in cur.fetchall()})
        for brain_id, language in sorted(changed.items()):
            lexical.lock_stats(cur, brain_id)
            reanalyze(cur, brain_id, language, documents=False)  # migration 31 counts those
