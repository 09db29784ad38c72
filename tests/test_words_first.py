"""A passage holding every word of the question is never beaten by a weak meaning-only match
("voluntary excess" found a vector-only note at cosine 0.175 above the policy that says it)."""

from __future__ import annotations

from loci.models import Brain
from loci.search.closeness import BUNDLED_MODEL, closeness_scale
from loci.search.engine import SearchRequest
from loci.search.fusion import Fused
from loci.search.weak import close
from loci.search.words_first import words_first
from loci.service import Loci

TEXTS = {
    1: "Your policy's voluntary excess is 250 GBP on top of the compulsory excess.",
    2: "Claims are paid within 30 days of the assessor's report.",
    3: "Excess baggage is charged at the airport.",
}


def test_weak_meaning_only_hits_go_under_every_passage_with_all_the_words() -> None:
    scored = [
        (0.30, Fused(9, 0.30, (None, 1), (None, 0.175))),  # vector only, weak
        (0.28, Fused(3, 0.28, (2, 2), (4.0, 0.31))),  # one of the words
        (0.20, Fused(1, 0.20, (1, 5), (9.0, 0.12))),  # every word
        (0.19, Fused(8, 0.19, (None, 3), (None, 0.52))),  # vector only, close: stays
    ]
    scale = closeness_scale(None, BUNDLED_MODEL)  # a small brain: the model's own levels
    terms = ["voluntary", "excess"]
    order = [f.item_id for _, f in words_first(scored, terms, TEXTS.get, scale)]
    assert order == [3, 1, 9, 8]
    # without a passage holding every word, nothing moves
    assert words_first(scored[:2], terms, TEXTS.get, scale) == scored[:2]
    assert scale is not None and not close(scale.of(0.175)) and close(scale.of(0.52))
    # where no closeness can be read, a vector-only hit does not outrank the words either
    assert [f.item_id for _, f in words_first(scored, terms, TEXTS.get, None)] == [3, 1, 9, 8]


def test_search_puts_the_passage_with_the_phrase_first(loci: Loci, brain: Brain) -> None:
    notes = {
        "Car insurance": TEXTS[1],
        "Claims": TEXTS[2],
        "Holiday": "We flew to Lisbon in May; the hotel was near the river.",
        "Cover": "What the insurer pays depends on the cover you chose and any add-ons.",
    }
    ids = [loci.library.add_note(brain, t, title=n).document.id for n, t in notes.items()]
    loci.library.wait_for(brain, ids)
    hits = loci.searching.search(brain, SearchRequest("voluntary excess", limit=4))
    assert "voluntary excess" in hits[0].text
    first_weak = next(
        (i for i, h in enumerate(hits)
         if h.text_rank is None and not close(h.closeness)),
        len(hits),
    )  # fmt: skip
    holding = [i for i, h in enumerate(hits) if "voluntary" in h.text and "excess" in h.text]
    assert all(i < first_weak for i in holding)
