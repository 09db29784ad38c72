"""Conversations with `ask` and their messages, each owned by one user in one brain, the same on
every backend.

A conversation's owner is its brain and user; the local CLI's conversations have no user, so
the owner test is `IS NOT DISTINCT FROM` (NULL matches NULL), which both backends have. The SQL
is portable (`loci.store.portable`); a backend's subclass says how JSON columns read back and
whether messages carry their brain (PostgreSQL's row-level security checks it on every row).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar, Protocol

from loci.answer.records import ChatMessage, Conversation, Feedback, RatedAnswer, Rating
from loci.errors import NotFound
from loci.store.portable import PortableDatabase, Row

OWNER = "brain_id = ? AND user_id IS NOT DISTINCT FROM ?"
_CONVERSATION = "id, brain_id, user_id, title, created_at, updated_at, origin"
_MESSAGE_FIELDS = (
    "id", "conversation_id", "role", "content", "citations", "intent", "created_at",
    "rating", "rating_reason", "rated_at",
)  # fmt: skip
_MESSAGE = ", ".join(_MESSAGE_FIELDS)


class ConversationStore(Protocol):
    """Conversations with `ask`: a conversation of another user or brain is `NotFound`."""

    def create(
        self, brain_id: int, user_id: int | None, title: str, origin: str | None = None
    ) -> Conversation: ...
    def get(self, brain_id: int, user_id: int | None, conversation_id: int) -> Conversation: ...
    def latest(self, brain_id: int, user_id: int | None) -> Conversation | None: ...
    def recent(
        self, brain_id: int, user_id: int | None, limit: int = 100
    ) -> list[Conversation]: ...
    def rename(
        self, brain_id: int, user_id: int | None, conversation_id: int, title: str
    ) -> Conversation: ...
    def delete(self, brain_id: int, user_id: int | None, conversation_id: int) -> None: ...
    def add_message(
        self,
        conversation_id: int,
        role: str,
        content: str,
        citations: Sequence[dict[str, Any]] = (),
        intent: str | None = None,
    ) -> ChatMessage: ...
    def messages(self, conversation_id: int) -> list[ChatMessage]: ...
    def rate(
        self, conversation_id: int, message_id: int, rating: Rating, reason: str | None
    ) -> ChatMessage:
        """Rate an answer of the conversation (replacing any rating); a question or a message
        of another conversation is `NotFound`. The caller checked who owns the conversation."""
        ...

    def rated(self, brain_id: int, rating: Rating | None = None) -> list[RatedAnswer]:
        """The brain's rated answers (of every user), oldest rating first."""
        ...


