"""The brain graph's tables in PostgreSQL (the logic and SQL are shared:
`loci.store.graph_tables`).

`apply`'s transaction holds the brain's graph lock (a transaction-level advisory lock: graph
writers of one brain queue, other brains go on), and runs in the brain's row-level security
scope. `aliases` is a jsonb array.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any

from psycopg import errors

from loci.store.graph_tables import GraphTables
from loci.store.postgres.connection import Row

GRAPH_LOCK = 7_300_003  # pg_advisory_xact_lock(GRAPH_LOCK, brain id): one graph writer a brain


class PostgresGraph(GraphTables):
    now = "loci_now()"
    json_elements = "jsonb_array_elements_text"
    constraint_error = errors.IntegrityError

    def _aliases(self, row: Row) -> list[str]:
        return list(row["aliases"])

    def _one_of(self, column: str, values: Sequence[Any]) -> tuple[str, Any]:
        return f"{column} = ANY(?)", list(values)

    def _refusal(self, error: Exception) -> tuple[bool, str]:
        assert isinstance(error, errors.IntegrityError)
        return "content_hash" in str(error), str(error.diag.message_primary)

    @contextmanager
    def _transaction(self, brain_id: int) -> Iterator[Any]:
        with self.db.transaction(brain_id) as cur:
            cur.execute("SELECT pg_advisory_xact_lock(%s, %s)", (GRAPH_LOCK, brain_id))
            yield cur
