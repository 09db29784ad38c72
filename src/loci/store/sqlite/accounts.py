"""Users, brain members, API tokens and web sessions in SQLite (the logic and SQL are shared:
`loci.store.account_tables`); JSON columns are TEXT."""

from __future__ import annotations

import json
from typing import Any

import apsw

from loci.store.account_tables import AccountTables
from loci.store.sqlite.rows import NOW


class SqliteAccounts(AccountTables):
    now = NOW
    unique_error = apsw.ConstraintError

    def _json(self, value: Any) -> Any:
        return json.loads(value)
