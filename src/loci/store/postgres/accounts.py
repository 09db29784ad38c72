"""Users, brain members, API tokens and web sessions in PostgreSQL (the logic and SQL are
shared: `loci.store.account_tables`); JSON columns are jsonb, which psycopg decodes."""

from __future__ import annotations

from typing import Any

from psycopg import errors

from loci.store.account_tables import AccountTables


class PostgresAccounts(AccountTables):
    now = "loci_now()"
    unique_error = errors.UniqueViolation

    def _json(self, value: Any) -> Any:
        return value
