"""Google Keep, from Google Takeout: a zip (or the folder it was unpacked into) whose
`Takeout/Keep/` holds a `.json` for each note and an `.html` twin of it, beside the note's
attachments. The JSON says it all: `title`, `textContent`, or `listContent` for a checklist
(`text`, `isChecked`), `labels` (`name`), `isPinned`, `isArchived`, `isTrashed`, `color`,
`createdTimestampUsec`, `userEditedTimestampUsec` (microseconds since the epoch),
`attachments` (`filePath` beside the note, `mimetype`) and `annotations` (the web links Keep
found in it). Older exports have only the `.html`: a note found only that way, or whose JSON
cannot be read, is read from it.

A note is one document: labels are its tags, a checklist is written as Markdown's task list
("- [x] milk"), pinned, archived and colour kept in its metadata (an archived note also says
so in its facts line, as Keep files it apart), its links listed under it, and each attachment
a document of its own linked to it. Trashed notes are skipped, with why.

The note's key is its JSON file's stem, as Takeout names it (the title, or the time it was made
for an untitled note, with " (1)" added on a clash): Keep's JSON carries no id of the note,
and the stem is what stays the same between two Takeouts of unchanged notes. A note retitled
in Keep is therefore a new document on the next import (its old one stays)."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from lxml import etree
from lxml import html as lxml_html

from loci.imports.archive import Member
from loci.imports.export_files import export_members
from loci.imports.items import Attachment, Export, ExportRefused, Item, ItemFailure, Limits
from loci.imports.markdown import file_name, note_markdown
from loci.imports.sections import demote_headings

TOOL = "Google Keep"
_CHECKED_BOX = "\u2611"


@dataclass
class _Note:
    title: str
    text: str = ""
    checklist: list[tuple[str, bool]] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    created: str | None = None
    updated: str | None = None
    pinned: bool = False
    archived: bool = False
    trashed: bool = False
    color: str | None = None
    links: list[tuple[str, str]] = field(default_factory=list)  # (title, url)
    files: list[tuple[str, str | None]] = field(default_factory=list)  # (path, mime type)


class _Unreadable(Exception):
    pass


def read(path: Path, limits: Limits) -> Export:
    members = _keep_folder(export_members(path, limits))
    by_path = {m.path: m for m in members}
    stems: dict[str, dict[str, Member]] = {}
    for member in members:
        pure = PurePosixPath(member.path)
        if pure.suffix.lower() in (".json", ".html"):
            stems.setdefault(str(pure.with_suffix("")), {})[pure.suffix.lower()] = member
    export = Export(kind="keep")
    found = 0
    for stem, twins in stems.items():
        try:
            note = _read_note(twins)
        except _Unreadable as error:
            export.failed.append(
                ItemFailure((twins.get(".json") or twins[".html"]).path, str(error))
            )
            found += 1
            continue
        if note is None:  # not a note: Labels.json, an index page
            continue
        found += 1
        name = note.title or PurePosixPath(stem).name
        if note.trashed:
            export.skipped.append(ItemFailure(name, "in Keep's trash"))
            continue
        export.add(_item(PurePosixPath(stem).name, note, stem, by_path), limits)
    if not found:
        raise ExportRefused(
            "this export has no Google Keep notes (Takeout/Keep/*.json); is it a Google"
            " Takeout of Keep?"
        )
    return export


def _read_note(twins: dict[str, Member]) -> _Note | None:
    """A note from its JSON; from its HTML twin when it has no JSON (an older export) or its
    JSON cannot be read (a file cut short), since the twin says the same."""
    if ".json" not in twins:
        return _from_html(twins[".html"].data)
    try:
        return _from_json(twins[".json"].data)
    except _Unreadable:
        if ".html" in twins and (note := _from_html(twins[".html"].data)) is not None:
            return note
        raise


def _keep_folder(members: list[Member]) -> list[Member]:
    """The members of the export's Keep folder, by their path in it; the whole export when
    it is the Keep folder itself."""
    inside = [m for m in members if "Keep" in PurePosixPath(m.path).parts[:-1]]
    if not inside:
        return members
    return [Member(_below_keep(m.path), m.data) for m in inside]


def _below_keep(path: str) -> str:
    parts = path.split("/")
    return "/".join(parts[parts.index("Keep") + 1 :])


def _item(key: str, note: _Note, stem: str, by_path: dict[str, Member]) -> Item:
    title = note.title or _first_words(note) or key
    parts: list[str] = []
    if note.text.strip():
        parts.append(demote_headings(note.text.strip(), 1))
    if note.checklist:
        parts.append(
            "\n".join(
                f"- [{'x' if done else ' '}] " + text.strip().replace("\n", "\n  ")
                for text, done in note.checklist
            )
        )
    if note.links:
        parts.append("Links:\n\n" + "\n".join(f"- [{t or u}]({u})" for t, u in note.links))
    where = (TOOL, "Archive") if note.archived else (TOOL,)
    folder = str(PurePosixPath(stem).parent)
    attachments, missing = _attachments(note, folder, by_path)
    return Item(
        key=key,
        name=file_name(title, key),
        body=note_markdown(
            title,
            "\n\n".join(parts),
            where=where,
            tags=note.labels,
            created=note.created,
            updated=note.updated,
        ),
        title=title,
        created=note.created,
        updated=note.updated,
        tags=tuple(note.labels),
        where=where,
        attachments=tuple(attachments),
        extra={
            "pinned": note.pinned or None,
            "archived": note.archived or None,
            "color": note.color if note.color not in (None, "DEFAULT") else None,
            "links": [u for _, u in note.links] or None,
            "missing attachments": missing or None,
        },
    )


def _first_words(note: _Note) -> str:
    """An untitled note's title, as Keep's list shows it: its first line, cut at a word."""
    lines = note.text.strip().split("\n") if note.text.strip() else [t for t, _ in note.checklist]
    words = " ".join(lines[0].split()) if lines else ""
    if len(words) <= 80:
        return words
    return words[:80].rsplit(" ", 1)[0] + "…"


def _attachments(
    note: _Note, folder: str, by_path: dict[str, Member]
) -> tuple[list[Attachment], list[str]]:
    """The note's files, found beside it. Takeout sometimes names a file `.jpg` that the
    note lists as `.jpeg` (or the other way round), so a file is also found by its stem."""
    kept: list[Attachment] = []
    missing: list[str] = []
    for listed, mime in note.files:
        inside = str(PurePosixPath(folder) / listed) if folder != "." else listed
        member = by_path.get(inside)
        if member is None:
            stem = str(PurePosixPath(inside).with_suffix(""))
            member = next(
                (m for p in _IMAGE_SUFFIXES if (m := by_path.get(stem + p)) is not None), None
            )
        if member is None:
            missing.append(listed)
            continue
        kept.append(Attachment(PurePosixPath(member.path).name, member.data, mime))
    return kept, missing


_IMAGE_SUFFIXES = (".jpg", ".jpeg", ".png", ".gif", ".webp", ".3gp", ".m4a", ".awb")


def _from_json(data: bytes) -> _Note | None:
    try:
        raw = json.loads(data.decode("utf-8-sig"))
    except UnicodeDecodeError:
        raise _Unreadable("not UTF-8 text, as Takeout writes it") from None
    except json.JSONDecodeError as error:
        raise _Unreadable(f"not valid JSON ({error.msg} at line {error.lineno})") from None
    if not isinstance(raw, dict) or not ({"textContent", "listContent"} & raw.keys()):
        return None
    labels = [
        str(label["name"]).strip()
        for label in _list(raw.get("labels"))
        if isinstance(label, dict) and str(label.get("name") or "").strip()
    ]
    return _Note(
        title=_string(raw.get("title")).strip(),
        text=_string(raw.get("textContent")),
        checklist=[
            (_string(entry.get("text")), entry.get("isChecked") is True)
            for entry in _list(raw.get("listContent"))
            if isinstance(entry, dict)
        ],
        labels=labels,
        created=_usec(raw.get("createdTimestampUsec")),
        updated=_usec(raw.get("userEditedTimestampUsec")),
        pinned=raw.get("isPinned") is True,
        archived=raw.get("isArchived") is True,
        trashed=raw.get("isTrashed") is True,
        color=raw.get("color") if isinstance(raw.get("color"), str) else None,
        links=[
            (_string(a.get("title")), a["url"])
            for a in _list(raw.get("annotations"))
            if isinstance(a, dict) and isinstance(a.get("url"), str)
        ],
        files=[
            (a["filePath"], a.get("mimetype") if isinstance(a.get("mimetype"), str) else None)
            for a in _list(raw.get("attachments"))
            if isinstance(a, dict) and isinstance(a.get("filePath"), str)
        ],
    )


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _usec(value: Any) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | str):
        return None
    try:
        return datetime.fromtimestamp(int(value) / 1_000_000, UTC).isoformat()
    except (ValueError, OverflowError, OSError):
        return None


def _from_html(data: bytes) -> _Note | None:
    """A note of an older Takeout, which wrote only HTML: `div.note` holding `div.title`,
    `div.content` (lines as `<br>`), `div.list` of `.listitem`s (checked ones marked
    `checked` or by a ☑ bullet) and `.label-name` chips; `.meta-icons` say pinned and
    archived. Read with a parser that fetches nothing."""
    parser = lxml_html.HTMLParser(no_network=True, remove_comments=True, remove_pis=True)
    try:
        root = lxml_html.document_fromstring(data, parser=parser)
    except (etree.ParserError, ValueError) as error:
        raise _Unreadable(f"not readable HTML ({error})") from None
    notes = root.find_class("note")
    if not notes:
        return None
    note = notes[0]
    for br in note.iter("br"):
        br.tail = "\n" + (br.tail or "")

    def first(cls: str) -> str:
        found = note.find_class(cls)
        return found[0].text_content().strip() if found else ""

    checklist = []
    for entry in note.find_class("listitem"):
        texts = entry.find_class("text")
        text = (texts[0] if texts else entry).text_content().strip()
        done = "checked" in (entry.get("class") or "").split() or _CHECKED_BOX in "".join(
            b.text_content() for b in entry.find_class("bullet")
        )
        checklist.append((text, done))
    icons = " ".join(
        (i.get("class") or "") + " " + (i.get("title") or "")
        for holder in note.find_class("meta-icons")
        for i in holder.iter()
    ).lower()
    return _Note(
        title=first("title"),
        text=first("content"),
        checklist=checklist,
        labels=[n.text_content().strip() for n in note.find_class("label-name")],
        pinned="pinned" in icons,
        archived="archived" in icons,
        trashed="trashed" in icons,
    )
