"""OAuth clients, codes and refresh tokens in PostgreSQL (the logic and SQL are shared:
`loci.store.oauth_tables`). They belong to no brain: migration 21 lets only transactions that
span brains see them, which is where these queries run. JSON columns are jsonb, which psycopg
decodes."""

from __future__ import annotations

from typing import Any

from loci.store.oauth_tables import OAuthTables

# pg_advisory_xact_lock(REGISTRATION_LOCK): one registration at a time, across every process
# sharing the database (READ COMMITTED alone would let two count the same rows and both insert).
REGISTRATION_LOCK = 7_300_004


class PostgresOAuth(OAuthTables):
    def _json(self, value: Any) -> Any:
        return value

    def _one_registration_at_a_time(self, conn: Any) -> None:
        self.db.run(conn, "SELECT pg_advisory_xact_lock(?)", (REGISTRATION_LOCK,))
