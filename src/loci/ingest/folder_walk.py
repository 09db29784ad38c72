"""The files of a registered folder as `loci sync` sees them: every regular file under the root
whose path relative to it passes the include and exclude globs, with its size and mtime.

Hidden files and folders (`.obsidian`, `.git`, `.trash`, editors' swap files) are skipped, and
so are the temporary and lock files editors, office suites and browsers leave beside a file
while they write it (`~$report.docx`, `notes.md~`, `#notes.md#`, `*.tmp`, `*.part`): a watcher
that saw one of them for a moment must not make it a document. No symbolic link is followed —
neither to a folder nor to a file — so nothing outside the root is ever read and a link loop
cannot trap the walk.

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
    def __init__(self, root: Path, include: Sequence[str], exclude: Sequence[str]) -> None:
        self.root = root
        self.prefix = len(str(root)) + 1  # of a path under the root: where its relative part starts
        self.include = tuple(include)
        self.exclude = tuple(exclude)
        self.files: list[FolderFile] = []
        self.problems: list[WalkProblem] = []

    def unlisted(self, error: OSError) -> None:
        self.problems.append(WalkProblem(str(error.filename), f"cannot list: {error.strerror}"))

    def file(self, path: str, info: os.stat_result | None = None) -> None:
        if not wanted(path[self.prefix :].replace(os.sep, "/"), self.include, self.exclude):
            return
        if info is None:
            try:
                info = os.lstat(path)
            except OSError as error:  # vanished between the listing and now
                self.problems.append(WalkProblem(path, f"cannot read: {error.strerror}"))
                return
        if stat.S_ISREG(info.st_mode):  # not a link, a socket, a FIFO or a device
            self.files.append(
                FolderFile(Path(path), info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev)
            )

    def folder(self, start: Path) -> None:
        for folder, dirs, names in os.walk(start, onerror=self.unlisted, followlinks=False):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(names):
                self.file(os.path.join(folder, name))


def walk_folder(
    root: Path, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> tuple[list[FolderFile], list[WalkProblem]]:
    """The wanted files under `root`, and the folders that could not be listed."""
    walk = _Walk(root, include, exclude)
    walk.folder(root)
    return walk.files, walk.problems


def outermost(paths: Iterable[Path]) -> list[Path]:
    """`paths` without those inside another of them (walking the folder covers them)."""
    unique = set(paths)
    return sorted(p for p in unique if not any(parent in unique for parent in p.parents))


def walk_paths(
    root: Path, paths: Iterable[Path], include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> tuple[list[FolderFile], list[WalkProblem]]:
    """The wanted files at or under `paths` (each inside `root`; others are ignored): a file
    that is there, every file of a folder that is there, nothing for a path that is gone."""
    walk = _Walk(root, include, exclude)
    for path in outermost(paths):
        if path == root:
            walk.folder(root)
            continue
        if root not in path.parents or _hidden(path.relative_to(root).as_posix()):
            continue
        if Path(os.path.realpath(path.parent)) != path.parent:
            continue  # reached through a linked folder (a watcher may follow links): not ours
        try:
            info = path.lstat()
        except FileNotFoundError:
            continue  # gone: the caller's documents at or under it are what is left to see to
        except OSError as error:
            walk.problems.append(WalkProblem(str(path), f"cannot read: {error.strerror}"))
            continue
        if stat.S_ISDIR(info.st_mode):
            walk.folder(path)
        else:
            walk.file(str(path), info)
    return walk.files, walk.problems


# Not every system has O_NOFOLLOW (Windows): there a link is caught by the walk's lstat alone.
_OPEN_FLAGS = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)


def read_whole(path: Path, attempts: int = 3) -> tuple[bytes, FolderFile]:
    """The bytes of the file at `path`, all of one version, and the stamp of that version.

    A file written while it is read (a sync client, an editor saving), or replaced by another
    file meanwhile (a save through a temporary file), is read again, a little later, up to
    `attempts` times; then `UnsupportedSource` says it kept changing. A file deleted while it
    is read raises `FileNotFoundError`: what was read is of no file any more. The file is
    opened without following a link and without blocking, so a link or a FIFO put in its place
    since the walk is refused instead of read (or waited on)."""
    for attempt in range(attempts):
        if attempt:
            time.sleep(0.05 * attempt)
        descriptor = os.open(path, _OPEN_FLAGS)
        with os.fdopen(descriptor, "rb") as handle:
            before = os.fstat(descriptor)
            if not stat.S_ISREG(before.st_mode):
                raise UnsupportedSource(f"{path.name} is no longer a regular file")
            data = handle.read()
            after = os.fstat(descriptor)
            generation = generation_of(descriptor, after)
        now = path.lstat()  # FileNotFoundError: deleted while it was read
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


def stat_identity(path: Path) -> FolderFile:
    """The stamp of the file at `path` with its whole identity (the inode's generation is read
    from the open file), without reading its bytes."""
    descriptor = os.open(path, _OPEN_FLAGS)
    try:
        info = os.fstat(descriptor)
        if not stat.S_ISREG(info.st_mode):
            raise UnsupportedSource(f"{path.name} is no longer a regular file")
        generation = generation_of(descriptor, info)
    finally:
        os.close(descriptor)
    return FolderFile(path, info.st_size, info.st_mtime_ns, info.st_ino, info.st_dev, generation)


def unreachable(root: Path, has_known: bool) -> str | None:
    """Why a followed folder cannot be synced now, or None. An unmounted drive often leaves
    its mount point behind, empty: taking that as "every file deleted" would empty the brain."""
    try:
        if not root.is_dir():
            return f"{root} is not there (a drive unplugged or moved?)"
        if has_known and not any(root.iterdir()):
            return f"{root} is empty; nothing was removed (not mounted?)"
    except OSError as error:
        return f"cannot read {root}: {error.strerror}"
    return None
