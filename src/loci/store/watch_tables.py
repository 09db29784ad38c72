"""Who watches which folder: one lease row per source (`source_watches`), the same on every
backend (portable SQL, mixed into each store beside `SourceTables`).

Several processes may run a watcher over one database — `loci serve --workers 2`, a server and
`loci worker`, workers on several machines sharing PostgreSQL — and each source must be watched
by one of them only. A lease row says which (`owner`), how (`mode`: native events or polling)
and until when; its holder renews it while it watches and deletes it when it stops. A holder
that died stops renewing, and once the lease has run out any watcher may take it. Times are
the database's clock (`epoch`), so machines with skewed clocks agree on when a lease ends.

Why a row and not a lock tied to the process (a file lock, a PostgreSQL advisory lock): it is
one mechanism on both backends, it works through a PostgreSQL pooler in transaction mode (which
drops session locks), and the row is something to show — `loci sources list` reports from it
whether and how each folder is watched. What a lock would do better, hand over at once when
its holder is killed, the watcher does for a holder on its own machine: it takes over the lease
of a process it can see is dead (`taking_from`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar

from loci.models import WatchLease, WatchMode
from loci.store.portable import PortableDatabase


class WatchTables(ABC):
    epoch: ClassVar[str]  # SQL for the database's clock, in seconds since 1970
    now: ClassVar[str]

    @property
    @abstractmethod
    def portable(self) -> PortableDatabase:
        """The store's database, for portable SQL."""

    def watch_leases(self, brain_id: int | None = None) -> dict[int, WatchLease]:
        """The lease of each watched source (of one brain, or of every brain: None)."""
        sql = (
            "SELECT source_id, brain_id, owner, mode,"
            f" lease_until - {self.epoch} AS remaining_s FROM source_watches"
        )
        if brain_id is None:
            rows = self.portable.query(sql)
        else:
            rows = self.portable.query(sql + " WHERE brain_id = ?", (brain_id,), brain_id)
        return {
            int(r["source_id"]): WatchLease(
                int(r["source_id"]),
                int(r["brain_id"]),
                str(r["owner"]),
                r["mode"],
                float(r["remaining_s"]),
            )
            for r in rows
        }

    def claim_watch(
        self,
        brain_id: int,
        source_id: int,
        owner: str,
        mode: WatchMode,
        lease_s: float,
        taking_from: str | None = None,
    ) -> bool:
        """Take (or keep, or change the mode of) the lease on a source: granted when nobody
        holds it, when `owner` does, when it ran out, or when `taking_from` (a holder known to
        be dead) does. False: another watcher has it."""
        rows = self.portable.returning(
            "INSERT INTO source_watches(source_id, brain_id, owner, mode, lease_until)"
            f" VALUES (?, ?, ?, ?, {self.epoch} + ?)"
            " ON CONFLICT (source_id) DO UPDATE SET owner = excluded.owner,"
            f" mode = excluded.mode, lease_until = excluded.lease_until, since = {self.now}"
            " WHERE source_watches.owner = excluded.owner OR source_watches.owner = ?"
            f" OR source_watches.lease_until < {self.epoch}"
            " RETURNING owner",
            (source_id, brain_id, owner, mode, lease_s, taking_from or owner),
            brain_id,
        )
        return bool(rows)

    def renew_watches(self, owner: str, lease_s: float) -> set[int]:
        """Extend every lease `owner` holds; the sources it still holds (a lease that ran out
        and was taken over by another watcher is not among them)."""
        rows = self.portable.returning(
            f"UPDATE source_watches SET lease_until = {self.epoch} + ?"
            " WHERE owner = ? RETURNING source_id",
            (lease_s, owner),
        )
        return {int(r["source_id"]) for r in rows}

    def release_watch(self, owner: str, source_id: int | None = None) -> None:
        """Give up `owner`'s lease on a source (None: on every source), so another watcher
        can take it at once."""
        if source_id is None:
            self.portable.change("DELETE FROM source_watches WHERE owner = ?", (owner,))
        else:
            self.portable.change(
                "DELETE FROM source_watches WHERE owner = ? AND source_id = ?", (owner, source_id)
            )
