"""Evernote ENEX files, written as Evernote writes them (its published ENEX and ENML DTDs):
an `<en-export>` of `<note>`s, each note's ENML in a CDATA section with its own XML
declaration and DOCTYPE, times as "20230105T101500Z", resources base64-encoded with their MIME
type, file name and the MD5 an `<en-media>` tag points at them by; and hostile ones."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

_HEAD = (
    '<?xml version="1.0" encoding="{encoding}"?>\n'
    '<!DOCTYPE en-export SYSTEM "{dtd}">\n'
    '<en-export export-date="20230301T120000Z" application="Evernote" version="10.52.8">\n'
)
DTD = "http://xml.evernote.com/pub/evernote-export4.dtd"


@dataclass(frozen=True)
class Resource:
    data: bytes
    mime: str
    file_name: str | None = None

    @property
    def hash(self) -> str:
        return hashlib.md5(self.data, usedforsecurity=False).hexdigest()


@dataclass(frozen=True)
class Note:
    title: str
    enml_body: str  # what goes inside <en-note>
    created: str = "20230105T101500Z"
    updated: str | None = "20230106T080000Z"
    tags: tuple[str, ...] = ()
    source_url: str | None = None
    author: str | None = None
    resources: tuple[Resource, ...] = ()
    raw_content: str | None = None  # the whole CDATA text, for broken ENML
    notebook: str | None = None


PDF_RECEIPT = Resource(
    b"%PDF-1.4\n% not a real PDF: a receipt for the tests\n", "application/pdf", "receipt.pdf"
)
NOTE_TEXT = Resource(b"Soak the beans overnight in salted water.\n", "text/plain", "beans.txt")


def recipes() -> list[Note]:
    return [
        Note(
            title="Feijoada",
            tags=("cooking", "brazil"),
            source_url="https://example.org/feijoada",
            author="Ana",
            resources=(NOTE_TEXT,),
            enml_body=(
                "<h1>Feijoada</h1>"
                "<div>A black bean stew&nbsp;with smoked pork, served with orange slices.</div>"
                "<div><br/></div>"
                "<h2>Shopping</h2>"
                '<div><en-todo checked="true"/>black beans</div>'
                "<div><en-todo/>farofa</div>"
                "<ul><li>bay leaves</li><li>garlic<ul><li>two heads</li></ul></li></ul>"
                "<table><tr><td>Step</td><td>Minutes</td></tr>"
                "<tr><td>Simmer the pork</td><td>90</td></tr></table>"
                f'<div><en-media hash="{NOTE_TEXT.hash}" type="text/plain"/></div>'
            ),
        ),
        Note(
            title="Receipts",
            tags=("money",),
            created="20230210T091000Z",
            updated=None,
            resources=(PDF_RECEIPT,),
            enml_body=(
                "<div>Kept for the tax return: the <b>stove</b> receipt.</div>"
                f'<en-media hash="{PDF_RECEIPT.hash}" type="application/pdf"/>'
            ),
        ),
    ]


def enex(
    notes: list[Note],
    *,
    encoding: str = "UTF-8",
    dtd: str = DTD,
    head: str | None = None,
) -> str:
    parts = [head if head is not None else _HEAD.format(encoding=encoding, dtd=dtd)]
    for note in notes:
        parts.append(_note(note))
    parts.append("</en-export>\n")
    return "".join(parts)


def enex_file(
    folder: Path, notebook: str, notes: list[Note], *, encoding: str = "UTF-8", **options: str
) -> Path:
    path = folder / f"{notebook}.enex"
    folder.mkdir(parents=True, exist_ok=True)
    path.write_bytes(enex(notes, encoding=encoding, **options).encode(encoding))
    return path


def billion_laughs() -> str:
    entities = ['<!ENTITY lol "lol">'] + [
        f'<!ENTITY lol{i} "{("&lol" + (str(i - 1) if i > 1 else "") + ";") * 10}">'
        for i in range(1, 10)
    ]
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f"<!DOCTYPE en-export [\n{chr(10).join(entities)}\n]>\n"
        "<en-export>\n"
    )
    return enex([Note("Laughs &lol9;", "<div>&lol9;</div>")], head=head).replace(
        "Laughs &amp;lol9;", "Laughs &lol9;"
    )


def external_entity(target: str) -> str:
    head = (
        '<?xml version="1.0" encoding="UTF-8"?>\n'
        f'<!DOCTYPE en-export [<!ENTITY secret SYSTEM "{target}">]>\n'
        "<en-export>\n"
    )
    return enex([Note("Secret", "<div>x</div>")], head=head).replace(
        "<title>Secret</title>", "<title>&secret;</title>"
    )


def _note(note: Note) -> str:
    content = note.raw_content
    if content is None:
        content = (
            '<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n'
            '<!DOCTYPE en-note SYSTEM "http://xml.evernote.com/pub/enml2.dtd">\n'
            f"<en-note>{note.enml_body}</en-note>"
        )
    lines = [
        "  <note>",
        f"    <title>{escape(note.title)}</title>",
        f"    <content><![CDATA[{content}]]></content>",
        f"    <created>{note.created}</created>",
    ]
    if note.updated:
        lines.append(f"    <updated>{note.updated}</updated>")
    lines += [f"    <tag>{escape(t)}</tag>" for t in note.tags]
    if note.notebook:
        lines.append(f"    <notebook>{escape(note.notebook)}</notebook>")
    attributes = ""
    if note.author:
        attributes += f"<author>{escape(note.author)}</author>"
    if note.source_url:
        attributes += f"<source-url>{escape(note.source_url)}</source-url>"
    lines.append(f"    <note-attributes>{attributes}</note-attributes>")
    for resource in note.resources:
        encoded = base64.encodebytes(resource.data).decode("ascii")  # 76-column lines
        name = (
            f"<resource-attributes><file-name>{escape(resource.file_name)}</file-name>"
            "</resource-attributes>"
            if resource.file_name
            else ""
        )
        lines.append(
            f'    <resource><data encoding="base64">\n{encoded}</data>'
            f"<mime>{resource.mime}</mime>{name}</resource>"
        )
    lines.append("  </note>\n")
    return "\n".join(lines)
