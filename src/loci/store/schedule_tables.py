"""The runs of scheduled sources (`sources` rows with an `every_s`: feeds, web pages, ...), the
same on every backend (portable SQL, mixed into each store beside `SourceTables`).

A source is due when its `next_run_at` has passed. A worker takes it with a lease
(`lease_owner`, `lease_until`): one statement that sets the lease only where none is held or
the one held ran out, so of two workers asking at once one gets the row and the other nothing
(SQLite writes one at a time; PostgreSQL re-reads the row the first one updated and finds the
lease held). A worker killed mid-run leaves its lease to run out; then the source is due
again and any worker takes it. The run's end is fenced by the owner: a worker whose lease was
taken over records nothing. Times are the database's clock (`epoch`), as watch leases are.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from loci.models import Source
from loci.store.portable import PortableDatabase
from loci.store.schema import column_list

SOURCE_COLUMNS = column_list("sources")


class ScheduleTables(ABC):
    epoch: ClassVar[str]
    now: ClassVar[str]

    @property
    @abstractmethod
    def portable(self) -> PortableDatabase:
        """The store's database, for portable SQL."""

    @abstractmethod
    def _source(self, row: Mapping[str, Any]) -> Source:
        """A `sources` row as a `Source` (`SourceTables`)."""

    def claim_source_run(
        self, owner: str, lease_s: float, source_id: int | None = None
    ) -> Source | None:
        """Lease the scheduled source due first (or `source_id`, due or not: a run asked for
        now) to `owner` for `lease_s` seconds; None when none is due or free."""
        free = f"(lease_until IS NULL OR lease_until < {self.epoch})"
        if source_id is None:
            pick = (
                "SELECT id FROM sources WHERE every_s IS NOT NULL AND next_run_at IS NOT NULL"
                f" AND next_run_at <= {self.epoch} AND {free} ORDER BY next_run_at, id LIMIT 1"
            )
            params: tuple[Any, ...] = (owner, lease_s)
        else:
            pick = f"SELECT id FROM sources WHERE id = ? AND every_s IS NOT NULL AND {free}"
            params = (owner, lease_s, source_id)
        rows = self.portable.returning(
            f"UPDATE sources SET lease_owner = ?, lease_until = {self.epoch} + ?"
            f" WHERE id = ({pick}) AND {free} RETURNING {SOURCE_COLUMNS}",
            params,
        )
        return self._source(rows[0]) if rows else None

    def renew_source_run(self, source: Source, owner: str, lease_s: float) -> bool:
        """Extend `owner`'s lease on a source it runs; False when it was taken over."""
        changed = self.portable.change(
            f"UPDATE sources SET lease_until = {self.epoch} + ? WHERE id = ? AND lease_owner = ?",
            (lease_s, source.id, owner),
            source.brain_id,
        )
        return changed > 0

    def finish_source_run(
        self,
        source: Source,
        owner: str,
        report: dict[str, Any],
        *,
        error: str | None,
        retry_in_s: float,
        state: Mapping[str, Any] | None = None,
        path: str | None = None,
    ) -> bool:
        """End `owner`'s run of a source: its report kept (`last_report`, stamped now), its
        lease given up, its next run `retry_in_s` from now; a success (`error` None) clears
        the failures and keeps the upstream's new `state` (and a moved address, `path`), a
        failure counts one more. False (and nothing recorded) when another worker holds the
        lease now."""
        failures = "0" if error is None else "failures + 1"
        sets = [
            f"last_sync_at = {self.now}", "last_report = ?", "last_error = ?",
            f"failures = {failures}", "lease_owner = NULL", "lease_until = NULL",
            f"next_run_at = {self.epoch} + ?",
        ]  # fmt: skip
        params: list[Any] = [json.dumps(report, default=str), error, retry_in_s]
        if state is not None:
            sets.append("state = ?")
            params.append(json.dumps(dict(state), default=str))
        if path is not None:
            sets.append("path = ?")
            params.append(path)
        changed = self.portable.change(
            f"UPDATE sources SET {', '.join(sets)}"
            " WHERE id = ? AND brain_id = ? AND lease_owner = ?",
            (*params, source.id, source.brain_id, owner),
            source.brain_id,
        )
        return changed > 0

    def source_clock(self) -> float:
        """The database's clock, in epoch seconds (what `next_run_at` is compared with)."""
        rows = self.portable.query(f"SELECT {self.epoch} AS now")
        return float(rows[0]["now"])
