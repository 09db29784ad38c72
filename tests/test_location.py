"""A passage's location — page, lines, characters, OCR region and confidence, recording time —
is one value from the parser's block to the citation, and stays flat on the wire."""

from __future__ import annotations

import numpy as np
import pytest

from loci.ingest.chunking import chunk_document
from loci.models import Block, ChunkDraft, IndexedChunk, Location, NewDocument, ParsedDocument
from loci.store.base import Store
from loci.wire.documents import ChunkOut


def words(text: str) -> int:
    return len(text.split())


def test_a_chunk_of_several_ocr_passages_cites_their_bounding_region_and_lowest_confidence() -> (
    None
):
    scan = ParsedDocument(
        title=None,
        blocks=(
            Block(
                "paragraph",
                "The rent is due on the first.",
                location=Location(
                    page=2,
                    line_start=1,
                    line_end=1,
                    region=(0.1, 0.1, 0.5, 0.2),
                    ocr_confidence=0.9,
                ),
            ),
            Block(
                "paragraph",
                "Late payment costs ten pounds.",
                location=Location(
                    page=2,
                    line_start=2,
                    line_end=3,
                    region=(0.2, 0.3, 0.8, 0.4),
                    ocr_confidence=0.5,
                ),
            ),
        ),
    )
    [chunk] = chunk_document(scan, words, max_tokens=50).chunks
    assert chunk.location == Location(
        page=2,
        line_start=1,
        line_end=3,
        char_start=0,
        char_end=len(scan.text),
        region=(0.1, 0.1, 0.8, 0.4),
        ocr_confidence=0.5,  # one uncertain passage marks the chunk
    )
    assert chunk.location.ocr_uncertain


def test_a_chunk_of_a_transcript_cites_from_its_first_words_to_its_last() -> None:
    talk = ParsedDocument(
        title=None,
        blocks=(
            Block(
                "paragraph", "Welcome to the call.", location=Location(time_start=3.0, time_end=5.5)
            ),
            Block(
                "paragraph", "First, the budget.", location=Location(time_start=6.0, time_end=9.25)
            ),
        ),
    )
    [chunk] = chunk_document(talk, words, max_tokens=50).chunks
    assert (chunk.location.time_start, chunk.location.time_end) == (3.0, 9.25)
    assert chunk.location.where() == ["0:03–0:09"]


def test_the_union_of_two_locations_holds_both_whatever_their_order() -> None:
    later = Location(page=4, line_start=7, line_end=8, char_start=40, char_end=60)
    earlier = Location(page=4, line_start=2, line_end=3, char_start=0, char_end=20)
    spanned = Location(page=4, line_start=2, line_end=8, char_start=0, char_end=60)
    assert later.union(earlier) == earlier.union(later) == spanned
    assert Location().union(later) == later  # nothing known adds nothing


def test_where_reads_as_people_look_for_a_passage() -> None:
    at = Location(page=3, line_start=4, line_end=9, region=(0.125, 0.25, 0.875, 0.5))
    assert at.where() == ["page 3", "middle"]
    assert at.where("p.", lines=True) == ["p. 3", "lines 4–9", "middle"]
    assert Location(line_start=5, line_end=5).where(lines=True) == ["line 5"]
    assert Location(line_start=5).where(lines=True) == ["line 5"]  # not "lines 5–None"


@pytest.mark.both_backends
def test_a_location_comes_back_from_the_store_whole_and_shows_flat(store: Store) -> None:
    brain = store.ensure_brain("a")
    doc = store.create_document(
        brain.id,
        NewDocument("file", "lease-scan.pdf", None, None, "application/pdf", 10, "d" * 64),
        "index",
    )
    text = "The rent is due on the first."
    where = Location(
        page=3,
        line_start=4,
        line_end=9,
        char_start=0,
        char_end=len(text),
        region=(0.125, 0.25, 0.875, 0.5),
        ocr_confidence=0.42,
        time_start=1.5,
        time_end=7.25,
    )
    draft = ChunkDraft(0, text, ("Terms",), where, words(text), "h")
    vector = np.full(4, 0.5, np.float32)
    store.replace_index(doc.id, [IndexedChunk(draft, "e")], {"e": vector}, "m", text, None, None)
    [chunk] = store.list_chunks(brain.id, doc.id)
    assert chunk.location == where

    shown = ChunkOut.of(chunk).model_dump()
    assert "location" not in shown
    assert {k: shown[k] for k in ("page", "line_start", "line_end")} == {
        "page": 3,
        "line_start": 4,
        "line_end": 9,
    }
    assert shown["region"] == "0.125,0.250,0.875,0.500"
    assert (shown["ocr_confidence"], shown["time_start"], shown["time_end"]) == (0.42, 1.5, 7.25)
