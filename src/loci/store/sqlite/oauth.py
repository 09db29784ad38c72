"""OAuth clients, codes and refresh tokens in SQLite (the logic and SQL are shared:
`loci.store.oauth_tables`); JSON columns are TEXT."""

from __future__ import annotations

import json
from typing import Any

from loci.store.oauth_tables import OAuthTables


class SqliteOAuth(OAuthTables):
    def _json(self, value: Any) -> Any:
        return json.loads(value)

    def _one_registration_at_a_time(self, conn: Any) -> None:
        pass  # the transaction began with BEGIN IMMEDIATE: it holds the database's write lock
