"""Migration 30: document-level term statistics (`loci.store.postgres.document_lexical`), so
a search scores a passage's whole document with BM25 as the SQLite store's document index
does. Derived data only: every brain's documents are counted from their stored passages."""

from __future__ import annotations

import psycopg

from loci.store.postgres import document_lexical, lexical
from loci.store.postgres.connection import Row

SCHEMA = """
    CREATE TABLE document_terms (
        brain_id bigint NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        document_id bigint NOT NULL REFERENCES documents(id) ON DELETE CASCADE,
        term text NOT NULL,
        tf integer NOT NULL,  -- weighted: a title occurrence counts twice, as for passages
        PRIMARY KEY (document_id, term)
    );
    CREATE TABLE document_term_df (
        brain_id bigint NOT NULL REFERENCES brains(id) ON DELETE CASCADE,
        term text NOT NULL,
        df integer NOT NULL,
        PRIMARY KEY (brain_id, term)
    );
    -- the document's BM25 length (title, then each stretch of its passages once; 0: none)
    ALTER TABLE documents ADD COLUMN lex_length integer NOT NULL DEFAULT 0;
    ALTER TABLE lexical_stats ADD COLUMN documents bigint NOT NULL DEFAULT 0;
    ALTER TABLE lexical_stats ADD COLUMN document_length bigint NOT NULL DEFAULT 0;
    DO $$
    DECLARE t text;
    BEGIN
        FOREACH t IN ARRAY ARRAY['document_terms', 'document_term_df']
        LOOP
            EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
            EXECUTE format('ALTER TABLE %I FORCE ROW LEVEL SECURITY', t);
            EXECUTE format('CREATE POLICY brain_scope ON %I USING'
                ' ((SELECT loci_all_brains()) OR brain_id = (SELECT loci_brain()))', t);
        END LOOP;
    END $$;
"""


def add_document_terms(conn: psycopg.Connection[Row]) -> None:
    with conn.cursor() as cur:
        # Row-level security binds the schema's owner too: this step spans every brain.
        cur.execute("SELECT set_config('loci.brain_id', '*', true)")
        cur.execute(SCHEMA)
        cur.execute("SELECT id, text_language FROM brains ORDER BY id")
        for brain in cur.fetchall():
            lexical.lock_stats(cur, int(brain["id"]))
            document_lexical.index_documents(cur, int(brain["id"]), str(brain["text_language"]))
