"""Google Keep as Google Takeout exports it: `Takeout/Keep/` with a JSON file per note (named
by its title), its HTML twin, and attachments beside them; and a note of an older Takeout,
which wrote only the HTML. For the `loci import keep` tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from html import escape
from pathlib import Path
from typing import Any

from tests.support.exports import zip_of

# A few bytes of a real JPEG's start: an attachment is kept as it is, not looked into.
PHOTO = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00" + b"\x00" * 64


def usec(when: str) -> int:
    return int(datetime.fromisoformat(when).replace(tzinfo=UTC).timestamp() * 1_000_000) + 123


def keep_note(title: str, **fields: Any) -> dict[str, Any]:
    """A note's JSON as Takeout writes it; `fields` replace its defaults."""
    note: dict[str, Any] = {
        "color": "DEFAULT",
        "isTrashed": False,
        "isPinned": False,
        "isArchived": False,
        "textContent": "",
        "title": title,
        "userEditedTimestampUsec": usec("2023-06-02 08:30"),
        "createdTimestampUsec": usec("2023-06-01 19:05"),
        "labels": [],
    }
    note.update(fields)
    if "textContent" in note and note["textContent"]:
        note["textContentHtml"] = "<p>" + escape(note["textContent"]) + "</p>"
    return note


def keep_sample() -> dict[str, dict[str, Any]]:
    """Notes by their file stem: a pinned labelled note with a link and a photo, a checklist,
    an archived note, an untitled one, and one in the trash."""
    return {
        "Bike repair": keep_note(
            "Bike repair",
            textContent="Rear derailleur slips on the small cog.\nTry half a turn on the"
            " barrel adjuster before replacing the cable.",
            labels=[{"name": "Bike"}, {"name": "Howto"}],
            isPinned=True,
            color="YELLOW",
            annotations=[
                {
                    "description": "Indexing a rear derailleur",
                    "source": "WEBLINK",
                    "title": "Park Tool: derailleur adjustment",
                    "url": "https://www.parktool.com/en-us/blog/repair-help/rear-derailleur-adjustment",
                }
            ],
            attachments=[{"filePath": "1f9a7c2b3d.jpeg", "mimetype": "image/jpeg"}],
        ),
        "Groceries": keep_note(
            "Groceries",
            textContent=None,
            listContent=[
                {"textHtml": "oat milk", "text": "oat milk", "isChecked": True},
                {"textHtml": "smoked paprika", "text": "smoked paprika", "isChecked": False},
            ],
            labels=[{"name": "Shopping"}],
        ),
        "Flat hunting 2019": keep_note(
            "Flat hunting 2019",
            textContent="Viewing on Lindenstraße: landlord wants three months' deposit.",
            isArchived=True,
            createdTimestampUsec=usec("2019-02-11 17:00"),
            userEditedTimestampUsec=usec("2019-03-01 12:00"),
        ),
        "2023-07-14T21_14_09.481+02_00": keep_note(
            "",
            textContent="Gate code for the allotment is 4711, padlock on the left shed.",
        ),
        "Old passwords": keep_note("Old passwords", textContent="do not keep this", isTrashed=True),
    }


def keep_html(
    title: str,
    text: str,
    *,
    checklist: Sequence[tuple[str, bool]] = (),
    labels: Sequence[str] = (),
    archived: bool = False,
) -> str:
    """A note's HTML as Takeout writes it (the only form in older exports)."""
    icons = '<span class="archived" title="Note archived"></span>' if archived else ""
    items = "".join(
        f'<li class="listitem{" checked" if done else ""}"><span class="bullet">'
        f'{"&#9745;" if done else "&#9744;"}</span><span class="text">{escape(t)}</span></li>'
        for t, done in checklist
    )
    chips = "".join(
        f'<span class="chip label"><span class="label-name">{escape(n)}</span></span>'
        for n in labels
    )
    return (
        '<?xml version="1.0" ?><!DOCTYPE html><html><head><meta charset="utf-8">'
        f"<title>{escape(title)}</title><style>body {{ font-family: Roboto; }}</style></head>"
        f'<body><div class="note DEFAULT"><div class="heading"><div class="meta-icons">{icons}'
        "</div>\n11 Feb 2016, 18:02:45</div>\n"
        f'<div class="title">{escape(title)}</div>\n'
        f'<div class="content">{"<br>".join(escape(line) for line in text.split(chr(10)))}'
        f"</div>\n"
        + (f'<div class="list">{items}</div>' if items else "")
        + (f'<div class="chips">{chips}</div>' if chips else "")
        + "</div></body></html>"
    )


def keep_takeout(
    path: Path,
    notes: dict[str, dict[str, Any]],
    *,
    html_only: dict[str, str] | None = None,
    raw: dict[str, bytes] | None = None,
) -> Path:
    """The Takeout zip: each note's JSON and HTML twin, the photo the sample's first note
    lists (Takeout names it .jpg though the note says .jpeg), and Labels.txt."""
    members: dict[str, bytes] = {"Takeout/archive_browser.html": b"<html>Takeout</html>"}
    for stem, note in notes.items():
        members[f"Takeout/Keep/{stem}.json"] = json.dumps(note, ensure_ascii=False).encode()
        text = note.get("textContent") or ""
        members[f"Takeout/Keep/{stem}.html"] = keep_html(note["title"], text).encode()
    for stem, html in (html_only or {}).items():
        members[f"Takeout/Keep/{stem}.html"] = html.encode()
    for name, data in (raw or {}).items():
        members[f"Takeout/Keep/{name}"] = data
    members["Takeout/Keep/1f9a7c2b3d.jpg"] = PHOTO
    members["Takeout/Keep/Labels.txt"] = b"Bike\nHowto\nShopping\n"
    return zip_of(path, members)
