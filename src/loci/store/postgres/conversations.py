"""Conversations with `ask` and their messages, each owned by one user in one brain."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from loci.errors import NotFound
from loci.models import ChatMessage, Conversation, Feedback, RatedAnswer, Rating
from loci.store.postgres.connection import Database, Row

# IS NOT DISTINCT FROM: the CLI's conversations have no user (NULL)
OWNER = "brain_id = %s AND user_id IS NOT DISTINCT FROM %s"
_CONVERSATION = "id, brain_id, user_id, title, created_at, updated_at"
_MESSAGE = (
    "id, conversation_id, role, content, citations, intent, created_at,"
    " rating, rating_reason, rated_at"
)


def _conversation(row: Row) -> Conversation:
    return Conversation(**row)


def _message(row: Row) -> ChatMessage:
    fields = {k: v for k, v in row.items() if k not in {"rating", "rating_reason", "rated_at"}}
    feedback = None
    if row["rating"] is not None:
        feedback = Feedback(row["rating"], row["rating_reason"], row["rated_at"])
    return ChatMessage(**{**fields, "citations": tuple(row["citations"]), "feedback": feedback})


class PostgresConversations:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, brain_id: int, user_id: int | None, title: str) -> Conversation:
        row = self.db.row(
            "INSERT INTO conversations(brain_id, user_id, title) VALUES (%s, %s, %s)"
            f" RETURNING {_CONVERSATION}",
            (brain_id, user_id, title),
            brain_id,
        )
        assert row is not None
        return _conversation(row)

    def get(self, brain_id: int, user_id: int | None, conversation_id: int) -> Conversation:
        row = self.db.row(
            f"SELECT {_CONVERSATION} FROM conversations WHERE id = %s AND {OWNER}",
            (conversation_id, brain_id, user_id),
            brain_id,
        )
        if row is None:
            raise NotFound(f"no conversation with id {conversation_id}")
        return _conversation(row)

    def latest(self, brain_id: int, user_id: int | None) -> Conversation | None:
        found = self.recent(brain_id, user_id, 1)
        return found[0] if found else None

    def recent(self, brain_id: int, user_id: int | None, limit: int = 100) -> list[Conversation]:
        rows = self.db.rows(
            f"SELECT {_CONVERSATION} FROM conversations WHERE {OWNER}"
            " ORDER BY updated_at DESC, id DESC LIMIT %s",
            (brain_id, user_id, limit),
            brain_id,
        )
        return [_conversation(r) for r in rows]

    def rename(
        self, brain_id: int, user_id: int | None, conversation_id: int, title: str
    ) -> Conversation:
        row = self.db.row(
            f"UPDATE conversations SET title = %s WHERE id = %s AND {OWNER}"
            f" RETURNING {_CONVERSATION}",
            (title, conversation_id, brain_id, user_id),
            brain_id,
        )
        if row is None:
            raise NotFound(f"no conversation with id {conversation_id}")
        return _conversation(row)

    def delete(self, brain_id: int, user_id: int | None, conversation_id: int) -> None:
        gone = self.db.rows(
            f"DELETE FROM conversations WHERE id = %s AND {OWNER} RETURNING id",
            (conversation_id, brain_id, user_id),
            brain_id,
        )
        if not gone:
            raise NotFound(f"no conversation with id {conversation_id}")

    def add_message(
        self,
        conversation_id: int,
        role: str,
        content: str,
        citations: Sequence[dict[str, Any]] = (),
        intent: str | None = None,
    ) -> ChatMessage:
        with self.db.tx() as cur:
            cur.execute(
                "UPDATE conversations SET updated_at = loci_now() WHERE id = %s RETURNING brain_id",
                (conversation_id,),
            )
            owner = cur.fetchone()
            if owner is None:
                raise NotFound(f"no conversation with id {conversation_id}")
            cur.execute(
                "INSERT INTO messages(conversation_id, brain_id, role, content, citations, intent)"
                f" VALUES (%s, %s, %s, %s, %s, %s) RETURNING {_MESSAGE}",
                (
                    conversation_id,
                    owner["brain_id"],
                    role,
                    content,
                    json.dumps(list(citations)),
                    intent,
                ),
            )
            row = cur.fetchone()
        assert row is not None
        return _message(row)

    def messages(self, conversation_id: int) -> list[ChatMessage]:
        rows = self.db.rows(
            f"SELECT {_MESSAGE} FROM messages WHERE conversation_id = %s ORDER BY id",
            (conversation_id,),
        )
        return [_message(r) for r in rows]

    def rate(
        self, conversation_id: int, message_id: int, rating: Rating, reason: str | None
    ) -> ChatMessage:
        row = self.db.row(
            "UPDATE messages SET rating = %s, rating_reason = %s, rated_at = loci_now()"
            " WHERE id = %s AND conversation_id = %s AND role = 'assistant'"
            f" RETURNING {_MESSAGE}",
            (rating, reason, message_id, conversation_id),
        )
        if row is None:
            raise NotFound(f"no answer {message_id} in conversation {conversation_id}")
        return _message(row)

    def rated(self, brain_id: int, rating: Rating | None = None) -> list[RatedAnswer]:
        # As on SQLite: the question is the user message just before the answer.
        columns = ", ".join(f"m.{c.strip()}" for c in _MESSAGE.split(","))
        rows = self.db.rows(
            f"SELECT {columns}, coalesce((SELECT q.content FROM messages q"
            "  WHERE q.conversation_id = m.conversation_id AND q.id < m.id AND q.role = 'user'"
            "  ORDER BY q.id DESC LIMIT 1), c.title) AS question"
            " FROM messages m JOIN conversations c ON c.id = m.conversation_id"
            " WHERE m.brain_id = %s AND m.rating IS NOT NULL"
            " AND (%s::text IS NULL OR m.rating = %s)"
            " ORDER BY m.rated_at, m.id",
            (brain_id, rating, rating),
            brain_id,
        )
        return [
            RatedAnswer(r["question"], _message({k: v for k, v in r.items() if k != "question"}))
            for r in rows
        ]
