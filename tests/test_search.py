"""Query terms, fusion, snippets and the search engine's modes, limits and filters."""

from __future__ import annotations

import pytest

from loci.errors import InvalidInput
from loci.search.engine import SearchRequest
from loci.search.fusion import fuse
from loci.search.lexical import query_terms
from loci.search.snippets import make_snippet
from loci.service import Loci

pytestmark = pytest.mark.both_backends


def test_question_becomes_distinct_terms_without_stopwords() -> None:
    assert query_terms("What is the effect of vitamin D on the immune system?") == [
        "effect",
        "vitamin",
        "d",
        "immune",
        "system",
    ]
    assert query_terms("Who are they?") == [
        "who",
        "are",
        "they",
    ]  # nothing but stopwords: keep them
    assert query_terms('say "hello" OR NEAR(x) AND -y*') == ["say", "hello", "near", "x", "y"]
    assert query_terms("   ") == []


def test_convex_fusion_rewards_agreement_and_keeps_leg_ranks() -> None:
    text = [(1, 10.0), (2, 5.0), (3, 1.0)]
    vector = [(2, 0.9), (4, 0.8), (1, 0.1)]
    fused = fuse([text, vector], [0.5, 0.5], "convex")
    assert fused[0].item_id == 2  # high in both legs beats top of one
    by_id = {f.item_id: f for f in fused}
    assert by_id[2].ranks == (2, 1) and by_id[3].ranks == (3, None) and by_id[4].ranks == (None, 2)


def test_rrf_fusion_orders_by_reciprocal_ranks() -> None:
    fused = fuse([[(1, 3.0), (2, 2.0)], [(2, 0.9), (3, 0.5)]], [1.0, 1.0], "rrf", rrf_k=60)
    assert [f.item_id for f in fused] == [2, 1, 3]
    assert fused[0].score == pytest.approx(1 / 62 + 1 / 61)


def test_snippet_marks_terms_and_inflections() -> None:
    text = ("Intro words that do not matter at all. " * 10) + "The runners were running fast. End."
    snippet = make_snippet(text, ["running"], width=80)
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["running"]
    assert snippet.text.startswith("…")
    assert make_snippet("short text", ["absent"]).text == "short text"


def test_highlights_are_offsets_and_markdown_bold_stays_text() -> None:
    # A timeline's bold date is the passage's own Markdown, not a match; the matches are data.
    text = "- **3 Feb. 2027** — next  check-up with\nDr. Osei, the dentist.\n- **2026** — filling"
    snippet = make_snippet(text, ["dentist", "check"])
    assert snippet.text == (
        "- **3 Feb. 2027** — next check-up with Dr. Osei, the dentist. - **2026** — filling"
    )
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["check", "dentist"]


def test_request_bounds_are_enforced() -> None:
    with pytest.raises(InvalidInput, match="between 1 and 30"):
        SearchRequest("x", limit=31)
    with pytest.raises(InvalidInput, match="empty"):
        SearchRequest("  ")
    with pytest.raises(InvalidInput, match="mode"):
        SearchRequest("x", mode="fuzzy")  # type: ignore[arg-type]


def test_modes_legs_and_min_similarity(loci: Loci) -> None:
    brain = loci.brain()
    docs = {
        "kelp.txt": "Sea otters eat urchins, which protects kelp forests along the coast.",
        "bread.txt": "Sourdough needs a long cold proof in the fridge before baking.",
        "code.txt": "Error code F22 means the boiler pressure is below 0.8 bar.",
    }
    ids = [loci.library.add_bytes(brain, n, t.encode()).document.id for n, t in docs.items()]
    loci.library.wait_for(brain, ids)

    text_hits = loci.searching.search(brain, SearchRequest("F22", mode="text"))
    assert [h.citation.name for h in text_hits] == ["code.txt"]
    assert text_hits[0].matched_by == "text" and text_hits[0].vector_rank is None

    vector_hits = loci.searching.search(
        brain, SearchRequest("marine mammals feeding", mode="vector", limit=3)
    )
    assert vector_hits[0].citation.name == "kelp.txt"
    assert all(h.matched_by == "vector" for h in vector_hits)

    strict = loci.searching.search(
        brain, SearchRequest("marine mammals feeding", mode="vector", min_similarity=0.99)
    )
    assert strict == []

    hybrid = loci.searching.search(brain, SearchRequest("why do otters matter for kelp", limit=2))
    assert hybrid[0].citation.name == "kelp.txt" and hybrid[0].matched_by == "both"
    assert len(hybrid) == 2
