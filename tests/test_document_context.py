"""A passage is read in its document's context: the note about the question outranks a long note
that mentions it in passing, where the best passage alone put the long note first.

The notes are Foam's documentation (bench/data/foam-vault, MIT): its FAQ has a paragraph on
telemetry, and `telemetry.md` is about nothing else; `wikilinks.md` shows a block link among
much else, and `block-anchors.md` is about linking to a paragraph.
"""

from __future__ import annotations

import dataclasses

import pytest

from loci.models import Brain, PassageContext, SearchFilters
from loci.search.engine import SearchRequest
from loci.search.openings import in_context
from loci.service import Loci
from tests.support.paths import REPO

NOTES = REPO / "bench" / "data" / "foam-vault" / "notes"


@pytest.mark.parametrize(
    ("files", "question", "about", "in_passing"),
    [
        (
            ["user/frequently-asked-questions.md", "user/tools/telemetry.md", "principles.md",
             "index.md", "user/getting-started/note-taking-in-foam.md"],
            "Does Foam send any of my data home, and how do I turn that off?",
            "telemetry.md",
            "frequently-asked-questions.md",
        ),
        (
            ["user/features/wikilinks.md", "user/features/block-anchors.md",
             "user/features/embeds.md", "user/features/footnotes.md",
             "user/getting-started/navigation.md"],
            "How do I link to one specific paragraph inside another note?",
            "block-anchors.md",
            "wikilinks.md",
        ),
    ],
)  # fmt: skip
def test_the_note_about_it_beats_the_note_that_mentions_it(
    loci: Loci, brain: Brain, files: list[str], question: str, about: str, in_passing: str
) -> None:
    ids = [loci.library.add_file(brain, NOTES / name).document.id for name in files]
    loci.library.wait_for(brain, ids)
    engine = loci.searching.engine
    # the text leg reading passages alone (not their documents, tests/test_document_words.py)
    engine.params = dataclasses.replace(engine.params, document_words=0.0)
    first = loci.searching.search(brain, SearchRequest(question, limit=5))
    names = [h.citation.name for h in first]
    assert names[0] == about and in_passing in names[1:]
    # by best passage alone, the long note came first
    engine.params = dataclasses.replace(engine.params, document_context=False)
    alone = loci.searching.search(brain, SearchRequest(question, limit=5))
    assert [h.citation.name for h in alone][:2] == [in_passing, about]


def test_a_passage_leans_on_its_opening_as_far_as_it_departs_from_it() -> None:
    contexts = {
        1: PassageContext(0.60, opening=1, opening_cosine=0.60, coherence=1.0),  # an opening
        2: PassageContext(0.70, opening=1, opening_cosine=0.60, coherence=0.9),  # on its subject
        3: PassageContext(0.72, opening=9, opening_cosine=0.10, coherence=0.2),  # a digression
    }
    leg = [(3, 0.72), (2, 0.70), (1, 0.60), (4, 0.50)]  # 4: no context known yet
    scored = dict(in_context(leg, contexts))
    assert scored[1] == pytest.approx(0.60)
    assert scored[2] == pytest.approx(0.9 * 0.70 + 0.1 * 0.60)
    assert scored[3] == pytest.approx(0.2 * 0.72 + 0.8 * 0.10)
    assert scored[4] == pytest.approx(0.50)
    ranked = in_context(leg, contexts)
    assert [c for c, _ in ranked] == [2, 1, 4, 3] and len(ranked) == len(leg)
    # the digression's document takes part by its opening, and the leg keeps its length
    assert dict(in_context(leg[:1], contexts)) == {3: pytest.approx(0.224)}
    assert dict(in_context([(3, 0.72), (5, 0.01)], contexts))[9] == pytest.approx(0.10)
    # an untrusted leg's cosines stand as they are
    assert in_context(leg, contexts, trust=0.0) == sorted(leg, key=lambda p: -p[1])


@pytest.mark.both_backends
def test_each_backend_gives_a_passages_context(loci: Loci, brain: Brain) -> None:
    document = loci.library.add_file(brain, NOTES / "user/features/wikilinks.md").document
    loci.library.wait_for(brain, [document.id])
    brain = loci.store.get_brain(brain.name)
    assert brain.embedder_model is not None
    query = loci.embedder.embed(["link to a paragraph"])[0]
    leg = loci.store.vector_search(brain.id, brain.embedder_model, query, 50, SearchFilters())
    chunks = {c.index: c.id for c in loci.store.list_chunks(brain.id, document.id)}
    assert len(chunks) > 2
    contexts = loci.store.passage_contexts(
        brain.id, brain.embedder_model, query, [i for i, _ in leg]
    )
    assert set(contexts) == {i for i, _ in leg}
    for chunk, cosine in leg:
        context = contexts[chunk]
        assert context.opening == chunks[0] and context.cosine == pytest.approx(cosine, abs=1e-4)
        assert context.opening_cosine == pytest.approx(dict(leg)[chunks[0]], abs=1e-4)
        assert -1.0 <= context.coherence <= 1.0 + 1e-5
    assert contexts[chunks[0]].coherence == pytest.approx(1.0, abs=1e-4)
    assert all(contexts[chunks[i]].coherence < 0.999 for i in (1, 2))
