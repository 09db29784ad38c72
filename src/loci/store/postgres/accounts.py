"""Users, brain members, API tokens and web sessions in PostgreSQL (the logic and SQL are
shared: `loci.store.account_tables`). Names are unique by `lower(name)` and found by their
key (`loci.names.user_key`); JSON columns are jsonb, which psycopg decodes."""

from __future__ import annotations

from typing import Any

from psycopg import errors

from loci.store.account_tables import AccountTables


class PostgresAccounts(AccountTables):
    now = "loci_now()"
    # The "C" collation folds ASCII only, whatever the server's locale (a Turkish one would
    # make lower('I') a dotless ı): the same fold as the key the parameter already is.
    name_is = 'lower(u.name COLLATE "C") = ?'
    by_name = "lower(u.name), u.name"
    unique_error = errors.UniqueViolation

    def _json(self, value: Any) -> Any:
        return value
