"""An edited file keeps the passages it did not change: the same rows, with their text index
(and on PostgreSQL their postings and vectors); the search finds the new text, the unchanged
text, and not the text that went, with passages in the file's new order."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.ingest.indexer import Indexer
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.postgres import document_lexical, lexical
from loci.store.sqlite.store import SqliteStore

pytestmark = pytest.mark.both_backends

SECTIONS = {
    "Heating": "The thermostat is set to 19 degrees in winter.",
    "Boiler": "The boiler is serviced every October by the firm on Mill Lane; pressure 1.5 bar.",
    "Garden": "The tulip bulbs go in before the first frost, in the bed by the wall.",
    "Car": "The car's insurance renews in May; the documents are in the blue folder.",
}


def write(path: Path, sections: dict[str, str]) -> None:
    body = "\n\n".join(f"## {head}\n\n{text}" for head, text in sections.items())
    path.write_text(f"# House\n\n{body}\n")


def found(loci: Loci, brain: Brain, words: str) -> list[str]:
    hits = loci.searching.search(brain, SearchRequest(words, mode="text", limit=5))
    return [h.text for h in hits]


def edit(loci: Loci, brain: Brain, path: Path, sections: dict[str, str]) -> int:
    write(path, sections)
    document_id = loci.library.add_file(brain, path).document.id
    loci.library.wait_for(brain, [document_id])
    return document_id


def test_an_edit_keeps_its_unchanged_passages(loci: Loci, brain: Brain, tmp_path: Path) -> None:
    path = tmp_path / "house.md"
    note = edit(loci, brain, path, SECTIONS)
    before = {c.text: c.id for c in loci.library.chunks(brain, note)}
    assert len(before) == 4

    # A new section second (every later passage moves down one place), the garden rewritten,
    # and the car moved above the boiler.
    edited = {
        "Heating": SECTIONS["Heating"],
        "Water": "The stopcock is under the kitchen sink.",
        "Car": SECTIONS["Car"],
        "Boiler": SECTIONS["Boiler"],
        "Garden": "The tulip bulbs went in on Sunday; the bed by the wall is full.",
    }
    assert edit(loci, brain, path, edited) == note
    chunks = loci.library.chunks(brain, note)
    assert [c.index for c in chunks] == [0, 1, 2, 3, 4]
    assert [c.heading_path[-1] for c in chunks] == list(edited)
    text = loci.store.document_text(brain.id, note) or ""
    for chunk in chunks:  # each passage's offsets are its place in the new text
        start, end = chunk.location.char_start or 0, chunk.location.char_end or 0
        assert chunk.text in text[start:end] or text[start:end] in chunk.text

    assert any("stopcock" in t for t in found(loci, brain, "stopcock"))
    assert any("thermostat" in t for t in found(loci, brain, "thermostat"))
    assert any("Sunday" in t for t in found(loci, brain, "tulip Sunday"))
    assert any("Mill Lane" in t for t in found(loci, brain, "Mill Lane boiler"))
    assert any("blue folder" in t for t in found(loci, brain, "insurance blue folder"))
    assert not any("frost" in t for t in found(loci, brain, "frost"))

    # The heating's, the car's and the boiler's passages are the rows they were.
    kept = [c.heading_path[-1] for c in chunks if before.get(c.text) == c.id]
    assert kept == ["Heating", "Car", "Boiler"]
    store = loci.store
    if isinstance(store, SqliteStore):
        # The full-text index holds one row for each passage there is, and no other.
        indexed = store.db.conn.execute(
            "SELECT rowid FROM chunks_fts WHERE chunks_fts MATCH ?", (f'brain : "b{brain.id}"',)
        )
        assert sorted(r[0] for r in indexed) == sorted(c.id for c in chunks)
        return
    # PostgreSQL: the BM25 statistics still count exactly the postings there are.
    db = store.db  # type: ignore[attr-defined]
    assert db.scalar("SELECT count(*) FROM chunk_terms t LEFT JOIN chunks c ON c.id = t.chunk_id"
                     " WHERE c.id IS NULL") == 0  # fmt: skip
    assert (
        db.scalar(
            "SELECT count(*) FROM term_df d FULL JOIN (SELECT brain_id, term, count(*) AS n"
            " FROM chunk_terms GROUP BY brain_id, term) p USING (brain_id, term)"
            " WHERE coalesce(d.df, 0) <> coalesce(p.n, 0)"
        )
        == 0
    )
    stats = db.rows("SELECT chunks, length FROM lexical_stats WHERE brain_id = %s", (brain.id,))
    counted = db.rows(
        "SELECT count(*) AS chunks, sum(lex_length) AS length FROM chunks WHERE brain_id = %s",
        (brain.id,),
    )
    assert (stats[0]["chunks"], stats[0]["length"]) == (counted[0]["chunks"], counted[0]["length"])

    # The whole document's terms, written as a difference, are what counting it afresh gives.
    terms = "SELECT document_id, term, tf FROM document_terms ORDER BY document_id, term"
    stats = "SELECT documents, document_length FROM lexical_stats ORDER BY brain_id"
    frequencies = "SELECT term, df FROM document_term_df WHERE df > 0 ORDER BY term"
    edited_state = [db.rows(sql) for sql in (terms, stats, frequencies)]
    with db.tx() as cur:
        lexical.lock_stats(cur, brain.id)
        document_lexical.remove_documents(cur, brain.id, "true", ())
        language = db.scalar("SELECT text_language FROM brains WHERE id = %s", (brain.id,))
        document_lexical.index_documents(cur, brain.id, language)
    assert [db.rows(sql) for sql in (terms, stats, frequencies)] == edited_state


def test_an_older_read_written_after_a_newer_one_does_not_put_back_the_old_text(
    loci: Loci, brain: Brain, embedder: Embedder, tmp_path: Path
) -> None:
    """Two jobs of one file, the older still writing when the newer one is done (two lanes of
    a worker, an edit saved while the first text was read): the newer text stays."""
    path = tmp_path / "lesson.md"
    note = edit(loci, brain, path, {"Piano": "The piano lesson is on Tuesday at 5pm."})
    indexer = Indexer(loci.store, loci.blobs, embedder, loci.settings.indexer)
    late = indexer.prepare(brain, loci.store.get_document(brain.id, note))  # reads Tuesday

    assert edit(loci, brain, path, {"Piano": "The piano lesson is on Friday at 4pm."}) == note
    assert indexer.write_text(late) is None  # not written: the document has newer content
    assert any("Friday" in t for t in found(loci, brain, "piano Friday"))
    assert not any("Tuesday" in t for t in found(loci, brain, "piano Tuesday"))
    document = loci.store.get_document(brain.id, note)
    assert document.status == "ready"
    (chunk,) = loci.library.chunks(brain, note)
    assert "Friday at 4pm" in chunk.text and "Tuesday" not in chunk.text


def test_an_edit_keeps_a_passages_language_and_a_reindex_reads_it_again(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    """An unchanged passage is not read again to tell its language (an edit of one section
    reads that one); `loci reindex` detects every passage's language again."""
    path = tmp_path / "house.md"
    note = edit(loci, brain, path, SECTIONS)
    db = loci.store.portable  # type: ignore[attr-defined]
    with db.transaction(brain.id) as conn:  # as an older detector might have read the boiler
        db.run(conn, "UPDATE chunks SET language = 'nl' WHERE document_id = ? AND text LIKE ?",
               (note, "%Mill Lane%"))  # fmt: skip

    def languages() -> dict[str, str | None]:
        return {c.heading_path[-1]: c.language for c in loci.library.chunks(brain, note)}

    edit(loci, brain, path, {**SECTIONS, "Garden": "The tulips went in on Sunday."})
    assert languages() == {"Heating": "en", "Boiler": "nl", "Garden": "en", "Car": "en"}

    reindexed = [d.id for d in loci.library.reindex(brain)]
    loci.library.wait_for(brain, reindexed)
    assert languages() == {"Heating": "en", "Boiler": "en", "Garden": "en", "Car": "en"}
