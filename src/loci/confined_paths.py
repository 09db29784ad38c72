"""Paths of a followed folder, reached when they are used: never through a symbolic link, never
into Loci's own data.

A folder is checked when it is registered, but it — or a folder inside it, or one above it — may
be swapped for a link afterwards, and a path checked once and used later then leads wherever the
link points. So every read and write of a followed folder opens its path from `/` one component
at a time, each folder with `O_NOFOLLOW` relative to the handle of the one before (`dir_fd`): a
link anywhere on the way is refused (`Refused`), not followed, and what is read or written is in
the folder that was opened, whatever is renamed meanwhile. A followed folder's path is stored
resolved (`Sources.add`), so no link on it was ever the person's choice; a folder a person names
on the command line (`loci brain import`, `materialize`) is resolved then, as they mean it.

Each folder opened on the way is also compared, by device and inode, with the folders of the
`Fence` — the data directory, the database's folder, the blob folder — so no path, rename,
hard-linked folder or bind mount leads a read or a write into them.

The handles need `dir_fd` and `O_NOFOLLOW` (Linux, macOS, the BSDs); where they are missing
(Windows) a followed folder is refused rather than read unconfined.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

SUPPORTED = os.open in os.supports_dir_fd and os.scandir in os.supports_fd
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
# A folder only passed through: O_PATH (Linux) needs no permission to list it, only to pass,
# as a path lookup does; elsewhere it is opened for reading.
_PASS = getattr(os, "O_PATH", os.O_RDONLY) | _DIRECTORY | _NOFOLLOW
_LIST = os.O_RDONLY | _DIRECTORY | _NOFOLLOW
# A file to read: a link put in its place is refused, a FIFO is not waited on.
FILE_FLAGS = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)

LINK = "is a symbolic link, and a followed folder is never read or written through one"
OWN_DATA = "is Loci's own data (the data directory, the database or the blobs), never a source"


class Refused(OSError):
    """A path not opened: it goes through a symbolic link, or into a fenced folder. `filename`
    is the component refused, `strerror` why."""

    def __str__(self) -> str:
        return f"{self.filename} {self.strerror}"

    @property
    def own_data(self) -> bool:
        """Refused as Loci's own data (else: as a link)."""
        return self.strerror == OWN_DATA


Ids = frozenset[tuple[int, int]]


@dataclass(frozen=True)
class Fence:
    """The folders no followed folder reaches into: Loci's own data."""

    paths: tuple[Path, ...] = ()

    def ids(self) -> Ids:
        """The device and inode of each folder of the fence that is there now."""
        found = set()
        for path in self.paths:
            try:
                info = os.stat(path)
            except OSError:
                continue  # not made yet (the blob folder before the first file)
            found.add((info.st_dev, info.st_ino))
        return frozenset(found)

    def around(self, folder: Path) -> Path | None:
        """The fenced folder that `folder` (resolved) is, or lies inside: by path, and by
        device and inode of it and each folder above it (a bind mount, another name)."""
        for path in self.paths:
            resolved = path.resolve()
            if folder == resolved or resolved in folder.parents:
                return path
        ids = self.ids()
        for above in (folder, *folder.parents):
            try:
                info = os.stat(above)
            except OSError:
                continue
            if (info.st_dev, info.st_ino) in ids:
                return above
        return None

    def within(self, folder: Path) -> Path | None:
        """A fenced folder that lies inside `folder` (resolved), if any."""
        for path in self.paths:
            if folder in path.resolve().parents:
                return path
        return None

    def covers(self, path: str) -> bool:
        """Whether `path` lies in a fenced folder by its name (a watcher's event): a cheap
        filter, not the check, which is by device and inode when the path is opened."""
        return path.startswith(self._prefixes) if self._prefixes else False

    @functools.cached_property
    def _prefixes(self) -> tuple[str, ...]:
        return tuple(str(p.resolve()).rstrip("/") + "/" for p in self.paths)


NO_FENCE = Fence()


def _check_supported() -> None:
    if not SUPPORTED or not _NOFOLLOW:
        raise Refused(
            errno.ENOTSUP,
            "cannot be read confined on this system (it opens no file relative to a folder)",
            "a followed folder",
        )


