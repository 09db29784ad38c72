"""Users, brain members, API tokens and web sessions in SQLite (the logic and SQL are shared:
`loci.store.account_tables`). User names are `COLLATE NOCASE`, so plain comparisons with a
name's key (`loci.names.user_key`, ASCII) and ordering already disregard case; JSON columns
are TEXT."""

from __future__ import annotations

import json
from typing import Any

import apsw

from loci.store.account_tables import AccountTables
from loci.store.sqlite.rows import NOW


class SqliteAccounts(AccountTables):
    now = NOW
    name_is = "u.name = ?"
    by_name = "u.name"
    unique_error = apsw.ConstraintError

    def _json(self, value: Any) -> Any:
        return json.loads(value)
