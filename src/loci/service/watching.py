"""Watching the folders brains follow: `FolderWatcher`, which `loci serve` and `loci worker` run.

Each folder this process watches has a thread that only passes on the paths that changed
(`loci.ingest.folder_changes`): one waiting in watchfiles' notifier for native events, or,
where the file system raises none (a network drive, a Windows drive under WSL, see
`loci.ingest.file_systems`), one that walks the folder every `poll_ms` and compares. One loop
takes them and does every reconcile (`Sources.sync_paths`), so a folder is never reconciled
twice at once here; across processes, a lease per source (`loci.store.watch_tables`) lets one
watcher only follow a folder, whatever number of servers and workers share the database.

What keeps the index exact:

- A folder's watch is set up before its full rescan, so a change made during the rescan is
  seen by the watch. A rescan runs whenever a watch (re)starts — at start, after a failure,
  when a drive comes back, when a lease is taken over — so nothing changed while Loci was down
  or blind is missed; and every `rescan_s`, because the system drops events silently when its
  queue overflows.
- Changes are gathered until the folder is quiet for `step_ms` (at most `debounce_ms`), and each
  path is then reconciled by what is on disk, not by the events: an editor's save through a
  temporary file, a `git checkout` of a thousand files or a sync client rewriting a folder come
  to one update per file that changed, and an event seen twice changes nothing the second time.
- A path that is gone waits `settle_s` before its document is removed, so a file moved in two
  batches (its deletion first) is still found at its new path — by its file system identity,
  edited or not, or by its bytes — and keeps its document. A new path is reconciled at once,
  and finds the document of a file moved there wherever its old path is (`FileReconcile`).
- The folder itself is looked at every `refresh_s`: gone (a drive unplugged), replaced (a
  drive mounted again) or swapped for a symbolic link (never followed: it is reached as every
  sync reaches it, `loci.confined_paths`), its watch stops, the source is reported unreachable
  and nothing is deleted; back, it is watched and rescanned. Sources registered or removed
  meanwhile are noticed at the same pace. Changes inside Loci's own data (a folder that holds
  the data directory) are dropped as they come: they are never read, and reconciling them
  would write the report that changes the database again.
- A reconcile is done a slice of `slice_s` at a time (`Sources.run`): between two slices of a
  large folder's first sync the loop takes the other folders' changes, so a note saved in a
  small folder is indexed while a large one is still being read. A folder's own changes wait
  for its reconcile to end (they are then looked at on disk, as always).
- A thread renews the leases every third of `lease_s`, also while a long first sync keeps the
  loop busy; a lease another watcher took over (ours ran out) stops our watch of it.
"""

from __future__ import annotations

import logging
import os
import queue
import socket
import stat
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from loci import confined_paths
from loci.confined_paths import NO_FENCE, Fence
from loci.ingest.file_systems import needs_polling
from loci.ingest.folder_changes import native_changes, polled_changes
from loci.jobs.worker import describe, worker_name
from loci.models import Brain, Source, WatchLease, WatchMode
from loci.service.sources import SourceRun, Sources, SourceSync, in_scope
from loci.store.base import Store

log = logging.getLogger(__name__)

WatchSetting = Literal["auto", "events", "poll", "off"]

# More changed paths than this in one go, and the folder is rescanned whole: cheaper than path
# by path, and such a burst may have overflowed the system's event queue.
RESCAN_PATHS = 2000


@dataclass(frozen=True)
class WatchSettings:
    """`mode`: auto (events, polling where the file system has none), events, poll, or off."""

    mode: WatchSetting = "auto"
    debounce_ms: int = 1000  # the longest a burst of changes is gathered before it is synced
    # This long without a change ends a burst. Shorter than watchfiles' default (50): its
    # notifier looks every step and ends a burst at the first look that found nothing new, so
    # a save waited 1–2 steps; an editor's save (one write, or a write and a rename) and a
    # checkout's writes come far closer together than this, and a burst cut in two is still
    # one update per file (each path is reconciled by what is on disk).
    step_ms: int = 20
    poll_ms: int = 1000  # how often a polled folder is looked at
    refresh_s: float = 2.0  # how often sources, leases and each folder itself are checked
    lease_s: float = 30.0  # a watcher that stops renewing loses its folders after this
    settle_s: float = 1.0  # a gone path waits this long for its file to turn up elsewhere
    rescan_s: float = 3600.0  # a full rescan this often, for events the system dropped
    # A reconcile (a large folder's first sync) yields to the other folders' changes this often.
    slice_s: float = 0.5


