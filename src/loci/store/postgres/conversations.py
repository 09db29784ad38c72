"""Conversations with `ask` and their messages in PostgreSQL (the logic and SQL are shared:
`loci.store.conversation_tables`). Messages carry their brain for row-level security (migration
3); citations are a json column, which psycopg decodes."""

from __future__ import annotations

from typing import Any

from loci.store.conversation_tables import ConversationTables


class PostgresConversations(ConversationTables):
    now = "loci_now()"
    messages_carry_brain = True

    def _json(self, value: Any) -> Any:
        return value
