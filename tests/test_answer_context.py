"""An answer without a model reads the rest of a short document: the sentence that answers is
often a passage away from the one the search matched. A long document is not read whole.

The search here misses the passage that holds the answer, as a paraphrased question can; the
rest is Loci's own pipeline over a real brain.
"""

from __future__ import annotations

from loci.answer.events import final_answer
from loci.answer.pipeline import Asker
from loci.answer.retrieval import Retrieval
from loci.models import Brain, Hit
from loci.search.engine import SearchRequest, passage_hit
from loci.service import Loci

ANCHORS = (
    "# Block anchors\n\nBlock anchors let you link to one paragraph, list item or quote of a "
    "note rather than to the whole note.\n\n"
    "## Limits\n\nA note can hold up to 500 block anchors before linking to them slows down."
)
QUESTION = "How many block anchors can a note hold?"


def _asker(loci: Loci, brain: Brain, text: str) -> Asker:
    added = loci.library.add_bytes(brain, "block-anchors.md", text.encode()).document
    loci.library.wait_for(brain, [added.id])
    document = loci.store.get_document(brain.id, added.id)
    chunks = loci.store.list_chunks(brain.id, added.id)

    def search(query: str, limit: int, text_weight: float) -> list[Hit]:
        request = SearchRequest(query, limit=limit, text_weight=text_weight, by_document=False)
        hits = loci.searching.search(brain, request)
        return [h for h in hits if "Limits" not in h.citation.heading_path]  # the miss

    return Asker(
        Retrieval(
            brain=brain.name,
            search=search,
            documents=lambda: [document],
            passages=lambda document_id: [passage_hit(c, document) for c in chunks],
        )
    )


def test_the_answer_is_found_a_passage_away_in_a_short_document(loci: Loci, brain: Brain) -> None:
    done = final_answer(_asker(loci, brain, ANCHORS).ask(QUESTION))
    first = next(line for line in done.answer.splitlines() if line.startswith("- "))
    assert "A note can hold up to 500 block anchors" in first, done.answer
    # cited like any other passage: the one under "Limits"
    cited = {c.number: c for c in done.citations}
    assert "Limits" in cited[int(first.rsplit("[", 1)[1].rstrip("]"))].heading_path


def test_a_long_document_is_not_read_whole(loci: Loci, brain: Brain) -> None:
    filler = "".join(
        f"\n\n## Example {i}\n\nLink to a paragraph of note {i} with its anchor."
        for i in range(200)
    )
    done = final_answer(_asker(loci, brain, ANCHORS + filler).ask(QUESTION))
    assert "500" not in done.answer