@dataclass(frozen=True)
class _Ready:  # the folder's notifier is set up: rescan it
    source_id: int
    token: threading.Event


@dataclass(frozen=True)
class _Changed:
    source_id: int
    token: threading.Event
    paths: frozenset[str]


@dataclass(frozen=True)
class _Failed:
    source_id: int
    token: threading.Event
    reason: str


_Message = _Ready | _Changed | _Failed


class _FileCount:
    """The wanted files of a folder by directory, kept in step batch by batch, so the file count
    a report shows stays exact without walking the whole folder again."""

    def __init__(self) -> None:
        self._dirs: dict[str, set[str]] = {}

    def replace(self, scope: Iterable[str], found: Iterable[str]) -> None:
        """What was at or under `scope` is now `found`."""
        for path in scope:
            self._dirs.get(os.path.dirname(path), set()).discard(os.path.basename(path))
            inside = path.rstrip("/") + "/"
            for folder in [d for d in self._dirs if d == path or d.startswith(inside)]:
                del self._dirs[folder]
        for path in found:
            self._dirs.setdefault(os.path.dirname(path), set()).add(os.path.basename(path))

    def __len__(self) -> int:
        return sum(len(names) for names in self._dirs.values())


@dataclass
class _Watch:
    """One folder this process holds the lease of."""

    source: Source
    brain: Brain
    mode: WatchMode
    claimed_at: float
    token: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None
    root_id: tuple[int, int] | None = None  # (device, inode) the watch began on
    rescan_at: float | None = None  # None: not before the notifier is ready
    pending: set[str] = field(default_factory=set)
    held: dict[str, float] = field(default_factory=dict)  # gone paths, and when to look again
    files: _FileCount = field(default_factory=_FileCount)
    report: dict[str, Any] | None = None
    # A reconcile under way, a slice at a time: its paths, and when the next rescan is due
    # once it is over (None: it is the rescan).
    run: SourceRun | None = None
    run_scope: set[str] = field(default_factory=set)
    then_rescan_at: float | None = None
    unreachable: bool = False
    failures: int = 0
    retry_at: float = 0.0


def _root_id(root: Path, fence: Fence = NO_FENCE) -> tuple[int, int] | None:
    """The folder's device and inode, reached as a sync reaches it; None if it is not there,
    or is a link now, or Loci's own data."""
    try:
        with confined_paths.folder(root, fence, listing=False) as handle:
            info = os.fstat(handle)
    except OSError:
        return None
    return (info.st_dev, info.st_ino) if stat.S_ISDIR(info.st_mode) else None


def dead_here(owner: str) -> bool:
    """Whether the watcher named `owner` (host:pid:tag) ran on this machine in a process that
    is gone — killed, so it never gave its leases up."""
    parts = owner.rsplit(":", 2)
    if os.name != "posix" or len(parts) != 3 or parts[0] != socket.gethostname():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except (OSError, ValueError):  # alive under another user, or not a pid
        return False
    return False


