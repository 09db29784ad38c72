"""A folder of Markdown files as the brain's import, export and sync see it: which files count,
how they are read (UTF-8, no links followed, size capped) and how they are written (atomically,
never outside the folder)."""

from __future__ import annotations

import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path

from loci.errors import InvalidInput, NotFound
from loci.graph.document import FRONTMATTER

MAX_FILE_BYTES = 5 * 1024 * 1024
GRAPH_KEYS = (re.compile(r"^id:", re.MULTILINE), re.compile(r"^kind:", re.MULTILINE))


@dataclass(frozen=True)
class MarkdownFile:
    """A `.md` file of a folder, read as text."""

    path: str
    text: str | None  # None: unreadable, see `error`
    error: str | None = None
    normalized: bool = False  # a byte-order mark or CRLF line endings were removed


def scan_markdown(root: Path) -> list[MarkdownFile]:
    """Every `.md` file under `root` in path order, skipping hidden files and folders (the
    manifest, `.obsidian/`, `.trash/`) and never following a symbolic link."""
    if not root.is_dir():
        raise NotFound(f"no folder {str(root)!r}")
    found: list[MarkdownFile] = []
    for folder, subfolders, names in os.walk(root):
        subfolders[:] = sorted(d for d in subfolders if not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or not name.lower().endswith(".md"):
                continue
            full = Path(folder) / name
            found.append(read_markdown(full, full.relative_to(root).as_posix()))
    return found


def read_markdown(full: Path, rel: str) -> MarkdownFile:
    """One file as `scan_markdown` reads it (UTF-8, no link followed, size capped, a
    byte-order mark and CRLF line endings removed); `rel` names it in results."""
    if full.is_symlink():
        return MarkdownFile(rel, None, "a symbolic link; copy the file in instead")
    try:
        if full.stat().st_size > MAX_FILE_BYTES:
            return MarkdownFile(rel, None, f"larger than {MAX_FILE_BYTES // 2**20} MB")
        text = full.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        return MarkdownFile(rel, None, "not UTF-8 text; save it as UTF-8")
    except OSError as error:  # gone since it was listed, or not readable
        return MarkdownFile(rel, None, f"cannot read: {error.strerror}")
    clean = text.removeprefix("\ufeff").replace("\r\n", "\n")
    return MarkdownFile(rel, clean, normalized=clean != text)


def is_graph_document(text: str) -> bool:
    match = FRONTMATTER.match(text)
    return match is not None and all(key.search(match.group(1)) for key in GRAPH_KEYS)


def safe_path(root: Path, rel: str) -> Path:
    target = (root / rel).resolve()
    if not target.is_relative_to(root.resolve()):
        raise InvalidInput(f"{rel!r} would be written outside the folder")
    return target


def write_file(path: Path, data: bytes) -> None:
    """Write through a temporary file and a rename, so a crash never leaves half a file; the
    file gets the usual permissions (the umask's), as an editor's save would."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def remove_empty_folders(root: Path) -> None:
    for folder, _, _ in sorted(os.walk(root), key=lambda w: -len(w[0])):
        path = Path(folder)
        if path != root and not any(path.iterdir()):
            path.rmdir()
