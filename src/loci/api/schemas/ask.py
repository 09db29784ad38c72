"""Asking, conversations and the study tools (quiz, flashcards)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from loci.api.schemas.common import MAX_ID, NOT_BLANK, json_integers
from loci.mirror import Mirror


class AskIn(BaseModel):
    question: str = Field(min_length=1, max_length=4000, pattern=NOT_BLANK)
    conversation_id: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ID,
        description="continue this conversation (its history resolves follow-ups)",
    )

    _integers = json_integers("conversation_id")


class AnswerOut(BaseModel):
    answer: str = Field(description="the answer, citing sources as [1], [2], …")
    citations: list[dict[str, Any]] = Field(
        description="what each number cites: name, page, lines, section (`where`), snippet"
    )
    intent: str
    conversation_id: int = Field(description="send it back to ask a follow-up")


class ConversationIn(BaseModel):
    title: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)


class ConversationOut(Mirror):
    id: int
    title: str
    created_at: str
    updated_at: str


class MessageOut(Mirror):
    id: int
    role: Literal["user", "assistant"]
    content: str
    citations: list[dict[str, Any]]
    intent: str | None
    created_at: str


class ConversationDetailOut(BaseModel):
    conversation: ConversationOut
    messages: list[MessageOut]


class StudyIn(BaseModel):
    topic: str | None = Field(default=None, max_length=500, description="default: recent documents")
    count: int = Field(default=5, ge=1, le=30)

    _integers = json_integers("count")


class QuizQuestionOut(BaseModel):
    question: str
    choices: list[str]
    answer: int = Field(description="index of the correct choice")
    explanation: str
    source: dict[str, Any] = Field(description="the passage the question comes from")


class FlashcardOut(BaseModel):
    front: str
    back: str
    source: dict[str, Any]
