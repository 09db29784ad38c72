"""OAuth clients, codes and refresh tokens in PostgreSQL (the logic and SQL are shared:
`loci.store.oauth_tables`). They belong to no brain: migration 21 lets only transactions that
span brains see them, which is where these queries run. JSON columns are jsonb, which psycopg
decodes."""

from __future__ import annotations

from typing import Any

from loci.store.oauth_tables import OAuthTables


class PostgresOAuth(OAuthTables):
    def _json(self, value: Any) -> Any:
        return value
