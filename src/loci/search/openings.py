"""A passage read in its document's context: the vector leg scores a passage partly by its
document's opening, as far as the passage departs from what that opening is about.

Ranked by its best passage alone, a long general note (a "getting started" guide with a
paragraph on templates) beats the short note that is about templates: one paragraph of the
guide matches the question as well as the whole of the other. A document says what it is about
in its opening — the first passage, embedded under the document's title and file name. So a
passage's score is

    coherence × cos(question, passage) + (1 − coherence) × cos(question, opening)

where coherence is the passage's own cosine to its opening (clipped to [0, 1]). The opening
keeps its own cosine, a passage that keeps to its document's subject (the results of an
abstract whose opening states the question studied) mostly its own, and a digression in a
document about something else counts for little more than that document's opening does. No
parameter: the weights come from the brain's own vectors. A document of one passage is
unaffected.

It counts as far as the vector leg is trusted for the question (`loci.search.confidence`):
where the embedder cannot read the brain, a passage's cosine to its own opening says nothing
either, and the cosines stand as they are.

Measured in docs/benchmarks-journal.md: MRR@10 on the Foam vault 0.820 → 0.885 and on the held-out
SilverBullet vault 0.749 → 0.810; SciFact dev within noise (0.7510 → 0.7502); DBPedia and
MS MARCO have one passage per document and do not move.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from loci.models import PassageContext


def in_context(
    leg: Sequence[tuple[int, float]], contexts: Mapping[int, PassageContext], trust: float = 1.0
) -> list[tuple[int, float]]:
    """The vector leg (chunk id, cosine; best first) scored in its documents' context, best
    first, as long as it was. The openings of its documents take part at their own cosine, so
    a document whose opening ranked below the leg's cut is still judged by it."""
    scores = dict(leg)  # a passage whose context is unknown (being indexed) keeps its cosine
    for chunk in list(scores):
        context = contexts.get(chunk)
        if context is None:
            continue
        lean = trust * (1.0 - min(max(context.coherence, 0.0), 1.0))
        scores[chunk] = (1.0 - lean) * context.cosine + lean * context.opening_cosine
        scores.setdefault(context.opening, context.opening_cosine)
    ranked = sorted(scores.items(), key=lambda pair: (-pair[1], pair[0]))
    # The leg keeps its length: fusion reads a passage missing from it at the leg's floor.
    return ranked[: len(leg)]
