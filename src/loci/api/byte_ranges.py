"""One byte range of a download (`Range: bytes=start-end`, RFC 9110 §14), so a browser can seek
in a recording: without it, `<audio>` cannot jump to the cited moment of anything it has not
downloaded yet. Several ranges in one request are answered with the whole body, as the RFC
allows; a range past the end is 416."""

from __future__ import annotations

import re
from dataclasses import dataclass

_ONE_RANGE = re.compile(r"^bytes=(\d*)-(\d*)$")


@dataclass(frozen=True)
class Slice:
    status: int  # 200 (the whole), 206 (a range) or 416 (none of it can be served)
    body: bytes
    content_range: str | None


def byte_slice(data: bytes, header: str | None) -> Slice:
    size = len(data)
    match = _ONE_RANGE.match((header or "").strip())
    if match is None or match.groups() == ("", ""):
        return Slice(200, data, None)
    first, last = match.groups()
    if first == "":  # the last N bytes
        start, end = max(0, size - int(last)), size - 1
    else:
        start = int(first)
        end = min(int(last), size - 1) if last else size - 1
    if start >= size or start > end:
        return Slice(416, b"", f"bytes */{size}")
    return Slice(206, data[start : end + 1], f"bytes {start}-{end}/{size}")
