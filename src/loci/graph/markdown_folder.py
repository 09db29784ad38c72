"""A folder of Markdown files as the brain's import, export and sync see it: which files count,
how they are read (UTF-8, no links followed, size capped) and how they are written (atomically,
never outside the folder).

Every path is reached when it is used, never through a symbolic link nor into Loci's own data
(`loci.confined_paths`): a vault followed as pages may be swapped for a link, or a folder in
it, after it was registered. A folder a person names on the command line is resolved first
(`GraphTransfer`), as they mean it; nothing inside it is followed.
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import secrets
import stat
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from loci import confined_paths
from loci.confined_paths import NO_FENCE, Fence
from loci.errors import InvalidInput, NotFound, UnsupportedSource
from loci.graph.document import FRONTMATTER

MAX_FILE_BYTES = 5 * 1024 * 1024
GRAPH_KEYS = (re.compile(r"^id:", re.MULTILINE), re.compile(r"^kind:", re.MULTILINE))
LINKED = "a symbolic link; copy the file in instead"


@dataclass(frozen=True)
class MarkdownFile:
    """A `.md` file of a folder, read as text."""

    path: str
    text: str | None  # None: unreadable, see `error`
    error: str | None = None
    normalized: bool = False  # a byte-order mark or CRLF line endings were removed


def scan_markdown(root: Path, fence: Fence = NO_FENCE) -> list[MarkdownFile]:
    """Every `.md` file under the absolute `root` in path order, skipping hidden files and
    folders (the manifest, `.obsidian/`, `.trash/`), never following a symbolic link and never
    entering Loci's own data (`fence`). `root` not reached: NotFound (not there), else
    UnsupportedSource (a link now, Loci's own data, unreadable) — never an empty list, which
    would read as every file deleted."""
    found: list[MarkdownFile] = []
    try:
        handle = confined_paths.open_folder(root, fence)
    except (FileNotFoundError, NotADirectoryError):
        raise NotFound(f"no folder {str(root)!r}") from None
    except OSError as error:
        raise UnsupportedSource(_unreached(root, error)) from None
    try:
        _scan(handle, "", fence.ids(), root, found)
    finally:
        os.close(handle)
    return found


def _unreached(root: Path, error: OSError) -> str:
    if isinstance(error, confined_paths.Refused):
        return f"{root} cannot be reached: {error}; nothing was read or removed"
    return f"cannot read {root}: {error.strerror}"


def _scan(
    handle: int, prefix: str, fenced: confined_paths.Ids, root: Path, found: list[MarkdownFile]
) -> None:
    """The Markdown files of the open folder `handle` (at `prefix` in the root), then of the
    folders inside it, in path order."""
    try:
        with os.scandir(handle) as listing:
            entries = sorted(listing, key=lambda entry: entry.name)
    except OSError:
        return  # a folder that cannot be listed holds no file we can read
    folders = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            is_folder = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if is_folder:
            folders.append(entry.name)
        elif entry.name.lower().endswith(".md"):
            found.append(_read_in(handle, entry.name, f"{prefix}{entry.name}"))
    for name in folders:
        try:
            inner = confined_paths.open_child(handle, name, fenced, str(root / prefix / name))
        except OSError:
            continue  # swapped for a link since the listing, Loci's own data, or unreadable
        try:
            _scan(inner, f"{prefix}{name}/", fenced, root, found)
        finally:
            os.close(inner)


def read_markdown(full: Path, rel: str, fence: Fence = NO_FENCE) -> MarkdownFile:
    """One file as `scan_markdown` reads it (UTF-8, no link followed on the way or at the
    file, size capped, a byte-order mark and CRLF line endings removed); `rel` names it in
    results."""
    try:
        with confined_paths.parent(full, fence) as (folder, name):
            return _read_in(folder, name, rel)
    except OSError as error:  # its folder gone, or reached through a link now
        reason = str(error) if isinstance(error, confined_paths.Refused) else error.strerror
        return MarkdownFile(rel, None, f"cannot read: {reason}")


def _read_in(folder: int, name: str, rel: str) -> MarkdownFile:
    """The file `name` of the open folder `folder`, as `read_markdown` reads it."""
    try:
        descriptor = os.open(name, confined_paths.FILE_FLAGS, dir_fd=folder)
    except OSError as error:
        if error.errno == errno.ELOOP:  # O_NOFOLLOW on a link
            return MarkdownFile(rel, None, LINKED)
        return MarkdownFile(rel, None, f"cannot read: {error.strerror}")
    try:
        with os.fdopen(descriptor, "rb") as handle:
            info = os.fstat(descriptor)
            if not stat.S_ISREG(info.st_mode):
                return MarkdownFile(rel, None, "not a regular file")
            if info.st_size > MAX_FILE_BYTES:
                return MarkdownFile(rel, None, f"larger than {MAX_FILE_BYTES // 2**20} MB")
            text = handle.read(MAX_FILE_BYTES + 1).decode("utf-8")
    except UnicodeDecodeError:
        return MarkdownFile(rel, None, "not UTF-8 text; save it as UTF-8")
    except OSError as error:  # not readable
        return MarkdownFile(rel, None, f"cannot read: {error.strerror}")
    clean = text.removeprefix("\ufeff").replace("\r\n", "\n")
    return MarkdownFile(rel, clean, normalized=clean != text)


def is_graph_document(text: str) -> bool:
    match = FRONTMATTER.match(text)
    return match is not None and all(key.search(match.group(1)) for key in GRAPH_KEYS)


def safe_path(root: Path, rel: str) -> Path:
    """`rel` (a path in the folder, as a manifest or a page's folder names it) under `root`;
    InvalidInput if it would lead out (absolute, or through `..`). Judged by the words alone:
    a link on the way is refused when the path is used, never resolved and followed."""
    parts = PurePosixPath(rel).parts
    if not parts or parts[0] == "/" or ".." in parts:
        raise InvalidInput(f"{rel!r} would be written outside the folder")
    return root.joinpath(*(part for part in parts if part != "."))


def write_file(path: Path, data: bytes, fence: Fence = NO_FENCE) -> None:
    """Write the absolute `path` through a temporary file and a rename, so a crash never
    leaves half a file; missing folders are made, and the file gets the usual permissions
    (the umask's), as an editor's save would. No link is followed on the way
    (`confined_paths.Refused`), and the rename is in the folder the file was written in."""
    with confined_paths.parent(path, fence, create=True) as (folder, name):
        temporary = f".{name}.{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        descriptor = os.open(temporary, flags, 0o666, dir_fd=folder)
        try:
            with os.fdopen(descriptor, "wb") as handle:
                handle.write(data)
            os.replace(temporary, name, src_dir_fd=folder, dst_dir_fd=folder)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temporary, dir_fd=folder)
            raise


def move_file(source: Path, target: Path, fence: Fence = NO_FENCE) -> Path:
    """Move the file `source` to `target` — or, if something has that name, to `target`
    with a number added ("x 2.md") — making missing folders; where it went. Both are reached
    without a link."""
    with (
        confined_paths.parent(source, fence) as (origin, name),
        confined_paths.parent(target, fence, create=True) as (folder, _),
    ):
        place, n = target, 1
        while True:
            try:
                os.stat(place.name, dir_fd=folder, follow_symlinks=False)
            except FileNotFoundError:
                break
            n += 1
            place = target.with_name(f"{target.stem} {n}{target.suffix}")
        os.replace(name, place.name, src_dir_fd=origin, dst_dir_fd=folder)
    return place


def remove_file(path: Path, fence: Fence = NO_FENCE) -> None:
    """Delete the file at `path`, if it is there; InvalidInput if its way goes through a
    link (it is then not removed)."""
    try:
        with confined_paths.parent(path, fence) as (folder, name):
            os.unlink(name, dir_fd=folder)
    except (FileNotFoundError, NotADirectoryError):
        pass
    except confined_paths.Refused as error:
        raise InvalidInput(f"{path} is not removed: {error}") from None


def remove_empty_folders(root: Path) -> None:
    for folder, _, _ in sorted(os.walk(root), key=lambda w: -len(w[0])):
        path = Path(folder)
        if path != root and not any(path.iterdir()):
            path.rmdir()
