"""Where a watched folder's changes come from: the paths that changed, burst by burst.

`native_changes` waits in watchfiles' Rust notifier (inotify, FSEvents, ReadDirectoryChangesW);
`polled_changes` walks the folder every so often and compares. Both run until `stop` is set, in
a thread of their caller's, call `ready()` once the folder is watched (so a rescan started then
misses nothing) and `changed(paths)` for each burst, and raise what stops them.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from loci.confined_paths import NO_FENCE, Fence
from loci.ingest.folder_walk import walk_folder

Ready = Callable[[], None]
Changed = Callable[[frozenset[str]], None]


def native_changes(
    root: Path,
    debounce_ms: int,
    step_ms: int,
    stop: threading.Event,
    ready: Ready,
    changed: Changed,
) -> None:
    """Native events: a burst ends after `step_ms` without a change, or after `debounce_ms`."""
    # The documented way to drive watchfiles' notifier directly: constructing it sets the watch
    # up, so "ready" can be told before the caller's rescan (`watchfiles.watch` would not say).
    from watchfiles._rust_notify import RustNotify

    # ignore_permission_denied=False: watchfiles would then ignore every error in setting the
    # watch up (the system's limit on watches too), leaving the folder watched in part without
    # a word. Refused, the caller can poll the folder instead.
    with RustNotify([str(root)], False, False, 0, True, False) as notifier:
        ready()
        while not stop.is_set():
            # No timeout: the notifier's timeout path clears changes that arrive at that very
            # moment; `stop` ends the wait within a step.
            raw = notifier.watch(debounce_ms, step_ms, 0, stop)
            if isinstance(raw, set) and raw:
                changed(frozenset(path for _, path in raw))


def polled_changes(
    root: Path,
    include: Sequence[str],
    exclude: Sequence[str],
    every_s: float,
    stop: threading.Event,
    ready: Ready,
    changed: Changed,
    fence: Fence = NO_FENCE,
) -> None:
    """The paths whose size, mtime (to the nanosecond) or inode moved between two walks.

    Our own walk, not watchfiles' poller: that one compares modification times to the whole
    second, so a file written again within the second of its last look is never seen. The walk
    is the sync's (the same files, no links). On a large folder on a slow share the pause
    between walks grows to four times a walk, so polling takes a fifth of a core at most."""

    def look() -> dict[str, tuple[int, int, int]]:
        files, _ = walk_folder(root, include, exclude, fence)
        return {str(f.path): (f.size, f.mtime_ns, f.inode) for f in files}

    seen = look()
    ready()
    pause = every_s
    while not stop.wait(pause):
        started = time.monotonic()
        now = look()
        moved = {p for p in seen.keys() | now.keys() if seen.get(p) != now.get(p)}
        seen = now
        if moved:
            changed(frozenset(moved))
        pause = max(every_s, 4 * (time.monotonic() - started))
