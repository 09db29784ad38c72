"""Evernote's ENEX: one XML file per notebook (`<en-export>` of `<note>`s), or a zip or folder of
them. A note holds its title, its text as ENML (Evernote's XHTML, inside a CDATA section), its
created and updated times ("20230105T101500Z"), its tags, a few attributes (source URL, author)
and its resources: attached files, base64-encoded, each with its MIME type and file name.

A note becomes a Markdown document (`loci.imports.enml` turns its ENML into text), its notebook
(the file's name, or the `<notebook>` element newer exports write) its place and its tags its
tags; its resources become attachments, and where the note showed one (`<en-media hash=…>`, the
MD5 of the resource's bytes) the text names it.

ENEX has no stable note id, so a note's key is made of its notebook, its created time and its
title: the same note exported again is the same document, and an edited note updates it. The
limit of that choice: a note renamed in Evernote (or moved to another notebook) is a new
document, and the old one stays until removed.

Parsing is bounded and safe: the file is read a note at a time (`iterparse`, each note dropped
once read), so a gigabyte export does not need gigabytes more for its tree; no DTD is loaded
and nothing is fetched (every ENEX names Evernote's DTD by URL); an export whose DOCTYPE
declares anything itself (entity tricks: "billion laughs", external entities) is refused
whole, before any note is read, since Evernote never writes one."""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import mimetypes
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import IO

from lxml import etree

from loci.imports.archive import is_zip, read_zip
from loci.imports.enml import EnmlError, Media, enml_markdown, text_of
from loci.imports.items import Attachment, Export, ExportRefused, Item, ItemFailure, Limits
from loci.imports.markdown import file_name, note_markdown

_PROLOGUE_BYTES = 64 * 1024
_ROOT = "en-export"
_TIME = re.compile(r"^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z?$")


def read(path: Path, limits: Limits) -> Export:
    export = Export(kind="evernote")
    files = _enex_files(path, limits)
    if not files:
        raise ExportRefused(f"{path.name} holds no .enex file; is it an Evernote export?")
    total = 0
    keys: dict[str, int] = {}
    for name, open_file in files:
        with open_file() as stream:
            _refuse_declarations(name, stream)  # hostile: the whole export is refused
            try:
                found = list(_notes(name, stream, limits))
            except ExportRefused as error:
                if len(files) == 1:
                    raise
                # One unreadable notebook of several fails alone, none of its notes taken,
                # so none is imported half.
                export.failed.append(ItemFailure(name, error.message))
                continue
        for item_or_failure in found:
            if isinstance(item_or_failure, ItemFailure):
                export.failed.append(item_or_failure)
                continue
            item = _unique(item_or_failure, keys)
            total += len(item.body) + sum(len(a.data) for a in item.attachments)
            if total > limits.max_bytes:
                raise ExportRefused(
                    f"this export holds more than {limits.max_bytes:,} bytes of notes and"
                    " attachments; nothing was imported (raise LOCI_IMPORT_MAX_BYTES if it"
                    " is genuine)"
                )
            export.add(item, limits)
    return export


def _enex_files(path: Path, limits: Limits) -> list[tuple[str, Callable[[], IO[bytes]]]]:
    """Each ENEX file of the export, by its name, and how to open it (one at a time). Files
    on disk are held against `max_bytes` before any is parsed: that bounds what the parser
    may be asked to hold (a zip's members are bounded as they are unpacked)."""
    if is_zip(path):
        return [
            (member.path.rsplit("/", 1)[-1], partial(io.BytesIO, member.data))
            for member in read_zip(path, limits)
            if member.path.lower().endswith(".enex")
        ]
    found = [path] if not path.is_dir() else [
        # A symlink could lead anywhere on the machine: only the export's own files.
        f for f in sorted(path.rglob("*"))
        if f.suffix.lower() == ".enex" and f.is_file() and not f.is_symlink()
    ]  # fmt: skip
    if sum(f.stat().st_size for f in found) > limits.max_bytes:
        raise ExportRefused(
            f"{path.name} is over {limits.max_bytes:,} bytes; nothing was imported (raise"
            " LOCI_IMPORT_MAX_BYTES if it is genuine)"
        )
    return [(f.name, _opener(f)) for f in found]


def _opener(path: Path) -> Callable[[], IO[bytes]]:
    return lambda: path.open("rb")


def _notes(name: str, stream: IO[bytes], limits: Limits) -> Iterator[Item | ItemFailure]:
    notebook = name[: -len(".enex")] if name.lower().endswith(".enex") else name
    # huge_tree: a resource is one base64 text node, and libxml2's default cap on a text node
    # (10 MB) would refuse a whole notebook for one 8 MB PDF. What huge_tree lifts is bounded
    # here instead: each resource against `max_item_bytes`, the export against `max_bytes`,
    # and entities cannot expand since none may be declared (`_refuse_declarations`).
    notes = etree.iterparse(
        stream,
        events=("end",),
        tag="note",
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=True,
    )
    number = 0
    try:
        for _, note in notes:
            number += 1
            try:
                yield _note(note, notebook, limits)
            except EnmlError as error:
                title = text_of(note.find("title")) or f"note {number} of {name}"
                yield ItemFailure(title, str(error))
            # Done with it: drop it and what came before, so the tree never holds more than
            # the note being read.
            note.clear(keep_tail=False)
            parent = note.getparent()
            while parent is not None and note.getprevious() is not None:
                del parent[0]
    except etree.XMLSyntaxError as error:
        raise ExportRefused(
            f"{name} is not readable XML ({_reason(error)}); nothing was imported"
        ) from None
    root = notes.root
    if root is None or root.tag != _ROOT:
        raise ExportRefused(f"{name} is not an Evernote export (no <{_ROOT}>)")


