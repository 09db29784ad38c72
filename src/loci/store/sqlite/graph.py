"""The brain graph's tables in SQLite (the logic and SQL are shared: `loci.store.graph_tables`).

`apply`'s transaction is `BEGIN IMMEDIATE`, which takes the database's one write lock up front:
graph writers, like all writers, queue on it. `aliases` is a JSON array in a TEXT column.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import apsw

from loci.store.graph_tables import GraphTables
from loci.store.sqlite.connection import Row
from loci.store.sqlite.rows import NOW


class SqliteGraph(GraphTables):
    now = NOW
    json_elements = "json_each"
    constraint_error = apsw.ConstraintError

    def _aliases(self, row: Row) -> list[str]:
        return list(json.loads(row["aliases"]))

    def _one_of(self, column: str, values: Sequence[Any]) -> tuple[str, Any]:
        # One JSON parameter instead of one per value: a list can exceed SQLite's limit.
        return f"{column} IN (SELECT value FROM json_each(?))", json.dumps(list(values))

    def _refusal(self, error: Exception) -> tuple[bool, str]:
        return "documents.content_hash" in str(error), str(error)
