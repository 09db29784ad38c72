"""A cap on failed password sign-ins per user name, so a password cannot be guessed online.

After `limit` failures within `window_s` for one name (known or not: the answer must not say
which), that name's sign-ins are refused — even with the right password — until the oldest
failure leaves the window. The count lives in this process's memory: a restart forgets it, and
each server process counts on its own (with `--workers N` an attacker gets N times the budget,
still a few dozen guesses an hour against scrypt-hashed passwords). Memory is bounded: stale
names are dropped, and past `max_names` the name idle longest goes first.

Names are counted by their key (`loci.names.user_key`), the same one the accounts find users
by: every spelling that signs in as a user (`ALICE`, `alİce`, fullwidth `ａｌｉｃｅ`) spends
that user's one budget. The count is per name, not per address, so spreading guesses over many
addresses gains nothing.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable

from loci.errors import RateLimited
from loci.names import user_key

LIMIT = 10
WINDOW_S = 15 * 60.0
MAX_NAMES = 10_000


class FailedSignIns:
    def __init__(
        self,
        limit: int = LIMIT,
        window_s: float = WINDOW_S,
        clock: Callable[[], float] = time.monotonic,
        max_names: int = MAX_NAMES,
    ) -> None:
        self.limit = limit
        self.window_s = window_s
        self.clock = clock
        self.max_names = max_names
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()
        self._lock = threading.Lock()

    def check(self, name: str) -> None:
        """Raise RateLimited if `name` has used up its failures."""
        with self._lock:
            recent = self._recent(user_key(name))
            if recent is not None and len(recent) >= self.limit:
                wait = recent[0] + self.window_s - self.clock()
                minutes = max(1, round(wait / 60))
                raise RateLimited(
                    f"too many failed sign-ins for this name; try again in about {minutes} min",
                    retry_after_s=wait,
                )

    def failed(self, name: str) -> None:
        with self._lock:
            key = user_key(name)
            recent = self._recent(key) or deque()
            recent.append(self.clock())
            self._failures[key] = recent
            self._failures.move_to_end(key)
            while len(self._failures) > self.max_names:
                self._failures.popitem(last=False)

    def succeeded(self, name: str) -> None:
        with self._lock:
            self._failures.pop(user_key(name), None)

    def _recent(self, key: str) -> deque[float] | None:
        recent = self._failures.get(key)
        if recent is None:
            return None
        cutoff = self.clock() - self.window_s
        while recent and recent[0] <= cutoff:
            recent.popleft()
        if not recent:
            del self._failures[key]
            return None
        return recent
