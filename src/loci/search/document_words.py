"""A passage's words read in its document's context: the text leg scores a passage partly by its
whole document's BM25.

Ranked by its best passage alone, a long general note with one paragraph on the question beats
the short note that is about it, and a note whose words for the question are spread over its
passages ("which notes point to the one I'm reading?" — backlinks, links, the current note)
loses to any passage holding two of them. BM25 over the whole document (`loci.store.
document_terms`), with the brain's document statistics, says how much of a document is about
the question: the short note's words are its subject, the long note's one paragraph is diluted
by its length. So a passage's text score is

    (1 − share) × BM25(passage) / ceiling(passages) + share × BM25(document) / ceiling(documents)

each part over the best its level could give for the question (every matching term saturated),
so both lie in [0, 1] and mean the same thing. A passage's document part is shared by all the
document's passages, so within a document the passages keep their order.

The vector leg does the same with the document's opening (`loci.search.openings`).
"""

from __future__ import annotations

from collections.abc import Sequence

from loci.models import DocumentTextScores


def in_document(
    leg: Sequence[tuple[int, float]],
    ceiling: float | None,
    documents: DocumentTextScores | None,
    share: float,
) -> tuple[list[tuple[int, float]], float | None]:
    """The text leg (chunk id, BM25; best first) with each passage's document's BM25 blended
    in, best first, and the ceiling to read it against (1: both parts are already over their
    ceilings). Unchanged where either level's ceiling is unknown."""
    if share <= 0 or not leg or documents is None or not ceiling or documents.ceiling <= 0:
        return list(leg), ceiling
    scored = []
    for chunk, score in leg:
        own = min(score / ceiling, 1.0)
        whole = documents.of_passage.get(chunk)
        # A passage whose document the index does not know yet (written a moment ago) is
        # taken as its own document.
        of_document = own if whole is None else min(whole / documents.ceiling, 1.0)
        scored.append((chunk, (1.0 - share) * own + share * of_document))
    scored.sort(key=lambda pair: (-pair[1], pair[0]))
    return scored, 1.0
