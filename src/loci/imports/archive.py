"""Reading an export packed as a zip, within `Limits`: every member's decompressed size is
held against the limits as it is read (a zip's declared sizes can lie), members whose path
climbs out (`../`) or is absolute are refused, and zips inside the zip (Notion's "Part-1.zip")
are opened in turn, up to `Limits.max_depth`. The result is a flat list of members by their
path inside the export, in the zip's order."""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from loci.imports.items import ExportRefused, Limits

_CHUNK = 1024 * 1024


@dataclass(frozen=True)
class Member:
    path: str  # inside the export, "/"-separated, nested zips' members under their zip's stem
    data: bytes


class _Budget:
    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.total = 0
        self.count = 0

    def take(self, n: int) -> None:
        self.total += n
        if self.total > self.limits.max_bytes:
            raise ExportRefused(
                f"this export unpacks to more than {self.limits.max_bytes:,} bytes; nothing was"
                " imported (raise LOCI_IMPORT_MAX_BYTES if it is genuine)"
            )


def is_zip(path: Path) -> bool:
    return zipfile.is_zipfile(path)


def read_zip(path: Path, limits: Limits) -> list[Member]:
    """Every file in the zip at `path` (and in the zips inside it), within `limits`."""
    try:
        with zipfile.ZipFile(path) as archive:
            return _members(archive, "", limits, _Budget(limits), depth=0)
    except zipfile.BadZipFile as error:
        raise ExportRefused(f"{path.name} is not a readable zip ({error})") from None


def _members(
    archive: zipfile.ZipFile, prefix: str, limits: Limits, budget: _Budget, depth: int
) -> list[Member]:
    found: list[Member] = []
    for info in archive.infolist():
        if info.is_dir():
            continue
        name = _safe_name(info.filename)
        budget.count += 1
        if budget.count > limits.max_items * 4:  # items plus their attachments and sidecars
            raise ExportRefused(
                f"this export holds more than {limits.max_items * 4:,} files; nothing was"
                " imported (raise LOCI_IMPORT_MAX_ITEMS to import it)"
            )
        if info.flag_bits & 0x1:
            raise ExportRefused(f"{name} in the export is encrypted; export it without a password")
        data = _read_member(archive, info, name, limits, budget)
        if name.lower().endswith(".zip") and zipfile.is_zipfile(io.BytesIO(data)):
            if depth + 1 > limits.max_depth:
                raise ExportRefused(f"{name}: zips nested deeper than {limits.max_depth} levels")
            inner_prefix = prefix + name[: -len(".zip")] + "/"
            with zipfile.ZipFile(io.BytesIO(data)) as inner:
                found += _members(inner, inner_prefix, limits, budget, depth + 1)
            continue
        found.append(Member(prefix + name, data))
    return found


def _safe_name(raw: str) -> str:
    name = raw.replace("\\", "/")
    parts = PurePosixPath(name).parts
    if name.startswith("/") or any(p == ".." for p in parts) or (parts and ":" in parts[0]):
        raise ExportRefused(
            f"the export holds a file outside itself ({raw!r}); nothing was imported"
        )
    return "/".join(p for p in parts if p not in ("", "."))


def _read_member(
    archive: zipfile.ZipFile, info: zipfile.ZipInfo, name: str, limits: Limits, budget: _Budget
) -> bytes:
    """The member's bytes, read a megabyte at a time so a bomb stops at the first limit it
    passes, whatever its header declares."""
    cap = limits.max_item_bytes
    ratio_cap = max(info.compress_size, 1) * limits.max_ratio
    parts: list[bytes] = []
    size = 0
    try:
        with archive.open(info) as stream:
            while block := stream.read(_CHUNK):
                size += len(block)
                budget.take(len(block))
                if size > cap:
                    raise ExportRefused(
                        f"{name} in the export is over {cap:,} bytes; nothing was imported"
                    )
                if size > ratio_cap and size > _CHUNK:
                    raise ExportRefused(
                        f"{name} in the export expands more than {limits.max_ratio}× (a zip"
                        " bomb?); nothing was imported"
                    )
                parts.append(block)
    except (zipfile.BadZipFile, OSError, EOFError) as error:
        raise ExportRefused(f"{name} in the export cannot be read ({error})") from None
    return b"".join(parts)
