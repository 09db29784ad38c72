"""The files of a registered folder as `loci sync` sees them: every regular file under the root
whose path relative to it passes the include and exclude globs, with its size and mtime.

Hidden files and folders (`.obsidian`, `.git`, `.trash`, editors' swap files) are skipped, and
no symbolic link is followed — neither to a folder nor to a file — so nothing outside the root
is ever read and a link loop cannot trap the walk.
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class FolderFile:
    path: Path  # absolute, under the (resolved) root
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class WalkProblem:
    path: str
    reason: str


def _matches(relative: str, patterns: Sequence[str]) -> bool:
    # A glob names a path relative to the root ("notes/*.md") or just a file name ("*.pdf").
    name = relative.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(relative, p) or fnmatch.fnmatch(name, p) for p in patterns)


def wanted(relative: str, include: Sequence[str] = (), exclude: Sequence[str] = ()) -> bool:
    """Whether a path relative to the root (with `/`) is one the walk takes."""
    if any(part.startswith(".") for part in relative.split("/")):
        return False
    if include and not _matches(relative, include):
        return False
    return not (exclude and _matches(relative, exclude))


def walk_folder(
    root: Path, include: Sequence[str] = (), exclude: Sequence[str] = ()
) -> tuple[list[FolderFile], list[WalkProblem]]:
    """The wanted files under `root`, and the folders that could not be listed."""
    files: list[FolderFile] = []
    problems: list[WalkProblem] = []

    def unlisted(error: OSError) -> None:
        problems.append(WalkProblem(str(error.filename), f"cannot list: {error.strerror}"))

    for folder, dirs, names in os.walk(root, onerror=unlisted, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(names):
            path = Path(folder, name)
            if not wanted(path.relative_to(root).as_posix(), include, exclude):
                continue
            try:
                info = path.lstat()
            except OSError as error:  # vanished between the listing and now
                problems.append(WalkProblem(str(path), f"cannot read: {error.strerror}"))
                continue
            if stat.S_ISREG(info.st_mode):  # not a link, a socket or a device
                files.append(FolderFile(path, info.st_size, info.st_mtime_ns))
    return files, problems


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
