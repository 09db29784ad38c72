"""What the answer pipeline may read from its brains, and what it says from that alone: the
passages around the one that matched, and a refusal that names what was not found.

`Retrieval` holds read-only callables for the brains an ask may read, with the ask's filters
already applied (`loci.answer.facade` builds it); `Asker` (`loci.answer.pipeline`) never writes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from loci.answer.events import Scoped
from loci.answer.quoting import Quoted, Reader, quote, unknown_words
from loci.answer.sources import Source, number
from loci.language import language_of
from loci.models import Document, Hit

NO_ANSWER = (
    "I couldn't find anything in this brain that answers that. Try other words, or add the "
    "document that has the answer."
)
CLOSEST = 3  # passages named under a refusal
NAMED_AT_MOST = 3  # words a refusal names as never mentioned
CLOSEST_CHARS = 160
# A document this short (about two pages) is read whole for an answer without a model.
CONTEXT_CHARS = 8_000


@dataclass(frozen=True)
class Retrieval:
    """What the pipeline may read from its brains — nothing else, and nothing it can write.
    Every function already applies the ask's filters."""

    brain: str  # the brain asked; a passage from another names its own (`brain_of`)
    search: Callable[[str, int, float], list[Hit]]  # query, limit, text weight
    documents: Callable[[], list[Document]]
    passages: Callable[[int], list[Hit]]  # a document's chunks, in order
    brain_of: Callable[[Hit], str] | None = None
    scope: Scoped | None = None  # brains and filters, when the caller narrowed or widened
    limits: str | None = None  # the filters in words, for "nothing found" replies
    # Whether any passage in scope has this word: a refusal names the question's words the
    # brain never mentions (`quoting.unknown_words`). None: not asked.
    mentions: Callable[[str], bool] | None = None
    reader: Reader = Reader()  # what reads the units' meaning (`loci.answer.quoting`)

    def number(self, hits: list[Hit]) -> list[Source]:
        if self.brain_of is None:
            return number(hits, self.brain)
        return [Source(s.number, s.hit, self.brain_of(s.hit)) for s in number(hits, self.brain)]

    def quote(self, question: str, sources: list[Source]) -> Quoted:
        """The units of `sources`, the most likely to state the answer first, and how likely an
        answer quoting them is to be right."""
        return quote(
            question,
            sources,
            self.reader,
            question_language=language_of(question),
            languages=[language_of(s.hit.text) for s in sources],
        )

    def in_context(self, sources: list[Source]) -> list[Source]:
        """The other passages of the best source's document, when it is short: the sentence that
        answers is often a passage away from the one that matched ("Three placements are
        supported:" under the heading that named them). Numbered after `sources`; quoted only
        if a sentence of theirs is chosen, and then cited like any other."""
        if not sources:
            return []
        passages = self.passages(sources[0].hit.citation.document_id)
        if sum(len(hit.text) for hit in passages) > CONTEXT_CHARS:
            return []
        have = {s.hit.chunk_id for s in sources}
        extra = [hit for hit in passages if hit.chunk_id not in have]
        return [replace(s, number=s.number + len(sources)) for s in self.number(extra)]

    def refusal(self, question: str, sources: list[Source]) -> str:
        """No answer: where it was looked for, what the brain never mentions, and the closest
        passages offered as what they are."""
        return self.nothing_found() + self.unmentioned(question, sources) + closest(sources)

    def nothing_found(self) -> str:
        """No answer, and where that was looked for: an empty filtered search says so rather
        than answering from nothing."""
        if self.limits is None and self.where() == "this brain":
            return NO_ANSWER
        if self.limits is None:
            return f"I couldn't find anything in {self.where()} that answers that." + NO_ANSWER[
                NO_ANSWER.index(" Try") :]  # fmt: skip
        return (
            f"I found nothing in {self.where()} among {self.limits} that answers that. Widen or "
            "drop the filters, or ask another way."
        )

    def unmentioned(self, question: str, sources: list[Source]) -> str:
        """What the brain does not mention: "Nothing in this brain mentions passport." tells a
        reader what to add, or that the question is about something else."""
        words = unknown_words(question, self.mentions)
        if not words:
            return ""
        among = f" among {self.limits}" if self.limits else ""
        if len(words) > NAMED_AT_MOST:  # not a missing name: the brain speaks other words
            return f"\n\nMost of the question's words appear nowhere in {self.where()}{among}."
        listed = ", ".join(words[:-1]) + " or " + words[-1] if len(words) > 1 else words[0]
        return f"\n\nNothing in {self.where()}{among} mentions {listed}."

    def where(self) -> str:
        brains = self.scope.brains if self.scope is not None and self.scope.brains else [self.brain]
        return f"the brains {', '.join(brains)}" if len(brains) > 1 else "this brain"


def closest(sources: list[Source]) -> str:
    """What came nearest, offered as what it is — not an answer — so a reader can judge whether
    the brain is missing the document or the question needs other words. Not cited: a refusal
    rests on no source."""
    if not sources:
        return ""
    lines = []
    for source in sources[:CLOSEST]:
        text = " ".join(source.hit.text.split())
        if len(text) > CLOSEST_CHARS:
            text = text[:CLOSEST_CHARS].rsplit(" ", 1)[0] + " …"
        lines.append(f"- {source.label()}: “{text}”")
    return "\n\nThe closest passages, which do not answer it:\n" + "\n".join(lines)