def open_child(parent: int, name: str, ids: Ids, where: str, *, listing: bool = True) -> int:
    """The handle of folder `name` in the folder `parent`, never through a link nor into a
    fenced folder (`where` names it in errors). `listing`: to list it, else only to pass."""
    try:
        descriptor = os.open(name, _LIST if listing else _PASS, dir_fd=parent)
    except OSError as error:
        # O_DIRECTORY | O_NOFOLLOW on a link: ENOTDIR on Linux, ELOOP elsewhere.
        if error.errno in (errno.ENOTDIR, errno.ELOOP) and _is_link(parent, name):
            raise Refused(errno.ELOOP, LINK, where) from None
        error.filename = where
        raise
    info = os.fstat(descriptor)
    if (info.st_dev, info.st_ino) in ids:
        os.close(descriptor)
        raise Refused(errno.EACCES, OWN_DATA, where)
    return descriptor


def _is_link(parent: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=parent, follow_symlinks=False).st_mode)
    except OSError:
        return False


def open_folder(path: Path, fence: Fence, *, listing: bool = True, create: bool = False) -> int:
    """The handle of the folder at the absolute `path`, opened from `/` one component at a
    time (`Refused` for a link or a fenced folder on the way; the usual OSError for a folder
    that is not there). `create`: missing folders are made (mode 0777 less the umask)."""
    _check_supported()
    if not path.is_absolute():
        raise ValueError(f"{path} is not an absolute path")
    ids = fence.ids()
    names = path.parts[1:]
    current = os.open("/", _PASS if names or not listing else _LIST)
    try:
        where = Path("/")
        for index, name in enumerate(names):
            where = where / name
            last = index == len(names) - 1
            try:
                child = open_child(current, name, ids, str(where), listing=listing and last)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):  # made meanwhile: taken as it is
                    os.mkdir(name, 0o777, dir_fd=current)
                child = open_child(current, name, ids, str(where), listing=listing and last)
            os.close(current)
            current = child
    except BaseException:
        os.close(current)
        raise
    return current


@contextmanager
def folder(path: Path, fence: Fence, *, listing: bool = True) -> Iterator[int]:
    """`open_folder`, closed after use."""
    descriptor = open_folder(path, fence, listing=listing)
    try:
        yield descriptor
    finally:
        os.close(descriptor)


@contextmanager
def parent(path: Path, fence: Fence, *, create: bool = False) -> Iterator[tuple[int, str]]:
    """The handle of the folder holding `path` (opened as `open_folder` does, only to pass
    through) and the name of `path` in it: what a file is read, stat'ed or written through."""
    if path.name in ("", ".", ".."):
        raise ValueError(f"{path} names no file")
    descriptor = open_folder(path.parent, fence, listing=False, create=create)
    try:
        yield descriptor, path.name
    finally:
        os.close(descriptor)


class Reach:
    """How the files of a followed folder are reached one after another: each one's folder
    opened as `parent` opens it, the last one's handle kept for the next file in it (a walk's
    files are read folder by folder: no path is opened again from `/` for each) until
    `close`. A handle keeps to the folder it was opened on — a swap for a link afterwards
    does not lead it elsewhere — so a kept one is as confined as a new one."""

    def __init__(self, fence: Fence = NO_FENCE) -> None:
        self.fence = fence
        self._folder: Path | None = None
        self._handle: int | None = None

    @contextmanager
    def parent(self, path: Path) -> Iterator[tuple[int, str]]:
        """As `parent`, but the folder's handle stays open after use."""
        if path.name in ("", ".", ".."):
            raise ValueError(f"{path} names no file")
        if self._handle is None or self._folder != path.parent:
            self.close()
            self._handle = open_folder(path.parent, self.fence, listing=False)
            self._folder = path.parent
        yield self._handle, path.name

    def close(self) -> None:
        if self._handle is not None:
            os.close(self._handle)
        self._handle = self._folder = None


def lstat(path: Path, fence: Fence) -> os.stat_result:
    """What is at `path` itself (a link is not followed), reached without a link."""
    with parent(path, fence) as (at, name):
        return os.stat(name, dir_fd=at, follow_symlinks=False)
