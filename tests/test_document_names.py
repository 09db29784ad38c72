"""A file's name takes part in ranking in both legs: a vault note `dentist.md` whose text never
says "dentist" is found by it — through BM25's title field and through the line the embedder
reads before each passage — while a note's name, made from its own words, adds nothing."""

from __future__ import annotations

import pytest

from loci.context_line import index_title
from loci.models import Brain, SearchMode
from loci.search.engine import SearchRequest
from loci.service import Loci

NOTES = {
    "dentist.md": "Next appointment on 3 Feb. 2027 at 10.30, second floor. Bring the card.",
    "garage.md": "Next appointment on 5 Feb. 2027 at 08.00, at the back gate. Bring the keys.",
}


@pytest.mark.parametrize("mode", ["text", "vector", "hybrid"])
def test_a_note_is_found_by_its_file_name_in_every_leg(
    loci: Loci, brain: Brain, mode: SearchMode
) -> None:
    ids = [loci.library.add_bytes(brain, n, t.encode()).document.id for n, t in NOTES.items()]
    loci.library.wait_for(brain, ids)
    for query, name in (("dentist appointment", "dentist.md"), ("car garage", "garage.md")):
        hits = loci.searching.search(brain, SearchRequest(query, mode=mode, limit=2))
        assert hits and hits[0].citation.name == name, (mode, query)


def test_the_title_indexed_says_what_the_name_adds() -> None:
    assert index_title(None, "Dentist.md") == "Dentist"
    assert index_title("Orphaned Notes", "orphans.md") == "Orphaned Notes · orphans"
    assert index_title("foam grep", "grep.md") == "foam grep"  # nothing new in the name
    # a note's name is a slug of its title or first line: never added
    assert index_title("Vitamin D", "vitamin-d-and-bone-densi.md", "note") == "Vitamin D"
    assert index_title(None, "example.com-blog.html", "web") == "example.com-blog.html"
