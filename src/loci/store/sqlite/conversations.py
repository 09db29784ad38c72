"""Conversations with `ask` and their messages, each owned by one user in one brain."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from loci.errors import NotFound
from loci.models import ChatMessage, Conversation, Feedback, RatedAnswer, Rating
from loci.store.sqlite.connection import Database, Row

NOW = "strftime('%Y-%m-%dT%H:%M:%fZ','now')"
OWNER = "brain_id = ? AND user_id IS ?"  # IS: the CLI's conversations have no user


def _conversation(row: Row) -> Conversation:
    return Conversation(
        row["id"], row["brain_id"], row["user_id"], row["title"], row["created_at"],
        row["updated_at"],
    )  # fmt: skip


def _message(row: Row) -> ChatMessage:
    feedback = None
    if row["rating"] is not None:
        feedback = Feedback(row["rating"], row["rating_reason"], row["rated_at"])
    return ChatMessage(
        row["id"], row["conversation_id"], row["role"], row["content"],
        tuple(json.loads(row["citations"])), row["intent"], row["created_at"], feedback,
    )  # fmt: skip


class SqliteConversations:
    def __init__(self, db: Database) -> None:
        self.db = db

    def create(self, brain_id: int, user_id: int | None, title: str) -> Conversation:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO conversations(brain_id, user_id, title) VALUES (?,?,?)",
                (brain_id, user_id, title),
            )
            conversation_id = conn.last_insert_rowid()
        return self.get(brain_id, user_id, conversation_id)

    def get(self, brain_id: int, user_id: int | None, conversation_id: int) -> Conversation:
        row = self.db.row(
            f"SELECT * FROM conversations WHERE id = ? AND {OWNER}",
            (conversation_id, brain_id, user_id),
        )
        if row is None:
            raise NotFound(f"no conversation with id {conversation_id}")
        return _conversation(row)

    def latest(self, brain_id: int, user_id: int | None) -> Conversation | None:
        row = self.db.row(
            f"SELECT * FROM conversations WHERE {OWNER} ORDER BY updated_at DESC, id DESC LIMIT 1",
            (brain_id, user_id),
        )
        return _conversation(row) if row else None

    def recent(self, brain_id: int, user_id: int | None, limit: int = 100) -> list[Conversation]:
        rows = self.db.rows(
            f"SELECT * FROM conversations WHERE {OWNER} ORDER BY updated_at DESC, id DESC LIMIT ?",
            (brain_id, user_id, limit),
        )
        return [_conversation(r) for r in rows]

    def rename(
        self, brain_id: int, user_id: int | None, conversation_id: int, title: str
    ) -> Conversation:
        self.get(brain_id, user_id, conversation_id)
        with self.db.write() as conn:
            conn.execute(
                "UPDATE conversations SET title = ? WHERE id = ?", (title, conversation_id)
            )
        return self.get(brain_id, user_id, conversation_id)

    def delete(self, brain_id: int, user_id: int | None, conversation_id: int) -> None:
        self.get(brain_id, user_id, conversation_id)
        with self.db.write() as conn:
            conn.execute("DELETE FROM conversations WHERE id = ?", (conversation_id,))

    def add_message(
        self,
        conversation_id: int,
        role: str,
        content: str,
        citations: Sequence[dict[str, Any]] = (),
        intent: str | None = None,
    ) -> ChatMessage:
        with self.db.write() as conn:
            conn.execute(
                "INSERT INTO messages(conversation_id, role, content, citations, intent)"
                " VALUES (?,?,?,?,?)",
                (conversation_id, role, content, json.dumps(list(citations)), intent),
            )
            message_id = conn.last_insert_rowid()
            conn.execute(
                f"UPDATE conversations SET updated_at = {NOW} WHERE id = ?", (conversation_id,)
            )
        row = self.db.row("SELECT * FROM messages WHERE id = ?", (message_id,))
        assert row is not None
        return _message(row)

    def messages(self, conversation_id: int) -> list[ChatMessage]:
        rows = self.db.rows(
            "SELECT * FROM messages WHERE conversation_id = ? ORDER BY id", (conversation_id,)
        )
        return [_message(r) for r in rows]

    def rate(
        self, conversation_id: int, message_id: int, rating: Rating, reason: str | None
    ) -> ChatMessage:
        with self.db.write() as conn:
            conn.execute(
                f"UPDATE messages SET rating = ?, rating_reason = ?, rated_at = {NOW}"
                " WHERE id = ? AND conversation_id = ? AND role = 'assistant'",
                (rating, reason, message_id, conversation_id),
            )
            changed = conn.changes()
        if not changed:
            raise NotFound(f"no answer {message_id} in conversation {conversation_id}")
        row = self.db.row("SELECT * FROM messages WHERE id = ?", (message_id,))
        assert row is not None
        return _message(row)

    def rated(self, brain_id: int, rating: Rating | None = None) -> list[RatedAnswer]:
        # The question is the user message just before the answer; the title stands in for
        # one that is missing (a conversation never starts with an answer, but be safe).
        rows = self.db.rows(
            "SELECT m.*, coalesce((SELECT q.content FROM messages q"
            "  WHERE q.conversation_id = m.conversation_id AND q.id < m.id AND q.role = 'user'"
            "  ORDER BY q.id DESC LIMIT 1), c.title) AS question"
            " FROM messages m JOIN conversations c ON c.id = m.conversation_id"
            " WHERE c.brain_id = ? AND m.rating IS NOT NULL AND (? IS NULL OR m.rating = ?)"
            " ORDER BY m.rated_at, m.id",
            (brain_id, rating, rating),
        )
        return [RatedAnswer(r["question"], _message(r)) for r in rows]