class FolderWatcher:
    """Keeps every registered folder this process holds the lease of in step with its
    documents, from `start()` to `stop()`."""

    def __init__(
        self,
        sources: Sources,
        store: Store,
        settings: WatchSettings,
        *,
        name: str | None = None,
        polled: Callable[[Path], bool] = needs_polling,
    ) -> None:
        self.sources = sources
        self.store = store
        self.settings = settings
        self.name = name or worker_name()
        self._polled = polled
        self._queue: queue.Queue[_Message] = queue.Queue()
        self._watches: dict[int, _Watch] = {}
        self._stop = threading.Event()
        self._loop: threading.Thread | None = None
        self._heartbeat: threading.Thread | None = None
        # What the last renewal found we hold, and when it ran.
        self._held: tuple[float, set[int]] = (0.0, set())
        # What this watcher did since it started (files added, updated, …), for its log and
        # for whoever wants to see that an event burst came to one update per file;
        # "refreshes" counts its looks at the sources, so a test can wait for the next one.
        self.totals: dict[str, int] = dict.fromkeys(
            (
                "refreshes", "rescans", "added", "updated", "renamed", "removed", "gone",
                "returned", "failed",
            ),
            0,
        )  # fmt: skip

    # running ------------------------------------------------------------------------------
    def start(self) -> FolderWatcher:
        self._stop.clear()
        self._loop = threading.Thread(target=self.run, name="loci-watcher", daemon=True)
        self._heartbeat = threading.Thread(target=self._renew, name="loci-watch-lease", daemon=True)
        self._loop.start()
        self._heartbeat.start()
        log.info("watching folders as %s (%s)", self.name, self.settings.mode)
        return self

    def stop(self, timeout: float = 30.0) -> None:
        self._stop.set()
        for thread in (self._loop, self._heartbeat):
            if thread is not None:
                thread.join(timeout)

    def run(self) -> None:
        """The loop: look at sources and folders every `refresh_s`, reconcile what changed."""
        next_refresh = 0.0
        try:
            while not self._stop.is_set():
                now = time.monotonic()
                if now >= next_refresh:
                    self._guard(self._refresh, now)
                    self.totals["refreshes"] += 1
                    next_refresh = time.monotonic() + self.settings.refresh_s
                self._take(self._until_next(next_refresh))
                for watch in list(self._watches.values()):
                    self._guard(self._work, watch)
        finally:
            for watch in self._watches.values():
                watch.token.set()  # all at once; then each is waited for
            for watch in self._watches.values():
                self._halt(watch)
            self._watches.clear()
            self._guard(self.store.release_watch, self.name)

    def _guard(self, step: Callable[..., object], *args: Any) -> None:
        """A step that fails (the database restarting, a folder gone mid-walk) is logged and
        tried again later; it never ends the watcher."""
        try:
            step(*args)
        except Exception:
            log.exception("folder watcher: %s failed", getattr(step, "__name__", step))

    def _renew(self) -> None:
        every = self.settings.lease_s / 3
        while not self._stop.wait(every):
            started = time.monotonic()
            try:
                self._held = (started, self.store.renew_watches(self.name, self.settings.lease_s))
            except Exception:
                log.warning("folder watcher: renewing leases failed", exc_info=True)

    def _until_next(self, next_refresh: float) -> float:
        if any(watch.run is not None for watch in self._watches.values()):
            return 0.0  # a reconcile under way: its next slice once the changes are taken
        deadlines = [next_refresh]
        for watch in self._watches.values():
            deadlines.extend(watch.held.values())
            if watch.rescan_at is not None:
                deadlines.append(watch.rescan_at)
        return min(max(min(deadlines) - time.monotonic(), 0.0), self.settings.refresh_s)

    # sources and leases -------------------------------------------------------------------
    def _refresh(self, now: float) -> None:
        registered = {s.id: s for s in self.store.sources() if not s.scheduled}
        renewed_at, held = self._held
        for source_id, watch in list(self._watches.items()):
            lost = renewed_at > watch.claimed_at and source_id not in held
            if source_id not in registered or lost:
                if lost:
                    log.warning("folder watcher: %s is watched by another process now",
                                watch.source.path)  # fmt: skip
                self._halt(watch)
                del self._watches[source_id]
        leases = self.store.watch_leases()
        for source_id, source in registered.items():
            if source_id not in self._watches:
                self._claim(source, leases.get(source_id), now)
        for watch in self._watches.values():
            self._check_root(watch, now)

    def _claim(self, source: Source, lease: WatchLease | None, now: float) -> None:
        taking_from = None
        if lease is not None and lease.owner != self.name and lease.remaining_s > 0:
            if not dead_here(lease.owner):
                return  # another live watcher has it
            taking_from = lease.owner
        mode = self._mode(source)
        claimed = self.store.claim_watch(
            source.brain_id, source.id, self.name, mode, self.settings.lease_s, taking_from
        )
        if claimed:
            brain = self.store.get_brain_by_id(source.brain_id)
            self._watches[source.id] = _Watch(source, brain, mode, claimed_at=now)
            log.info("watching %s (%s)", source.path, mode)

    def _mode(self, source: Source) -> WatchMode:
        if self.settings.mode in ("events", "poll"):
            return "events" if self.settings.mode == "events" else "poll"
        return "poll" if self._polled(Path(source.path)) else "events"

    # each folder's notifier ---------------------------------------------------------------
    def _check_root(self, watch: _Watch, now: float) -> None:
        """Stop watching a folder that is gone or was replaced; watch one that is there."""
        root_id = _root_id(Path(watch.source.path), self.sources.fence)
        if watch.thread is not None and root_id != watch.root_id:
            log.warning("folder watcher: %s went away or was replaced", watch.source.path)
            self._halt(watch)
        if watch.thread is None and root_id is None and not watch.unreachable:
            self._sync(watch, {watch.source.path})  # records it unreachable; deletes nothing
        if watch.thread is None and root_id is not None and now >= watch.retry_at:
            self._begin(watch, root_id)

    def _begin(self, watch: _Watch, root_id: tuple[int, int]) -> None:
        watch.token = threading.Event()
        watch.root_id = root_id
        watch.rescan_at = None
        watch.thread = threading.Thread(
            target=self._follow,
            args=(watch.source, watch.mode, watch.token),
            name=f"loci-watch-{watch.source.id}",
            daemon=True,
        )
        watch.thread.start()

    def _halt(self, watch: _Watch) -> None:
        watch.token.set()
        if watch.thread is not None:
            watch.thread.join(timeout=5 + 2 * self.settings.step_ms / 1000)
        watch.thread = None
        watch.root_id = None
        watch.rescan_at = None
        watch.run = None
        watch.pending.clear()
        watch.held.clear()

    def _follow(self, source: Source, mode: WatchMode, token: threading.Event) -> None:
        """A folder's thread: pass each burst of changed paths on to the loop."""

        def ready() -> None:
            self._queue.put(_Ready(source.id, token))

        def changed(paths: frozenset[str]) -> None:
            self._queue.put(_Changed(source.id, token, paths))

        settings, root, fence = self.settings, Path(source.path), self.sources.fence
        try:
            if mode == "poll":
                every = settings.poll_ms / 1000
                polled_changes(
                    root, source.include, source.exclude, every, token, ready, changed, fence
                )
            else:
                native_changes(root, settings.debounce_ms, settings.step_ms, token, ready, changed)
        except Exception as error:
            self._queue.put(_Failed(source.id, token, describe(error)))

    def _take(self, timeout: float) -> None:
        """Wait up to `timeout` for the folders' threads, then take all they have sent."""
        try:
            message = self._queue.get(timeout=timeout)
        except queue.Empty:
            return
        while True:
            self._receive(message, time.monotonic())
            try:
                message = self._queue.get_nowait()
            except queue.Empty:
                return

    def _receive(self, message: _Message, now: float) -> None:
        watch = self._watches.get(message.source_id)
        if watch is None or message.token is not watch.token:
            return  # from a watch stopped since
        if isinstance(message, _Ready):
            watch.rescan_at = now
        elif isinstance(message, _Changed):
            fence = self.sources.fence
            watch.pending.update(p for p in message.paths if not fence.covers(p))
        else:
            self._failed(watch, message.reason, now)

    def _failed(self, watch: _Watch, reason: str, now: float) -> None:
        root = Path(watch.source.path)
        self._halt(watch)
        watch.failures += 1
        watch.retry_at = now + min(self.settings.refresh_s * 2**watch.failures, 300.0)
        if watch.mode == "events" and root.is_dir():
            # Native events could not be set up (the system's limit on watches reached, a
            # file system without them): poll this folder instead.
            log.warning("folder watcher: no events for %s (%s); polling it", root, reason)
            watch.mode = "poll"
            watch.retry_at = now
            self.store.claim_watch(
                watch.source.brain_id, watch.source.id, self.name, "poll", self.settings.lease_s
            )
        else:
            log.warning("folder watcher: watching %s failed (%s)", root, reason)

    # reconciling --------------------------------------------------------------------------
    def _work(self, watch: _Watch) -> None:
        now = time.monotonic()
        if watch.thread is None or watch.rescan_at is None:
            return
        if watch.run is not None:  # a long reconcile: its next slice (its changes wait)
            self._continue(watch)
            return
        # Should this reconcile fail (the database away a moment), the folder is rescanned
        # whole a little later, after a longer pause each time: nothing it held is dropped.
        retry = now + min(self.settings.refresh_s * 2**watch.failures, 300.0)
        if now >= watch.rescan_at or len(watch.pending) > RESCAN_PATHS:
            watch.pending.clear()
            watch.held.clear()
            watch.rescan_at, watch.failures = retry, watch.failures + 1
            self._start_run(watch, {watch.source.path}, None)
            return
        for path in watch.pending:
            if os.path.lexists(path):
                watch.held.pop(path, None)
            else:  # gone: look again once a move's other half has had time to arrive
                watch.held.setdefault(path, now + self.settings.settle_s)
        scope = {p for p in watch.pending if p not in watch.held}
        scope.update(p for p, due in watch.held.items() if due <= now)
        watch.pending.clear()
        for path in scope:
            watch.held.pop(path, None)
        if scope:
            rescan_at = watch.rescan_at
            watch.rescan_at, watch.failures = retry, watch.failures + 1
            self._start_run(watch, scope, rescan_at)

    def _start_run(self, watch: _Watch, scope: set[str], rescan_at: float | None) -> None:
        """Start reconciling `scope` and do its first slice. `rescan_at`: when the folder is
        due for a rescan once this is done (None: this is the rescan)."""
        paths = [Path(p) for p in scope]
        watch.run = self.sources.run(watch.brain, watch.source, paths)
        watch.run_scope, watch.then_rescan_at = scope, rescan_at
        self._continue(watch)

    def _continue(self, watch: _Watch) -> None:
        """One slice of the watch's reconcile (`slice_s`: then the loop sees to the other
        folders); once it is over, its report."""
        assert watch.run is not None
        try:
            result = watch.run.step(self.settings.slice_s)
        except BaseException:
            watch.run = None  # rescanned whole later (`rescan_at` was set to retry)
            raise
        if result is None:
            return
        watch.run = None
        self._report(watch, result, watch.run_scope)
        if watch.then_rescan_at is None:
            watch.rescan_at = time.monotonic() + self.settings.rescan_s
        else:
            watch.rescan_at = watch.then_rescan_at
        watch.failures = 0

    def _sync(self, watch: _Watch, scope: set[str]) -> None:
        """Reconcile `scope` to the end at once."""
        paths = [Path(p) for p in scope]
        self._report(watch, self.sources.sync_paths(watch.brain, watch.source, paths), scope)

    def _report(self, watch: _Watch, result: SourceSync, scope: set[str]) -> None:
        whole = watch.source.path in scope
        watch.unreachable = result.unreachable is not None
        report = self._merged(watch, result, scope, whole)
        self.store.record_sync(watch.source.brain_id, watch.source.id, report)
        watch.report = report
        self.totals["rescans"] += whole
        for key in ("added", "updated", "renamed", "removed", "gone", "returned"):
            self.totals[key] += getattr(result, key)
        self.totals["failed"] += len(result.failed)
        changed = result.added + result.updated + result.renamed + result.removed + result.gone
        if changed or result.failed or result.unreachable:
            log.info(
                "synced %s: %d added, %d updated, %d renamed, %d removed, %d failed%s",
                watch.source.path, result.added, result.updated, result.renamed,
                result.removed + result.gone, len(result.failed),
                f" (unreachable: {result.unreachable})" if result.unreachable else "",
            )  # fmt: skip

    def _merged(
        self, watch: _Watch, result: SourceSync, scope: set[str], whole: bool
    ) -> dict[str, Any]:
        """The source's report after this reconcile: its counts, with the file count and the
        failures of the paths outside `scope` carried over from before."""
        report = result.as_report()
        previous = watch.report if watch.report is not None else watch.source.last_report
        if result.unreachable is not None:  # nothing was looked at: keep what was known
            report["files"] = (previous or {}).get("files", 0)
            report["failed"] = (previous or {}).get("failed", [])
            return report
        if whole:
            watch.files = _FileCount()
            watch.files.replace((), result.found)
        else:
            watch.files.replace(scope, result.found)
            earlier = (previous or {}).get("failed", [])
            kept = [f for f in earlier if not in_scope(f["path"], scope)]
            report["failed"] = kept + report["failed"]
        report["files"] = len(watch.files)
        return report