def _refuse_declarations(name: str, stream: IO[bytes]) -> None:
    """Refuse an export whose DOCTYPE declares anything of its own: Evernote's names only its
    DTD's address, so a declaration there is at best foreign and at worst an entity trick. The
    prologue must end (at `<en-export>`) within the bytes looked at, so none hides past them."""
    head = stream.read(_PROLOGUE_BYTES)
    stream.seek(0)
    for encoding in ("utf-8", "utf-16-le", "utf-16-be"):
        root_at = head.find(f"<{_ROOT}".encode(encoding))
        if root_at < 0:
            continue
        prologue = head[:root_at]
        if any(mark.encode(encoding) in prologue for mark in ("<!ENTITY", "[")):
            raise ExportRefused(
                f"{name} declares XML entities or a DTD of its own, which Evernote never"
                " writes; refused, nothing was imported"
            )
        return
    # Whatever pushes the prologue's end past the first bytes is not Evernote's either.
    raise ExportRefused(
        f"{name} is not an Evernote export: no <{_ROOT}> in its first {_PROLOGUE_BYTES // 1024} KB"
    )


def _note(note: etree._Element, notebook: str, limits: Limits) -> Item:
    title = text_of(note.find("title")).strip() or "Untitled"
    notebook = text_of(note.find("notebook")).strip() or notebook
    created = _time(text_of(note.find("created")))
    updated = _time(text_of(note.find("updated")))
    tags = tuple(dict.fromkeys(t for t in (text_of(e).strip() for e in note.iter("tag")) if t))
    attributes = note.find("note-attributes")
    url = author = None
    if attributes is not None:
        url = text_of(attributes.find("source-url")).strip() or None
        author = text_of(attributes.find("author")).strip() or None
    media: dict[str, Media] = {}
    attachments: list[Attachment] = []
    for number, resource in enumerate(note.iter("resource"), 1):
        attachment = _resource(resource, title, number, limits)
        if attachment is None:
            continue
        digest = hashlib.md5(attachment.data, usedforsecurity=False).hexdigest()
        media[digest] = Media(attachment.name, attachment.mime_type)
        attachments.append(attachment)
    text = enml_markdown(text_of(note.find("content")), media)
    if text.startswith(f"# {title}\n") or text == f"# {title}":
        text = text[len(title) + 2 :]  # the note's own title, written again as its heading
    return Item(
        key=f"{notebook}/{created or ''}/{title}",
        name=file_name(title, "note"),
        body=note_markdown(
            title, text, where=(notebook,), tags=tags, created=created, updated=updated, url=url
        ),
        title=title,
        created=created,
        updated=updated,
        tags=tags,
        where=(notebook,),
        attachments=tuple(attachments),
        url=url,
        extra={"notebook": notebook, "author": author},
    )


def _resource(
    resource: etree._Element, title: str, number: int, limits: Limits
) -> Attachment | None:
    """The resource as an attachment; None for one with no bytes, which has nothing to keep."""
    data_element = resource.find("data")
    encoded = text_of(data_element)
    if not encoded.strip():
        return None
    mime = text_of(resource.find("mime")).strip() or None
    name = ""
    attributes = resource.find("resource-attributes")
    if attributes is not None:
        name = text_of(attributes.find("file-name")).strip()
    if not name:
        extension = (mime and mimetypes.guess_extension(mime)) or ""
        name = f"{title[:60]} attachment {number}{extension}"
    # Checked before decoding: the decoded size is three quarters of the base64 text's.
    if len(encoded) * 3 // 4 > limits.max_item_bytes:
        raise EnmlError(
            f"its attachment {name!r} is over {limits.max_item_bytes:,} bytes (raise"
            " LOCI_IMPORT_MAX_MB to import it)"
        )
    encoding = data_element.get("encoding", "base64") if data_element is not None else "base64"
    if encoding != "base64":
        raise EnmlError(f"its attachment {name!r} is encoded as {encoding!r}, not base64")
    try:
        data = base64.b64decode("".join(encoded.split()), validate=True)
    except (binascii.Error, ValueError):
        raise EnmlError(f"its attachment {name!r} is not valid base64") from None
    return Attachment(name=file_name(name, "attachment", suffix=""), data=data, mime_type=mime)


def _unique(item: Item, keys: dict[str, int]) -> Item:
    """Two notes of one notebook with the same title made in the same second (a duplicated
    note) are told apart by their order in the export."""
    seen = keys.get(item.key, 0)
    keys[item.key] = seen + 1
    if not seen:
        return item
    return replace(item, key=f"{item.key}#{seen + 1}")


def _time(value: str) -> str | None:
    match = _TIME.match(value.strip())
    if not match:
        return None
    y, mo, d, h, mi, s = match.groups()
    return f"{y}-{mo}-{d}T{h}:{mi}:{s}Z"


def _reason(error: etree.XMLSyntaxError) -> str:
    message = getattr(error, "msg", "") or str(error)
    if "encoding" in message.lower():
        return f"its bytes are not in the encoding it declares: {message}"
    return message
