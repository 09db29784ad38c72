"""What `ask` tells its caller as it works: one event per step, then the answer's tokens, then
`done` with the answer, its citations and the time each step took (or `error`).

    type      event        what it says
    status    Status       a line of progress for a person
    route     Routed       the intent the question was routed to, and by whom
    scope     Scoped       the brains and filters searched, when narrowed or widened
    rewrite   Rewritten    a follow-up rewritten to stand alone
    queries   Queries      the queries searched
    grading   Graded       how many passages were relevant, and what that decided
    sources   Sources      the numbered passages the answer may cite
    token     Token        a piece of the answer, as it is written
    done      Done         the answer, the sources it cites, the intent, each step's time
    error     Failed       why there is no answer

Code reads an event's attributes; `to_json()` is the event's data on the wire (the SSE stream's
`data`, `loci ask --json`), whose field names clients rely on. `final_answer` turns a stream
into its `Done`, for surfaces that show only the end.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from loci.errors import LociError
from loci.models import SearchFilters

if TYPE_CHECKING:  # `loci ask` imports this module at start-up; grading brings an HTTP client
    from loci.answer.grading import Decision
    from loci.answer.support import Claim
    from loci.wire.citation import Citation  # a numbered source (`Source.citation()`)

EventType = Literal[
    "status",
    "route",
    "scope",
    "rewrite",
    "queries",
    "grading",
    "sources",
    "token",
    "revise",
    "check",
    "done",
    "error",
]


class AskEvent:
    """One thing `ask` says; `type` names it on the wire."""

    type: ClassVar[EventType]

    def to_json(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def data(self) -> dict[str, Any]:
        """The wire form, under the name events had before they were typed."""
        return self.to_json()


@dataclass(frozen=True)
class Status(AskEvent):
    message: str
    type: ClassVar[EventType] = "status"

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message}


@dataclass(frozen=True)
class Routed(AskEvent):
    intent: str
    confidence: float
    by: str  # "model" or "rules"
    target: str | None = None  # the document or topic the intent is about
    type: ClassVar[EventType] = "route"

    def to_json(self) -> dict[str, Any]:
        return {
            "intent": self.intent,
            "confidence": self.confidence,
            "by": self.by,
            "target": self.target,
        }


@dataclass(frozen=True)
class Scoped(AskEvent):
    brains: tuple[str, ...]
    filters: SearchFilters
    from_question: str | None  # the time phrase the dates were read from, if they were
    description: str  # the filters in words
    type: ClassVar[EventType] = "scope"

    def to_json(self) -> dict[str, Any]:
        f = self.filters
        return {
            "brains": list(self.brains),
            "filters": {
                "name": f.name,
                "kinds": list(f.kinds),
                "tags": list(f.tags),
                "created_after": f.created_after,
                "created_before": f.created_before,
            },
            "from_question": self.from_question,
            "description": self.description,
        }


@dataclass(frozen=True)
class Rewritten(AskEvent):
    original: str
    rewritten: str
    by: str  # "model" or "rules"
    type: ClassVar[EventType] = "rewrite"

    def to_json(self) -> dict[str, Any]:
        return {"original": self.original, "rewritten": self.rewritten, "by": self.by}


@dataclass(frozen=True)
class Queries(AskEvent):
    queries: tuple[str, ...]
    by: str  # "model" when it added phrasings, else "none"
    type: ClassVar[EventType] = "queries"

    def to_json(self) -> dict[str, Any]:
        return {"queries": list(self.queries), "by": self.by}


@dataclass(frozen=True)
class Graded(AskEvent):
    decision: Decision
    relevant: int
    partially_relevant: int
    total: int
    average: float
    by: str  # "model" or "rules"
    type: ClassVar[EventType] = "grading"

    def to_json(self) -> dict[str, Any]:
        return {
            "decision": self.decision,
            "relevant": self.relevant,
            "partially_relevant": self.partially_relevant,
            "total": self.total,
            "average": self.average,
            "by": self.by,
        }


@dataclass(frozen=True)
class Sources(AskEvent):
    sources: tuple[Citation, ...]
    type: ClassVar[EventType] = "sources"

    def to_json(self) -> dict[str, Any]:
        return {"sources": [s.model_dump(mode="json") for s in self.sources]}


@dataclass(frozen=True)
class Token(AskEvent):
    text: str
    type: ClassVar[EventType] = "token"

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text}


@dataclass(frozen=True)
class Revise(AskEvent):
    """The text streamed so far is withdrawn: the model answers again, and its new words
    follow (a reader clears what it showed)."""

    reason: str
    type: ClassVar[EventType] = "revise"

    def to_json(self) -> dict[str, Any]:
        return {"reason": self.reason}


@dataclass(frozen=True)
class Checked(AskEvent):
    """A model's answer held against its citations, sentence by sentence
    (`loci.answer.support`): each claim, and whether the passages it cites support it."""

    claims: tuple[Claim, ...]
    type: ClassVar[EventType] = "check"

    def to_json(self) -> dict[str, Any]:
        return {
            "claims": [c.to_json() for c in self.claims],
            "unsupported": sum(not c.supported for c in self.claims),
        }


@dataclass(frozen=True)
class Done(AskEvent):
    """The answer. An answer without sources (a greeting, "saved", "nothing found") keeps the
    defaults; `Answers.converse` adds the conversation and message it was kept as, and
    `loci ask --save` the page it was saved to."""

    answer: str
    intent: str
    citations: tuple[Citation, ...] = ()  # the sources the answer cites, in order
    decision: Decision = "sufficient"
    model: str | None = None  # None: no model wrote it (rules and extracts)
    fallbacks: tuple[str, ...] = ()  # the steps where the model failed and rules stood in
    timings: Mapping[str, float] = field(default_factory=dict)  # ms per step, and "total"
    scope: Scoped | None = None
    conversation_id: int | None = None
    message_id: int | None = None
    saved: str | None = None  # the path of the analysis page
    # A model's answer held against its citations (None: not checked, no model wrote it).
    claims: tuple[Claim, ...] | None = None
    type: ClassVar[EventType] = "done"

    def kept(self) -> tuple[int, int]:
        """The conversation and the message this answer was kept as."""
        if self.conversation_id is None or self.message_id is None:
            raise LociError("this answer was not kept in a conversation")
        return self.conversation_id, self.message_id

    def to_json(self) -> dict[str, Any]:
        wire: dict[str, Any] = {
            "answer": self.answer,
            "citations": [c.model_dump(mode="json") for c in self.citations],
            "intent": self.intent,
            "decision": self.decision,
            "model": self.model,
            "fallbacks": list(self.fallbacks),
            "timings": dict(self.timings),
            "scope": self.scope.to_json() if self.scope is not None else None,
            "claims": [c.to_json() for c in self.claims] if self.claims is not None else None,
        }
        # Only what was added: `ask` alone names no conversation, and only --save a page.
        if self.conversation_id is not None:
            wire["conversation_id"] = self.conversation_id
        if self.message_id is not None:
            wire["message_id"] = self.message_id
        if self.saved is not None:
            wire["saved"] = self.saved
        return wire


@dataclass(frozen=True)
class Failed(AskEvent):
    """The error that ended the stream, for a stream that cannot raise (SSE)."""

    error: LociError
    type: ClassVar[EventType] = "error"

    def to_json(self) -> dict[str, Any]:
        return {"error": self.error.code, "message": self.error.message}


def final_answer(events: Iterable[AskEvent]) -> Done:
    """Run the stream to its end and return its answer; the error that ended it is raised."""
    done: Done | None = None
    for event in events:
        if isinstance(event, Failed):
            raise event.error
        if isinstance(event, Done):
            done = event
    if done is None:
        raise LociError("the answer stopped before it was complete; ask again")
    return done
