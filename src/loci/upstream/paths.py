"""Which files of a followed tree (a git repository, a WebDAV folder) a source takes: include
and exclude globs over the path relative to the followed root, and a size limit.

Globs read as a person writes them in a `.gitignore`: `*` and `?` stay within one folder,
`**` spans folders (`docs/**/*.md`), and a glob without a `/` matches the file's name at any
depth (`*.md` takes `notes/a.md`). Matching is case-sensitive, as paths in a repository are.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import PurePosixPath
from typing import Any

from loci.errors import InvalidInput

__all__ = ["PathFilter", "path_filter"]


@dataclass(frozen=True)
class PathFilter:
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_bytes: int | None = None
    # What is taken when no include glob is given (None: every file).
    default: Callable[[str], bool] | None = None

    @property
    def chosen(self) -> bool:
        """Whether the person named what to include (else the upstream's default applies)."""
        return bool(self.include)

    def takes(self, path: str, size: int | None = None) -> bool:
        """Whether the file at `path` (relative, "/"-separated) of `size` bytes is taken."""
        if self.max_bytes is not None and size is not None and size > self.max_bytes:
            return False
        if any(_matches(glob, path) for glob in self.exclude):
            return False
        if self.include:
            return any(_matches(glob, path) for glob in self.include)
        return self.default is None or self.default(path)

    def fingerprint(self) -> str:
        """Changes when the filter does: a listing read under another filter is not reused."""
        default = getattr(self.default, "__qualname__", None)
        return repr((self.include, self.exclude, self.max_bytes, default))


def path_filter(
    options: Mapping[str, Any],
    *,
    max_bytes: int,
    default: Callable[[str], bool] | None = None,
) -> PathFilter:
    """The filter an upstream's `options` ask for ("include", "exclude": a glob or a list of
    them; "max_file_bytes", else `max_bytes`), each glob checked here so a bad one fails when
    the source is added, not on its first run."""
    include = _globs(options.get("include"), "include")
    exclude = _globs(options.get("exclude"), "exclude")
    limit = options.get("max_file_bytes", max_bytes)
    if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
        raise InvalidInput(f"max_file_bytes must be a positive number of bytes, not {limit!r}")
    return PathFilter(include, exclude, limit, default)


def _globs(value: Any, name: str) -> tuple[str, ...]:
    if value is None:
        return ()
    values: Iterable[Any] = [value] if isinstance(value, str) else value
    if not isinstance(values, Iterable):
        raise InvalidInput(f"{name} must be a glob or a list of globs, not {value!r}")
    globs = []
    for glob in values:
        if not isinstance(glob, str) or not glob.strip():
            raise InvalidInput(f"{name} must be a glob or a list of globs, not {value!r}")
        glob = glob.strip()
        if glob.startswith("/"):
            glob = glob.lstrip("/")
            if not glob:
                raise InvalidInput(f"{name} glob {value!r} names no file")
            # Anchored at the root: a "/" left inside keeps it from matching at any depth.
            glob = glob if "/" in glob else "./" + glob
        globs.append(glob)
    return tuple(globs)


def _matches(glob: str, path: str) -> bool:
    if "/" not in glob:
        return _pattern(glob).fullmatch(PurePosixPath(path).name) is not None
    return _pattern(glob.removeprefix("./")).fullmatch(path) is not None


@cache
def _pattern(glob: str) -> re.Pattern[str]:
    parts: list[str] = []
    i = 0
    while i < len(glob):
        if glob.startswith("**/", i):
            parts.append("(?:[^/]*/)*")  # any number of folders, none included
            i += 3
        elif glob.startswith("**", i):
            parts.append(".*")
            i += 2
        elif glob[i] == "*":
            parts.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            parts.append("[^/]")
            i += 1
        else:
            parts.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(parts))
