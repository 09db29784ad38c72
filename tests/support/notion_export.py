"""A Notion "Markdown & CSV" export, laid out as Notion lays one out: a zip holding
`Export-<uuid>-Part-1.zip`, page files named "Title <32-hex id>.md" under an "Export-<uuid>"
folder, sub-pages and files in a folder named like their page, a database as "Name <id>.csv"
plus "Name <id>_all.csv" and a folder of its rows' pages, links as URL-encoded relative paths."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import quote

from tests.support.exports import zip_bytes, zip_of

TRIP = "1f0c4a5e9b2d4c7a8e6f0a1b2c3d4e5f"
PACKING = "2a9d8c7b6e5f4a3b2c1d0e9f8a7b6c5d"
READING = "3b1e2d3c4b5a69788796a5b4c3d2e1f0"
DUNE = "4c2f3e4d5c6b7a8998a7b6c5d4e3f2a1"
MEETING_1 = "6e4b5a6f7e8d9cabbac9d8e7f6a5b4c3"
MEETING_2 = "7f5c6b7a8f9eadbccbdae9f8a7b6c5d4"
LONG = "8a6d7c8b9a0fbecddcebfa09b8c7d6e5"
LONG_TITLE = "A very long page title (2023 edition) that Notion cuts short in its file name"
WRAPPER = "Export-0b6a1d2e-3f4a-5b6c-7d8e-9f0a1b2c3d4e"


def link(*parts: str) -> str:
    """A link target as Notion writes it: each path part URL-encoded as JavaScript's
    encodeURIComponent does, which leaves parentheses as they are."""
    return "/".join(quote(p, safe="()!*'~") for p in parts)


def notion_pages(
    trip_text: str = "We stayed in Alfama, near the route of tram 28.",
) -> dict[str, bytes]:
    trip_folder = f"Trip to Lisbon {TRIP}"
    reading_folder = f"Reading list {READING}"
    pages: dict[str, str | bytes] = {
        f"Trip to Lisbon {TRIP}.md": (
            "# Trip to Lisbon\n\n"
            "Created: January 5, 2023 10:15 AM\n"
            "Last edited time: March 2, 2023 6:40 PM\n"
            "Tags: travel, portugal\n\n"
            f"{trip_text}\n\n"
            f"Pack from the [Packing list]({link(trip_folder, f'Packing list {PACKING}.md')})"
            f" and read from the [Reading list]({link(f'Reading list {READING}.csv')}).\n\n"
            f"![tram.png]({link(trip_folder, 'tram.png')})\n\n"
            f"[itinerary.txt]({link(trip_folder, 'itinerary.txt')})\n"
        ),
        f"{trip_folder}/Packing list {PACKING}.md": (
            "# Packing list\n\n"
            "- sunscreen\n- a light jacket for the evening wind off the Tagus\n\n"
            f"Back to [Trip to Lisbon]({link('..', f'Trip to Lisbon {TRIP}.md')}).\n"
        ),
        f"{trip_folder}/tram.png": _PNG,
        f"{trip_folder}/itinerary.txt": b"Day one: Belem tower and pasteis at dawn.\n",
        f"Reading list {READING}.csv": _reading_csv(rows=1),
        f"Reading list {READING}_all.csv": _reading_csv(rows=2),
        f"{reading_folder}/Dune {DUNE}.md": (
            "# Dune\n\n"
            "Author: Frank Herbert\nStatus: Reading\n\n"
            "On Arrakis the Fremen keep every drop of water in their stillsuits.\n"
        ),
        f"Meeting notes {MEETING_1}.md": (
            "# Meeting notes\n\nBudget for the garden shed, as in"
            f" [the long page]({link(f'{LONG_TITLE[:50]} {LONG}.md')}).\n"
        ),
        f"Meeting notes {MEETING_2}.md": "# Meeting notes\n\nThe choir rehearses on Tuesdays.\n",
        f"{LONG_TITLE[:50]} {LONG}.md": f"# {LONG_TITLE}\n\nA page whose name was cut short.\n",
    }
    return {
        f"{WRAPPER}/{name}": data.encode("utf-8") if isinstance(data, str) else data
        for name, data in pages.items()
    }


def notion_export(
    folder: Path, pages: dict[str, bytes] | None = None, name: str = "export.zip"
) -> Path:
    """The export as Notion sends it: a zip holding its part zips."""
    part = zip_bytes(pages if pages is not None else notion_pages())
    return zip_of(folder / name, {f"{WRAPPER}-Part-1.zip": part})


def notion_parts(folder: Path, split: str) -> Path:
    """The export in two part zips, as Notion splits a big one: the files whose path
    contains `split` in Part-2, the rest in Part-1."""
    pages = notion_pages()
    first = {n: d for n, d in pages.items() if split not in n}
    second = {n: d for n, d in pages.items() if split in n}
    return zip_of(
        folder / "parts.zip",
        {f"{WRAPPER}-Part-1.zip": zip_bytes(first), f"{WRAPPER}-Part-2.zip": zip_bytes(second)},
    )


def notion_folder(folder: Path, pages: dict[str, bytes] | None = None) -> Path:
    """The export unpacked, as a person who opened the zip has it."""
    root = folder / "notion"
    for name, data in (pages if pages is not None else notion_pages()).items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def _reading_csv(rows: int) -> str:
    lines = [
        "\ufeffName,Author,Status,Notes,Related",
        "The Name of the Rose,Umberto Eco,Done,"
        '"A murder mystery in a monastery with a labyrinthine library",'
        f"Trip to Lisbon ({link('..', f'Trip to Lisbon {TRIP}.md')})",
        'Dune,Frank Herbert,Reading,"Desert planet, sandworms",',
    ]
    return "\n".join(lines[: rows + 1]) + "\n"


# A 1×1 PNG, the smallest image a page can show.
_PNG = bytes.fromhex(
    "89504e470d0a1a0a0000000d4948445200000001000000010806000000"
    "1f15c4890000000d49444154789c6360000002000154a24f5d0000000049454e44ae426082"
)
