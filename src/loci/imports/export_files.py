"""The files of an export however the person hands it over: the zip a tool made, the folder
it was unpacked into, or one file of it (a `conversations.json` taken out of its zip). Each
way yields the same `Member`s, by their path inside the export, read within `Limits`: a
folder's files are counted and measured as a zip's members are, and a symbolic link inside
it is not followed (an export holds files, and a link could lead anywhere on the machine)."""

from __future__ import annotations

import os
from pathlib import Path

from loci.imports.archive import Member, is_zip, read_zip
from loci.imports.items import ExportRefused, Limits


def export_members(path: Path, limits: Limits) -> list[Member]:
    """Every file of the export at `path` (a zip, a folder or a single file)."""
    if path.is_dir():
        return _folder(path, limits)
    if is_zip(path):
        return read_zip(path, limits)
    if path.suffix.lower() == ".zip":  # a download cut short loses the zip's directory first
        raise ExportRefused(
            f"{path.name} is not a readable zip (is the download complete?); nothing was imported"
        )
    return [Member(path.name, _read(path, path.name, limits))]


def _folder(root: Path, limits: Limits) -> list[Member]:
    found: list[Member] = []
    total = 0
    for folder, dirs, files in os.walk(root, followlinks=False):
        dirs.sort()
        for name in sorted(files):
            full = Path(folder, name)
            if full.is_symlink() or not full.is_file():
                continue
            inside = full.relative_to(root).as_posix()
            if len(found) >= limits.max_items * 4:  # items plus attachments, as in a zip
                raise ExportRefused(
                    f"this export holds more than {limits.max_items * 4:,} files; nothing was"
                    " imported (raise LOCI_IMPORT_MAX_ITEMS to import it)"
                )
            data = _read(full, inside, limits)
            total += len(data)
            if total > limits.max_bytes:
                raise ExportRefused(
                    f"this export holds more than {limits.max_bytes:,} bytes; nothing was"
                    " imported (raise LOCI_IMPORT_MAX_BYTES if it is genuine)"
                )
            found.append(Member(inside, data))
    return found


def _read(path: Path, inside: str, limits: Limits) -> bytes:
    with path.open("rb") as stream:
        # Read one byte past the cap rather than trust the size measured before opening.
        data = stream.read(limits.max_item_bytes + 1)
    if len(data) > limits.max_item_bytes:
        raise ExportRefused(
            f"{inside} in the export is over {limits.max_item_bytes:,} bytes; nothing was imported"
        )
    return data


def text_file(path: Path, limits: Limits, written_by: str) -> str:
    """An export that is one text file (bookmarks, Kindle's clippings) as text: measured
    before it is read, UTF-8 with its byte-order mark dropped, refused whole otherwise.
    `written_by` says whose format it is ("as Kindle writes My Clippings.txt")."""
    if path.stat().st_size > limits.max_bytes:
        raise ExportRefused(f"{path.name} is over {limits.max_bytes:,} bytes; nothing was imported")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError:
        raise ExportRefused(
            f"{path.name} is not UTF-8 text, {written_by}; nothing was imported"
        ) from None
