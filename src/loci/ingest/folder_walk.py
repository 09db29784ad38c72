"""The files of a registered folder as `loci sync` sees them: every regular file under the root
whose path relative to it passes the include and exclude globs, with its size and mtime.

Hidden files and folders (`.obsidian`, `.git`, `.trash`, editors' swap files) are skipped, and
so are the temporary and lock files editors, office suites and browsers leave beside a file
while they write it (`~$report.docx`, `notes.md~`, `#notes.md#`, `*.tmp`, `*.part`): a watcher
that saw one of them for a moment must not make it a document. No symbolic link is followed —
neither to a folder nor to a file — so nothing outside the root is ever read and a link loop
cannot trap the walk.

Every folder is reached when it is walked, not as it was when registered: the root is opened
from `/` and each folder inside it from its parent's handle, none through a link
(`loci.confined_paths`), so a folder swapped for a link is refused, not followed; and a folder
that is Loci's own data (the `Fence`: the data directory, by device and inode) is never
entered, though the root may hold it.

`walk_paths` walks only some paths under the root (what a watcher saw change), by the same
rules, and `read_whole` reads a file found so: one version of it, never through a link.
"""

from __future__ import annotations

import fnmatch
import functools
import os
import re
import stat
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from loci import confined_paths
from loci.confined_paths import NO_FENCE, Fence
from loci.errors import UnsupportedSource
from loci.ingest.file_identity import FileIdentity, generation_of

# Files that only exist while something writes another file (or holds it open).
TRANSIENT = ("~$*", "*~", "#*#", "*.tmp", "*.swp", "*.part", "*.crdownload")


@dataclass(frozen=True)
class FolderFile:
    path: Path  # absolute, under the (resolved) root
    size: int
    mtime_ns: int
    inode: int = 0  # 0: not known
    device: int = 0
    # The inode's generation (`loci.ingest.file_identity`): read from the open file, so only
    # a file read (`read_whole`) has it; None where the file system keeps none.
    generation: int | None = None

    @property
    def identity(self) -> FileIdentity:
        return FileIdentity(self.device, self.inode, self.generation)

    def stamp(self) -> dict[str, int]:
        """What a document keeps of its file to tell, by a stat, whether it changed since
        (size, mtime), and to find it again moved (its identity)."""
        return {"size": self.size, "mtime_ns": self.mtime_ns, **self.identity.as_stamp()}


@dataclass(frozen=True)
class WalkProblem:
    path: str
    reason: str


@functools.lru_cache(maxsize=256)
def _matcher(patterns: tuple[str, ...]) -> re.Pattern[str]:
    # One regular expression for a list of globs: a rescan matches every path of the folder.
    return re.compile("|".join(f"(?:{fnmatch.translate(os.path.normcase(p))})" for p in patterns))


def _matches(relative: str, patterns: Sequence[str]) -> bool:
    # A glob names a path relative to the root ("notes/*.md") or just a file name ("*.pdf").
    if not patterns:
        return False
    matcher = _matcher(tuple(patterns))
    relative = os.path.normcase(relative)
    name = relative.rsplit("/", 1)[-1]
    return bool(matcher.match(relative) or matcher.match(name))


def _hidden(relative: str) -> bool:
    return relative.startswith(".") or "/." in relative


