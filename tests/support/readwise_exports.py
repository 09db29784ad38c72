"""Readwise's exports as it writes them: the CSV (a row per highlight, fields quoted where
they hold commas, quotes or line breaks, a BOM first) and the Markdown zip (a page per book
under `Books/`, `Articles/`, …). For the `loci import readwise` tests."""

from __future__ import annotations

import csv
import io
from pathlib import Path

from tests.support.exports import zip_of

COLUMNS = [
    "Highlight",
    "Book Title",
    "Book Author",
    "Amazon Book ID",
    "Note",
    "Color",
    "Tags",
    "Location Type",
    "Location",
    "Highlighted at",
    "Document tags",
]

SAMPLE: list[list[str]] = [
    [
        "Habits are the compound interest of self-improvement.",
        "Atomic Habits",
        "James Clear",
        "B07D23CFGR",
        "",
        "yellow",
        "",
        "location",
        "271",
        "2023-01-04 21:13:00+00:00",
        "self-help, habits",
    ],
    [
        'You do not rise to the level of your goals.\nYou fall to the level of your "systems".',
        "Atomic Habits",
        "James Clear",
        "B07D23CFGR",
        "Quote this in the team retro, with the 1% chart.",
        "blue",
        "favorite, work",
        "location",
        "373",
        "2023-01-05 07:40:12+00:00",
        "self-help, habits",
    ],
    [
        "Make it obvious, make it attractive, make it easy, make it satisfying.",
        "Atomic Habits",
        "James Clear",
        "B07D23CFGR",
        "",
        "yellow",
        "",
        "page",
        "54",
        "2023-01-09 19:02:55+00:00",
        "self-help, habits",
    ],
    [
        "Write the tests first, then the code, then delete half of both.",
        "How I review pull requests",
        "Jane Doe",
        "",
        "",
        "",
        "",
        "order",
        "2",
        "2023-04-18 12:00:00+00:00",
        "",
    ],
]


def readwise_csv(
    path: Path, rows: list[list[str]] = SAMPLE, *, columns: list[str] = COLUMNS
) -> Path:
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(columns)
    writer.writerows(rows)
    path.write_bytes(b"\xef\xbb\xbf" + buffer.getvalue().encode("utf-8"))
    return path


ATOMIC_HABITS_MD = """# Atomic Habits

![rw-book-cover](https://images-na.ssl-images-amazon.com/images/I/81wgcld4wxL._SL200_.jpg)

## Metadata
- Author: [[James Clear]]
- Full Title: Atomic Habits
- Category: #books

## Highlights
- Habits are the compound interest of self-improvement. ([Location 271](https://readwise.io/to_kindle?action=open&asin=B07D23CFGR&location=271))
- You do not rise to the level of your goals. ([Location 373](https://readwise.io/to_kindle?action=open&asin=B07D23CFGR&location=373))
    - Note: Quote this in the team retro.
"""


def readwise_markdown(path: Path) -> Path:
    return zip_of(
        path,
        {
            "Readwise/Books/Atomic Habits.md": ATOMIC_HABITS_MD.encode(),
            "Readwise/Articles/How I review pull requests.md": (
                b"# How I review pull requests\n\n## Highlights\n"
                b"- Write the tests first, then the code, then delete half of both.\n"
            ),
        },
    )
