"""Exports of other tools, written as the tools write them, for `loci import` tests."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

KINDLE_CLIPPINGS = """\ufeffThe Pragmatic Programmer (Hunt, Andrew;Thomas, David)
- Your Highlight on page 12 | Location 170-172 | Added on Sunday, 5 March 2023 10:14:02

Care about your craft.
==========
The Pragmatic Programmer (Hunt, Andrew;Thomas, David)
- Your Highlight on page 12 | Location 170-174 | Added on Sunday, 5 March 2023 10:14:30

Care about your craft. Why spend your life developing software unless you care about doing it well?
==========
The Pragmatic Programmer (Hunt, Andrew;Thomas, David)
- Your Note on page 12 | Location 174 | Added on Sunday, 5 March 2023 10:15:02

The core of the book for me.
==========
Der Process (Kafka, Franz)
- Ihre Markierung auf Seite 7 | Position 88-90 | Hinzugefügt am Montag, 6. März 2023 08:01:00

Jemand mußte Josef K. verleumdet haben, denn ohne daß er etwas Böses getan hätte.
==========
Der Process (Kafka, Franz)
- Ihr Lesezeichen auf Seite 9 | Position 100 | Hinzugefügt am Montag, 6. März 2023 08:05:00


==========
"""


def kindle_clippings(folder: Path, text: str = KINDLE_CLIPPINGS) -> Path:
    path = folder / "My Clippings.txt"
    path.write_text(text.replace("\n", "\r\n"), encoding="utf-8")  # as the device writes it
    return path


def zip_of(path: Path, members: dict[str, bytes]) -> Path:
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return path


def zip_bytes(members: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()
