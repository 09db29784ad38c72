"""Asking, conversations and the study tools (quiz, flashcards)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from loci.api.schemas.common import BRAIN_NAME, MAX_ID, NOT_BLANK, RequestIn, json_integers
from loci.api.schemas.search import FiltersIn

BrainName = Annotated[str, Field(min_length=1, max_length=64, pattern=BRAIN_NAME)]


class AskIn(RequestIn):
    question: str = Field(min_length=1, max_length=4000, pattern=NOT_BLANK)
    conversation_id: int | None = Field(
        default=None,
        ge=1,
        le=MAX_ID,
        description="continue this conversation (its history resolves follow-ups)",
    )
    filters: FiltersIn = Field(
        default_factory=FiltersIn,
        description="narrow every search the answer makes (file name, kinds, tags, dates the "
        'documents were added); without dates, a time phrase in the question ("last month", '
        '"recently") sets them when anything added then matches',
    )
    brains: list[BrainName] = Field(
        default_factory=list,
        max_length=20,
        description="search these brains too (each one you can read; an unknown one is a 404); "
        "each citation names its brain. The conversation stays in the brain of the path",
    )

    _integers = json_integers("conversation_id")


class ConversationIn(RequestIn):
    title: str = Field(min_length=1, max_length=200, pattern=NOT_BLANK)


class FeedbackIn(RequestIn):
    rating: Literal["up", "down"]
    reason: str | None = Field(
        default=None, max_length=1000, description="what was right or wrong, in a few words"
    )


class StudyIn(RequestIn):
    topic: str | None = Field(default=None, max_length=500, description="default: recent documents")
    count: int = Field(default=5, ge=1, le=30)

    _integers = json_integers("count")
