"""The data directory is its owner's alone: folders 0700, files 0600.

The database, its WAL and shared-memory files, blobs, saved indexes and caches hold everything a
person keeps, so no other local account may read them. Every file Loci writes there is created
with these modes (never through the process umask, which is global and would also narrow the
files Loci writes into a person's own folders); a home made by an older version is tightened on
start. Only the home and its direct entries are changed then: with the home at 0700 nothing below
it can be reached by another account, and a walk over every blob on each start would be slow.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from pathlib import Path
from typing import Any

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
_GROUP_OTHER = stat.S_IRWXG | stat.S_IRWXO


def make_private_dir(path: Path) -> None:
    """`path` and any missing parents, each created 0700 (Path.mkdir gives parents the
    umask's mode)."""
    missing: list[Path] = []
    current = path
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR)
        except FileExistsError:
            pass  # another process or thread made it first
        else:
            folder.chmod(PRIVATE_DIR)  # mkdir's mode is narrowed by the umask, never widened


def create_private_file(path: Path) -> None:
    """An empty `path` made 0600 before another library (SQLite) creates it with its own
    default mode; an existing file only loses group and other permissions."""
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        restrict(path)


def restrict(path: Path) -> None:
    """Take group and other permissions off `path`, if it exists."""
    try:
        mode = path.stat(follow_symlinks=False).st_mode
    except FileNotFoundError:
        return
    if stat.S_ISLNK(mode) or not mode & _GROUP_OTHER:
        return
    path.chmod(stat.S_IMODE(mode) & ~_GROUP_OTHER)


def secure_home(home: Path) -> None:
    """Create the data directory 0700, or tighten one made before this rule."""
    make_private_dir(home)
    home.chmod(PRIVATE_DIR)
    for entry in home.iterdir():
        restrict(entry)


def write_json(path: Path, value: Any) -> None:
    """`value` as JSON at `path`, whole or not at all (a temporary file renamed over it), in a
    private folder: a cache entry a crash cannot leave half-written."""
    make_private_dir(path.parent)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            json.dump(value, stream, ensure_ascii=False)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
