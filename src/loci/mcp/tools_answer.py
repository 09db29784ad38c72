"""Tools that write from the brain: an answer with citations, a quiz, flashcards, a digest.

They use the chat model configured for Loci (or the caller's own, on the server); without one,
answers quote the best passages and study items are cloze questions — still cited.
"""

from __future__ import annotations

from typing import Annotated, Literal

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from loci.answer.events import final_answer
from loci.mcp.common import NOT_BLANK, BrainArg, Toolkit, chat_for, reading, tool_errors
from loci.mcp.outputs import (
    AnswerResult,
    Citation,
    Flashcard,
    Flashcards,
    Quiz,
    QuizQuestion,
)
from loci.models import SearchFilters
from loci.names import NAME_SCHEMA_PATTERN
from loci.wire.answer import ClaimOut
from loci.wire.digest import DigestOut
from loci.wire.subset import derived

BrainName = Annotated[str, Field(max_length=64, pattern=NAME_SCHEMA_PATTERN)]
Day = Annotated[str | None, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD")]

Question = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4000,
        pattern=NOT_BLANK,
        description="The question, in the user's words.",
    ),
]
Kinds = Annotated[
    list[Literal["file", "web", "note", "page", "evidence", "item"]],
    Field(max_length=6, description="Only documents of these kinds."),
]
AllTags = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=64)]],
    Field(max_length=20, description="Only documents with all these tags."),
]
OneFile = Annotated[
    str | None,
    Field(
        min_length=1,
        max_length=300,
        description="Only this file (its name or title; * and ? match any text).",
    ),
]
AlsoBrains = Annotated[
    list[BrainName],
    Field(
        max_length=10,
        description="Search these brains too (list_brains names the ones you can read); each "
        "citation names its brain.",
    ),
]
Topic = Annotated[
    str | None,
    Field(max_length=500, description="A topic to study; omit it for the recent documents."),
]


class AnswerTools:
    """The tools that write from the brain, as methods over the server's toolkit; `register`
    offers them."""

    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit
        self.loci = kit.loci

    @tool_errors
    def ask(
        self,
        question: Question,
        ctx: Context,
        brain: BrainArg = None,
        kinds: Kinds = [],  # noqa: B006 - pydantic copies defaults
        tags: AllTags = [],  # noqa: B006
        file: OneFile = None,
        after: Day = None,
        before: Day = None,
        also_brains: AlsoBrains = [],  # noqa: B006
    ) -> AnswerResult:
        """Answer a question from the user's brain only, with numbered citations [1], [2] to
        the exact file, page and passage. Slower than `search` (it searches, grades and writes);
        prefer `search` when you will write the answer yourself. If the brain does not hold the
        answer, it says so rather than guessing. Narrow it with kinds, tags, file and the dates
        documents were added (after inclusive, before exclusive); without dates, a phrase like
        "last month" in the question sets them."""
        caller = self.kit.caller(ctx)
        target = caller.brain(brain, "read")
        others = [caller.brain(name, "read") for name in dict.fromkeys(also_brains)]
        filters = SearchFilters(
            name=file,
            kinds=tuple(kinds),
            tags=tuple(tags),
            created_after=after,
            created_before=before,
        )
        # Kept as a conversation of the caller's, as the web app's are: it shows there too.
        with chat_for(caller) as chat:
            done = final_answer(
                self.loci.answers.converse(
                    target,
                    question,
                    user_id=caller.user_id,
                    chat=chat,
                    filters=filters,
                    brains=others,
                    may_save=caller.can_write,
                    actor=caller.actor,
                    origin="mcp",
                )
            )
        return AnswerResult(
            brain=target.name,
            answer=done.answer,
            citations=[derived(Citation, c) for c in done.citations],
            intent=done.intent,
            from_model=done.model is not None,
            conversation_id=done.conversation_id,
            claims=[ClaimOut.of(c) for c in done.claims] if done.claims is not None else None,
        )

    @tool_errors
    def quiz(
        self,
        ctx: Context,
        brain: BrainArg = None,
        topic: Topic = None,
        count: Annotated[int, Field(ge=1, le=10, description="How many questions.")] = 5,
    ) -> Quiz:
        """Make multiple-choice questions from the brain (or one topic in it) to test the user's
        recall; each has four choices, the correct index, an explanation and the passage it
        comes from."""
        caller = self.kit.caller(ctx)
        target = caller.brain(brain, "read")
        with chat_for(caller) as chat:
            questions = self.loci.answers.quiz(target, topic, count, chat)
        return Quiz(
            brain=target.name,
            questions=[
                QuizQuestion(
                    question=q.question,
                    choices=list(q.choices),
                    answer=q.answer,
                    explanation=q.explanation,
                    source=derived(Citation, q.source.citation()),
                )  # fmt: skip
                for q in questions
            ],
        )

    @tool_errors
    def flashcards(
        self,
        ctx: Context,
        brain: BrainArg = None,
        topic: Topic = None,
        count: Annotated[int, Field(ge=1, le=20, description="How many cards.")] = 10,
    ) -> Flashcards:
        """Make flashcards (front: a cue, back: the fact) from the brain or one topic in it,
        each citing the passage it comes from."""
        caller = self.kit.caller(ctx)
        target = caller.brain(brain, "read")
        with chat_for(caller) as chat:
            cards = self.loci.answers.flashcards(target, topic, count, chat)
        return Flashcards(
            brain=target.name,
            cards=[
                Flashcard(front=c.front, back=c.back, source=derived(Citation, c.source.citation()))
                for c in cards
            ],
        )

    @tool_errors
    def digest(
        self,
        ctx: Context,
        brain: BrainArg = None,
        since: Annotated[
            str,
            Field(
                max_length=20,
                description="How far back: 24h, 7d, 2w … from now, or a date YYYY-MM-DD.",
            ),
        ] = "7d",
    ) -> DigestOut:
        """Recap what came into the brain over a period (a daily or weekly review): documents
        added by kind, notes written, captures waiting in the inbox, graph pages created or
        changed with their new timeline entries, failed documents with reasons, themes, and a
        short summary citing the documents as [n] (summary.sources). Reads only."""
        caller = self.kit.caller(ctx)
        target = caller.brain(brain, "read")
        with chat_for(caller) as chat:
            made = self.loci.reviews.digest(target, since, chat)
        # The HTTP route's structure, defined once: both surfaces return the same digest.
        return DigestOut.model_validate(made.as_dict())


def register(server: MCPServer, kit: Toolkit) -> None:
    tools = AnswerTools(kit)
    server.add_tool(tools.ask, annotations=reading("Ask the brain"))
    server.add_tool(tools.quiz, annotations=reading("Quiz from the brain"))
    server.add_tool(tools.flashcards, annotations=reading("Flashcards from the brain"))
    server.add_tool(tools.digest, annotations=reading("Digest of the brain over a period"))