class ConversationTables(ABC):
    # The SQL of the current time; whether a message row names its conversation's brain.
    now: ClassVar[str]
    messages_carry_brain: ClassVar[bool]

    def __init__(self, db: PortableDatabase) -> None:
        self.db = db

    @abstractmethod
    def _json(self, value: Any) -> Any:
        """A JSON column's value as read back, decoded."""

    def _message(self, row: Row) -> ChatMessage:
        feedback = None
        if row["rating"] is not None:
            feedback = Feedback(row["rating"], row["rating_reason"], row["rated_at"])
        return ChatMessage(
            row["id"], row["conversation_id"], row["role"], row["content"],
            tuple(self._json(row["citations"])), row["intent"], row["created_at"], feedback,
        )  # fmt: skip

    # conversations ------------------------------------------------------------------------
    def create(
        self, brain_id: int, user_id: int | None, title: str, origin: str | None = None
    ) -> Conversation:
        rows = self.db.returning(
            "INSERT INTO conversations(brain_id, user_id, title, origin) VALUES (?, ?, ?, ?)"
            f" RETURNING {_CONVERSATION}",
            (brain_id, user_id, title, origin),
            brain_id,
        )
        return Conversation(**rows[0])

    def get(self, brain_id: int, user_id: int | None, conversation_id: int) -> Conversation:
        rows = self.db.query(
            f"SELECT {_CONVERSATION} FROM conversations WHERE id = ? AND {OWNER}",
            (conversation_id, brain_id, user_id),
            brain_id,
        )
        if not rows:
            raise NotFound(f"no conversation with id {conversation_id}")
        return Conversation(**rows[0])

    def latest(self, brain_id: int, user_id: int | None) -> Conversation | None:
        found = self.recent(brain_id, user_id, 1)
        return found[0] if found else None

    def recent(self, brain_id: int, user_id: int | None, limit: int = 100) -> list[Conversation]:
        rows = self.db.query(
            f"SELECT {_CONVERSATION} FROM conversations WHERE {OWNER}"
            " ORDER BY updated_at DESC, id DESC LIMIT ?",
            (brain_id, user_id, limit),
            brain_id,
        )
        return [Conversation(**r) for r in rows]

    def rename(
        self, brain_id: int, user_id: int | None, conversation_id: int, title: str
    ) -> Conversation:
        rows = self.db.returning(
            f"UPDATE conversations SET title = ? WHERE id = ? AND {OWNER}"
            f" RETURNING {_CONVERSATION}",
            (title, conversation_id, brain_id, user_id),
            brain_id,
        )
        if not rows:
            raise NotFound(f"no conversation with id {conversation_id}")
        return Conversation(**rows[0])

    def delete(self, brain_id: int, user_id: int | None, conversation_id: int) -> None:
        gone = self.db.returning(
            f"DELETE FROM conversations WHERE id = ? AND {OWNER} RETURNING id",
            (conversation_id, brain_id, user_id),
            brain_id,
        )
        if not gone:
            raise NotFound(f"no conversation with id {conversation_id}")

    # messages -----------------------------------------------------------------------------
    def add_message(
        self,
        conversation_id: int,
        role: str,
        content: str,
        citations: Sequence[dict[str, Any]] = (),
        intent: str | None = None,
    ) -> ChatMessage:
        db = self.db
        with db.transaction() as conn:
            owner = db.run(
                conn,
                f"UPDATE conversations SET updated_at = {self.now} WHERE id = ? RETURNING brain_id",
                (conversation_id,),
            )
            if not owner:
                raise NotFound(f"no conversation with id {conversation_id}")
            columns = "conversation_id, role, content, citations, intent"
            values: list[Any] = [
                conversation_id,
                role,
                content,
                json.dumps(list(citations)),
                intent,
            ]
            if self.messages_carry_brain:
                columns += ", brain_id"
                values.append(owner[0]["brain_id"])
            rows = db.run(
                conn,
                f"INSERT INTO messages({columns}) VALUES ({', '.join('?' for _ in values)})"
                f" RETURNING {_MESSAGE}",
                values,
            )
        return self._message(rows[0])

    def messages(self, conversation_id: int) -> list[ChatMessage]:
        rows = self.db.query(
            f"SELECT {_MESSAGE} FROM messages WHERE conversation_id = ? ORDER BY id",
            (conversation_id,),
        )
        return [self._message(r) for r in rows]

    def rate(
        self, conversation_id: int, message_id: int, rating: Rating, reason: str | None
    ) -> ChatMessage:
        rows = self.db.returning(
            f"UPDATE messages SET rating = ?, rating_reason = ?, rated_at = {self.now}"
            " WHERE id = ? AND conversation_id = ? AND role = 'assistant'"
            f" RETURNING {_MESSAGE}",
            (rating, reason, message_id, conversation_id),
        )
        if not rows:
            raise NotFound(f"no answer {message_id} in conversation {conversation_id}")
        return self._message(rows[0])

    def rated(self, brain_id: int, rating: Rating | None = None) -> list[RatedAnswer]:
        # The question is the user message just before the answer; the title stands in for
        # one that is missing (a conversation never starts with an answer, but be safe).
        columns = ", ".join(f"m.{c}" for c in _MESSAGE_FIELDS)
        rows = self.db.query(
            f"SELECT {columns}, coalesce((SELECT q.content FROM messages q"
            "  WHERE q.conversation_id = m.conversation_id AND q.id < m.id AND q.role = 'user'"
            "  ORDER BY q.id DESC LIMIT 1), c.title) AS question"
            " FROM messages m JOIN conversations c ON c.id = m.conversation_id"
            " WHERE c.brain_id = ? AND m.rating IS NOT NULL"
            " AND (CAST(? AS TEXT) IS NULL OR m.rating = ?)"
            " ORDER BY m.rated_at, m.id",
            (brain_id, rating, rating),
            brain_id,
        )
        return [RatedAnswer(r["question"], self._message(r)) for r in rows]
