"""Asking, conversations and the study tools (quiz, flashcards)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from loci.answer.events import Done
from loci.answer.records import Conversation
from loci.wire.citation import Citation
from loci.wire.graph import GraphSummaryOut
from loci.wire.mirror import Mirror, shown


class ClaimOut(Mirror):
    """A sentence of a model's answer, held against the passages it cites."""

    text: str
    sources: list[int] = Field(description="the numbers it cites")
    supported: bool = Field(description="false: its passages do not say it")
    reason: str = Field(description='why not ("“240” is not in [1]"); empty when supported')


class AnswerOut(BaseModel):
    answer: str = Field(description="the answer, citing sources as [1], [2], …")
    citations: list[Citation] = Field(
        description="what each number cites: name, page, lines, section (`where`), snippet"
    )
    intent: str
    conversation_id: int = Field(description="send it back to ask a follow-up")
    message_id: int = Field(description="the answer's message: save it with …/save")
    decision: str = Field(description="sufficient, needs_expansion or no_relevant_sources")
    scope: dict[str, Any] | None = Field(
        default=None,
        description="the brains and filters searched, when the request or the question's time "
        "phrase narrowed or widened them (`from_question` names the phrase)",
    )
    claims: list[ClaimOut] | None = Field(
        default=None,
        description="a model's answer, sentence by sentence, held against the passages each "
        "cites; null when no model wrote it",
    )

    @classmethod
    def of(cls, done: Done) -> AnswerOut:
        conversation_id, message_id = done.kept()
        return cls(
            answer=done.answer,
            citations=list(done.citations),
            intent=done.intent,
            conversation_id=conversation_id,
            message_id=message_id,
            decision=done.decision,
            scope=done.scope.to_json() if done.scope is not None else None,
            claims=[ClaimOut.of(c) for c in done.claims] if done.claims is not None else None,
        )


class SavedAnswerOut(BaseModel):
    document: GraphSummaryOut = Field(description="the analysis page in research/")
    created: bool = Field(description="false: the answer was saved before; this is that page")


class ConversationOut(BaseModel):
    id: int
    title: str
    created_at: str
    updated_at: str
    origin: str | None = Field(
        description="where it was started: web, api, cli (the command line), mcp (an agent) or "
        "slack; null when not known"
    )
    local: bool = Field(
        description="true: started on the server's machine (the CLI, MCP over stdio), which "
        "shows it to the workspace's admins"
    )

    @classmethod
    def of(cls, conversation: Conversation) -> ConversationOut:
        return shown(cls, conversation, local=conversation.user_id is None)


class FeedbackOut(Mirror):
    rating: Literal["up", "down"]
    reason: str | None
    rated_at: str


class MessageOut(Mirror):
    id: int
    conversation_id: int
    role: Literal["user", "assistant"]
    content: str
    # As kept when the answer was given: an older answer's citations may lack fields added since,
    # so they are shown as stored rather than read as today's `Citation`.
    citations: list[dict[str, Any]]
    intent: str | None
    created_at: str
    feedback: FeedbackOut | None = Field(
        description="the owner's rating of an answer (null: not rated, or a question)"
    )


class ConversationDetailOut(BaseModel):
    conversation: ConversationOut
    messages: list[MessageOut]


class QuizQuestionOut(BaseModel):
    question: str
    choices: list[str]
    answer: int = Field(description="index of the correct choice")
    explanation: str
    source: Citation = Field(description="the passage the question comes from")


class FlashcardOut(BaseModel):
    front: str
    back: str
    source: Citation
