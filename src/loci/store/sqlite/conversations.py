"""Conversations with `ask` and their messages in SQLite (the logic and SQL are shared:
`loci.store.conversation_tables`). Citations are a JSON array in a TEXT column."""

from __future__ import annotations

import json
from typing import Any

from loci.store.conversation_tables import ConversationTables
from loci.store.sqlite.rows import NOW


class SqliteConversations(ConversationTables):
    now = NOW
    messages_carry_brain = False  # a message's brain is its conversation's

    def _json(self, value: Any) -> Any:
        return json.loads(value)
