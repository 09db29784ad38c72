"""Conversations as stored: a conversation, its messages (an answer with its citations) and how
its owner rated an answer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal


@dataclass(frozen=True)
class Conversation:
    id: int
    brain_id: int
    user_id: int | None  # None: the local owner's (the CLI, MCP over stdio)
    title: str
    created_at: str
    updated_at: str
    # Where it was started: web, api, cli, mcp or slack (None: before that was kept).
    origin: str | None = None


@dataclass(frozen=True)
class ChatMessage:
    id: int
    conversation_id: int
    role: Literal["user", "assistant"]
    content: str
    citations: tuple[dict[str, Any], ...]
    intent: str | None
    created_at: str
    feedback: Feedback | None = None  # only answers are rated


Rating = Literal["up", "down"]


@dataclass(frozen=True)
class Feedback:
    """How the conversation's owner rated an answer; rating it again replaces this."""

    rating: Rating
    reason: str | None
    rated_at: str


@dataclass(frozen=True)
class RatedAnswer:
    """A rated answer with the question it answered (the user message before it)."""

    question: str
    answer: ChatMessage
