"""Adding files and notes through the service: canonical first, indexed by the worker, cited."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.errors import FileTooLarge, InvalidInput
from loci.models import SearchFilters
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.sqlite import SqliteStore
from tests.support import office_files, pdf_files
from tests.support.paths import REPO

EXAMPLES = REPO / "examples"

pytestmark = pytest.mark.both_backends


def add_and_index(loci: Loci, name: str, data: bytes, brain: str | None = None) -> int:
    target = loci.brain(brain)
    result = loci.library.add_bytes(target, name, data)
    [doc] = loci.library.wait_for(target, [result.document.id])
    assert doc.status == "ready", doc.status_reason
    return doc.id


def top_hit(loci: Loci, query: str, mode: str = "hybrid", brain: str | None = None):  # type: ignore[no-untyped-def]
    hits = loci.searching.search(loci.brain(brain), SearchRequest(query, mode=mode, limit=5))  # type: ignore[arg-type]
    assert hits, f"no hit for {query!r}"
    return hits[0]


def test_markdown_passage_is_found_with_heading_path_and_lines(loci: Loci) -> None:
    data = (EXAMPLES / "boiler-manual.md").read_bytes()
    doc_id = add_and_index(loci, "boiler-manual.md", data)
    hit = top_hit(loci, "how do I top up the boiler pressure with the filling loop")
    assert hit.citation.document_id == doc_id
    assert hit.citation.name == "boiler-manual.md"
    assert "Topping up the pressure" in hit.citation.heading_path
    lines = data.decode().splitlines()
    start, end = hit.citation.location.line_start, hit.citation.location.line_end
    assert start is not None and end is not None
    assert any("filling loop" in line for line in lines[start - 1 : end])
    assert hit.matched_by == "both"
    assert {"filling", "loop"} <= {hit.snippet[a:b] for a, b in hit.highlights}
    doc = loci.library.document(loci.brain(), doc_id)
    assert doc.title == "Boiler manual (Vaillant ecoTEC plus)"


def test_pdf_hit_cites_the_right_page(loci: Loci) -> None:
    add_and_index(loci, "report.pdf", pdf_files.two_page_pdf())
    hit = top_hit(loci, "zebras grazing near the river")
    assert hit.citation.location.page == 2
    assert "Zebras" in hit.text
    first = top_hit(loci, "apples and orchards")
    assert first.citation.location.page == 1


def test_docx_table_and_headings_are_searchable(loci: Loci) -> None:
    add_and_index(loci, "handbook.docx", office_files.docx_with_structure())
    hit = top_hit(loci, "who handles payroll", mode="text")
    assert "Ada Lovelace" in hit.text
    assert "Contacts" in hit.citation.heading_path


def test_html_boilerplate_is_not_indexed(loci: Loci) -> None:
    doc_id = add_and_index(loci, "sourdough.html", (EXAMPLES / "sourdough.html").read_bytes())
    text = loci.library.document_text(loci.brain(), doc_id) or ""
    assert "Dutch oven" in text
    assert "Cookie settings" not in text and "newsletter" not in text
    assert top_hit(loci, "how long to proof the dough in the fridge").citation.document_id == doc_id


def test_same_bytes_under_another_name_are_deduped_per_brain(loci: Loci) -> None:
    data = b"The spare key is under the blue flowerpot by the back door.\n"
    first = loci.library.add_bytes(loci.brain(), "key.txt", data)
    again = loci.library.add_bytes(loci.brain(), "renamed.txt", data)
    assert again.deduped and again.document.id == first.document.id
    elsewhere = loci.library.add_bytes(loci.brain("work"), "key.txt", data)
    assert not elsewhere.deduped and elsewhere.document.id != first.document.id
    assert elsewhere.document.brain_id != first.document.brain_id


def test_notes_and_files_share_one_index(loci: Loci) -> None:
    brain = loci.brain()
    add_and_index(loci, "lease.txt", (EXAMPLES / "lease-summary.txt").read_bytes())
    note = loci.library.add_note(
        brain,
        "Call the landlord about the broken boiler thermostat.",
        title="Boiler thermostat",
        tags=["todo", "house"],
    )
    loci.library.wait_for(brain, [note.document.id])
    hits = loci.searching.search(brain, SearchRequest("who repairs the boiler", limit=5))
    kinds = {loci.library.document(brain, h.citation.document_id).kind for h in hits}
    assert kinds == {"file", "note"}
    tagged = loci.searching.search(
        brain, SearchRequest("boiler", limit=5, filters=SearchFilters(tags=("todo",)))
    )
    assert {h.citation.document_id for h in tagged} == {note.document.id}
    # the same note saved twice is one document
    assert loci.library.add_note(
        brain,
        "Call the landlord about the broken boiler thermostat.",
        title="Boiler thermostat",
        tags=["todo", "house"],
    ).deduped


def test_search_only_returns_ready_documents(loci: Loci) -> None:
    brain = loci.brain()
    pending = loci.library.add_bytes(brain, "otters.txt", b"Otters hold hands while they sleep.\n")
    assert pending.document.status == "processing"
    assert loci.searching.search(brain, SearchRequest("otters sleep", mode="text")) == []
    loci.library.wait_for(brain, [pending.document.id])
    assert loci.searching.search(brain, SearchRequest("otters sleep", mode="text"))


def test_remove_deletes_chunks_and_unused_blob(loci: Loci) -> None:
    brain = loci.brain()
    data = b"Herons stand still in shallow water for a long time.\n"
    doc_id = add_and_index(loci, "herons.txt", data)
    other = add_and_index(loci, "herons.txt", data, brain="other")  # same blob, other brain
    blob = loci.blobs.path_for(loci.library.document(brain, doc_id).content_hash)
    loci.library.remove(brain, doc_id)
    assert loci.searching.search(brain, SearchRequest("herons", mode="text")) == []
    assert blob.exists()  # still used by the other brain's document
    loci.library.remove(loci.brain("other"), other)
    assert not blob.exists()
    store = loci.store
    if isinstance(store, SqliteStore):
        assert store.db.scalar("SELECT count(*) FROM vectors") == 0  # nothing points at them
    else:  # PostgreSQL: vectors live on the chunks; the term statistics must be back to zero
        for sql in (
            "SELECT count(*) FROM chunks",
            "SELECT count(*) FROM chunk_terms",
            "SELECT coalesce(sum(df), 0) FROM term_df",
            "SELECT coalesce(sum(chunks) + sum(length), 0) FROM lexical_stats",
        ):
            assert store.db.scalar(sql) == 0, sql  # type: ignore[attr-defined]


def test_reprocess_and_reindex_rebuild_from_the_blob(loci: Loci) -> None:
    brain = loci.brain()
    doc_id = add_and_index(loci, "lease.txt", (EXAMPLES / "lease-summary.txt").read_bytes())
    before = [c.text for c in loci.library.chunks(brain, doc_id)]
    loci.library.reprocess(brain, doc_id)
    loci.library.wait_for(brain, [doc_id])
    assert [c.text for c in loci.library.chunks(brain, doc_id)] == before
    docs = loci.library.reindex(brain)
    loci.library.wait_for(brain, [d.id for d in docs])
    assert [c.text for c in loci.library.chunks(brain, doc_id)] == before
    assert top_hit(loci, "how much is the deposit").citation.document_id == doc_id


def test_size_cap_and_empty_input_are_refused_up_front(loci: Loci, tmp_path: Path) -> None:
    from tests.support.services import make_service

    small = make_service(tmp_path / "small", loci.embedder, max_file_mb=0.001)
    with pytest.raises(FileTooLarge, match="limit is"):
        small.library.add_bytes(small.brain(), "big.txt", b"x" * 5000)
    with pytest.raises(InvalidInput, match="empty"):
        loci.library.add_bytes(loci.brain(), "empty.txt", b"")
    assert small.library.documents(small.brain()) == []
