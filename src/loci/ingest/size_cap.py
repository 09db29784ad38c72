"""The file size cap (`max_file_bytes`, LOCI_MAX_FILE_MB): one test and one message.

Every way in — a path, bytes from an upload, MCP or a fetched page, a captured item, and the
dry run of each — asks `over_cap`, so a file refused on one surface is refused on all of them
with the same sentence, and the dry run predicts that sentence word for word.
"""

from __future__ import annotations

from loci.errors import FileTooLarge

__all__ = ["over_cap", "size_text"]


def size_text(n_bytes: float) -> str:
    """A byte count as a person reads it: `50 MB`, `1.5 MB`, `10 KB`."""
    if n_bytes >= 1048576:
        return f"{n_bytes / 1048576:.3g} MB"
    return f"{n_bytes / 1024:.3g} KB"


def over_cap(name: str, size: int | None, limit: int) -> FileTooLarge | None:
    """The refusal for `name` of `size` bytes under a cap of `limit`, or None when it fits.

    `size` None: the size is unknown but over (a body that was stopped at the cap)."""
    if size is not None and size <= limit:
        return None
    cap = size_text(limit)
    if size is None:
        return FileTooLarge(f"{name} is too large; the limit is {cap}")
    if size_text(size) == cap:
        # Just over: rounded, both would read the same, so the exact counts say why.
        return FileTooLarge(f"{name} is {size:,} bytes; the limit is {cap} ({limit:,} bytes)")
    return FileTooLarge(f"{name} is {size_text(size)}; the limit is {cap}")