def wanted(relative: str, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> bool:
    """Whether a path relative to the root (with `/`) is one the walk takes."""
    if _hidden(relative) or _matches(relative.rsplit("/", 1)[-1], TRANSIENT):
        return False
    if include and not _matches(relative, include):
        return False
    return not (exclude and _matches(relative, exclude))


class _Walk:
    """One walk: each folder opened from its parent's handle, never through a link nor into
    a fenced folder."""

    def __init__(
        self, root: Path, include: Sequence[str], exclude: Sequence[str], fence: Fence
    ) -> None:
        self.root = root
        self.prefix = len(str(root)) + 1  # of a path under the root: where its relative part starts
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.fenced = fence.ids()
        self.files: list[FolderFile] = []
        self.problems: list[WalkProblem] = []

    def wanted(self, path: str) -> bool:
        return wanted(path[self.prefix :].replace(os.sep, "/"), self.include, self.exclude)

    def file(self, path: str, info: os.stat_result) -> None:
        if stat.S_ISREG(info.st_mode):  # not a link, a socket, a FIFO or a device
            self.files.append(
                FolderFile(Path(path), info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
            )

    def folder(self, handle: int, path: str) -> None:
        """The files of the open folder `handle` (at `path`) and of the folders inside it."""
        try:
            with os.scandir(handle) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except OSError as error:
            self.problems.append(WalkProblem(path, f"cannot list: {error.strerror}"))
            return
        folders = []
        for entry in entries:
            full = f"{path}/{entry.name}"
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not entry.name.startswith("."):
                        folders.append((entry.name, full))
                    continue
                if not self.wanted(full):
                    continue
                info = entry.stat(follow_symlinks=False)  # fstatat on the folder's handle
            except OSError as error:  # vanished between the listing and now
                self.problems.append(WalkProblem(full, f"cannot read: {error.strerror}"))
                continue
            self.file(full, info)
        for name, full in folders:
            self.inside(handle, name, full)

    def inside(self, parent: int, name: str, path: str) -> None:
        """Walk the folder `name` of the open folder `parent`."""
        try:
            handle = confined_paths.open_child(parent, name, self.fenced, path)
        except confined_paths.Refused as refused:
            if not refused.own_data:  # a link put in its place since the listing
                self.problems.append(WalkProblem(path, f"cannot list: {refused.strerror}"))
            return  # Loci's own data, in a folder that holds it: never read, by design
        except OSError as error:
            self.problems.append(WalkProblem(path, f"cannot list: {error.strerror}"))
            return
        try:
            self.folder(handle, path)
        finally:
            os.close(handle)

    def path(self, root: int, path: Path) -> None:
        """The file at `path` under the root (open as `root`), or every file of the folder
        there; nothing if it is gone, or reached through a link or into Loci's own data."""
        names = path.relative_to(self.root).parts
        holder = self._reach(root, names[:-1], path)
        if holder is None:
            return
        try:
            info = os.stat(names[-1], dir_fd=holder, follow_symlinks=False)
            if stat.S_ISDIR(info.st_mode):
                self.inside(holder, names[-1], str(path))
            elif self.wanted(str(path)):
                self.file(str(path), info)
        except FileNotFoundError:
            pass  # gone: the caller's documents at or under it are what is left to see to
        except OSError as error:
            self.problems.append(WalkProblem(str(path), f"cannot read: {error.strerror}"))
        finally:
            os.close(holder)

    def _reach(self, root: int, names: Sequence[str], path: Path) -> int | None:
        """The handle of the folder `names` below the root; None if it is not there, or is
        reached through a link (a watcher may follow links) or into Loci's own data."""
        handle = os.dup(root)
        try:
            for depth, name in enumerate(names, start=1):
                where = str(self.root.joinpath(*names[:depth]))
                child = confined_paths.open_child(handle, name, self.fenced, where, listing=False)
                os.close(handle)
                handle = child
        except (FileNotFoundError, NotADirectoryError, confined_paths.Refused):
            os.close(handle)
            return None
        except OSError as error:
            os.close(handle)
            self.problems.append(WalkProblem(str(path), f"cannot read: {error.strerror}"))
            return None
        return handle


def walk_folder(
    root: Path, include: Sequence[str] = (), exclude: Sequence[str] = (), fence: Fence = NO_FENCE
) -> tuple[list[FolderFile], list[WalkProblem]]:
    """The wanted files under `root`, and the folders that could not be listed. `root` itself
    not reached (gone, a link now, Loci's own data) raises its OSError: an empty walk would
    read as every file deleted."""
    walk = _Walk(root, include, exclude, fence)
    with confined_paths.folder(root, fence) as handle:
        walk.folder(handle, str(root))
    return walk.files, walk.problems


def outermost(paths: Iterable[Path]) -> list[Path]:
    """`paths` without those inside another of them (walking the folder covers them)."""
    unique = set(paths)
    return sorted(p for p in unique if not any(parent in unique for parent in p.parents))


def walk_paths(
    root: Path,
    paths: Iterable[Path],
    include: Sequence[str] = (),
    exclude: Sequence[str] = (),
    fence: Fence = NO_FENCE,
) -> tuple[list[FolderFile], list[WalkProblem]]:
    """The wanted files at or under `paths` (each inside `root`; others are ignored): a file
    that is there, every file of a folder that is there, nothing for a path that is gone.
    `root` not reached raises its OSError, as in `walk_folder`."""
    walk = _Walk(root, include, exclude, fence)
    with confined_paths.folder(root, fence) as handle:
        for path in outermost(paths):
            if path == root:
                walk.folder(handle, str(root))
            elif root in path.parents and not _hidden(path.relative_to(root).as_posix()):
                walk.path(handle, path)
    return walk.files, walk.problems


def read_whole(
    path: Path, attempts: int = 3, reach: confined_paths.Reach | None = None
) -> tuple[bytes, FolderFile]:
    """The bytes of the file at `path`, all of one version, and the stamp of that version.

    A file written while it is read (a sync client, an editor saving), or replaced by another
    file meanwhile (a save through a temporary file), is read again, a little later, up to
    `attempts` times; then `UnsupportedSource` says it kept changing. A file deleted while it
    is read raises `FileNotFoundError`: what was read is of no file any more. The file is
    reached and opened without following a link (`confined_paths`: a folder on its way
    swapped for a link is refused, `Refused`) and without blocking, so a link or a FIFO put in
    its place since the walk is refused instead of read (or waited on). `reach`: how the
    folder is reached (its fence; a handle kept from the last file read), else from `/` with
    no fence."""
    if reach is None:
        with confined_paths.parent(path, NO_FENCE) as (folder, name):
            return read_whole_in(folder, name, path, attempts)
    with reach.parent(path) as (folder, name):
        return read_whole_in(folder, name, path, attempts)


def read_whole_in(
    folder: int, name: str, path: Path, attempts: int = 3
) -> tuple[bytes, FolderFile]:
    """`read_whole` of the file `name` in the open folder `folder` (`path` names it)."""
    for attempt in range(attempts):
        if attempt:
            time.sleep(0.05 * attempt)
        descriptor = os.open(name, confined_paths.FILE_FLAGS, dir_fd=folder)
        with os.fdopen(descriptor, "rb") as handle:
            before = os.fstat(descriptor)
            if not stat.S_ISREG(before.st_mode):
                raise UnsupportedSource(f"{path.name} is no longer a regular file")
            data = handle.read()
            after = os.fstat(descriptor)
            generation = generation_of(descriptor, after)
        # FileNotFoundError: deleted while it was read
        now = os.stat(name, dir_fd=folder, follow_symlinks=False)
        stamp = (after.st_ino, after.st_size, after.st_mtime_ns)
        same = (before.st_ino, before.st_size, before.st_mtime_ns) == stamp
        if (
            same
            and (now.st_ino, now.st_size, now.st_mtime_ns) == stamp
            and len(data) == now.st_size
        ):
            return data, FolderFile(
                path, after.st_size, after.st_mtime_ns, after.st_ino, after.st_dev, generation
            )
    raise UnsupportedSource(
        f"{path.name} kept changing while it was read; it is read again when it next changes"
        " or at the next sync"
    )


def stat_identity(path: Path, fence: Fence = NO_FENCE) -> FolderFile:
    """The stamp of the file at `path` with its whole identity (the inode's generation is read
    from the open file), without reading its bytes; reached as `read_whole` reaches it."""
    with confined_paths.parent(path, fence) as (folder, name):
        return stat_identity_in(folder, name, path)


def stat_identity_in(folder: int, name: str, path: Path) -> FolderFile:
    """`stat_identity` of the file `name` in the open folder `folder` (`path` names it)."""
    descriptor = os.open(name, confined_paths.FILE_FLAGS, dir_fd=folder)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise UnsupportedSource(f"{path.name} is no longer a regular file")
        generation = generation_of(descriptor, info)
    finally:
        os.close(descriptor)
    return FolderFile(path, info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev, generation)


def unreached(root: Path, error: OSError) -> str:
    """Why a followed folder whose root could not be opened is not synced now, as a person
    reads it; nothing is read or removed then."""
    if isinstance(error, confined_paths.Refused):
        return f"{root} cannot be reached: {error}; nothing was read or removed"
    if isinstance(error, FileNotFoundError | NotADirectoryError):
        return f"{root} is not there (a drive unplugged or moved?)"
    return f"cannot read {root}: {error.strerror}"


def unreachable(root: Path, has_known: bool, fence: Fence = NO_FENCE) -> str | None:
    """Why a followed folder cannot be synced now, or None: not there, reached through a link
    now, Loci's own data (`unreached`) — or empty while documents are known of it: an
    unmounted drive often leaves its mount point behind, empty, and taking that as "every
    file deleted" would empty the brain."""
    try:
        with confined_paths.folder(root, fence) as handle:
            if has_known:
                with os.scandir(handle) as listing:
                    if next(listing, None) is None:
                        return f"{root} is empty; nothing was removed (not mounted?)"
    except OSError as error:
        return unreached(root, error)
    return None
