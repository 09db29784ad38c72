"""Builders of the files the parser and chunking tests feed to Loci.

Every fixture is made here at test time, so no binary file is committed. PDFs are written by a
tiny PDF writer (Helvetica text placed at x/y coordinates) so the tests control the exact layout,
including content streams whose drawing order differs from the reading order.
"""

from __future__ import annotations

import io
import random
import zipfile
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

PAGE_WIDTH = 612.0  # US Letter, in points
PAGE_HEIGHT = 792.0


@dataclass(frozen=True)
class PdfText:
    """One run of text drawn with its baseline starting at (x, y), y measured from the bottom."""

    x: float
    y: float
    text: str
    size: float = 11.0


def _pdf_string(text: str) -> bytes:
    raw = text.encode("cp1252")  # WinAnsiEncoding is close enough to cp1252 for test text
    return b"(" + raw.replace(b"\\", b"\\\\").replace(b"(", b"\\(").replace(b")", b"\\)") + b")"


def _content_stream(items: Iterable[PdfText]) -> bytes:
    ops = []
    for item in items:
        ops.append(
            b"BT /F1 %.2f Tf 1 0 0 1 %.2f %.2f Tm %s Tj ET"
            % (item.size, item.x, item.y, _pdf_string(item.text))
        )
    return b"\n".join(ops)


def make_pdf(
    pages: Sequence[Sequence[PdfText]],
    *,
    title: str | None = None,
    compress: bool = False,
    image_bytes: int = 0,
) -> bytes:
    """A valid PDF with one page per entry of `pages`.

    `image_bytes` puts a grey-scale image of about that many random (incompressible) bytes on
    every page, as scanned figures make real PDFs big while their text stays small.
    """
    objects: list[bytes] = []  # objects[i] is object number i + 1

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in once the page tree exists
    page_tree = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    filler = random.Random(7)
    side = int(image_bytes**0.5)
    page_ids = []
    for items in pages:
        stream = _content_stream(items)
        resources = b"/Font << /F1 %d 0 R >>" % font
        if side:
            pixels = filler.randbytes(side * side)
            image = add(
                b"<< /Type /XObject /Subtype /Image /Width %d /Height %d /ColorSpace /DeviceGray "
                b"/BitsPerComponent 8 /Length %d >>\nstream\n"
                % (side, side, len(pixels))
                + pixels
                + b"\nendstream"
            )
            resources += b" /XObject << /Im1 %d 0 R >>" % image
            stream += b"\nq 200 0 0 200 300 40 cm /Im1 Do Q"
        head = b"<< /Length %d >>"
        if compress:
            stream = zlib.compress(stream)
            head = b"<< /Length %d /Filter /FlateDecode >>"
        content = add(head % len(stream) + b"\nstream\n" + stream + b"\nendstream")
        page_ids.append(
            add(
                b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 %d %d] "
                b"/Resources << %s >> /Contents %d 0 R >>"
                % (page_tree, PAGE_WIDTH, PAGE_HEIGHT, resources, content)
            )
        )
    kids = b" ".join(b"%d 0 R" % p for p in page_ids)
    objects[page_tree - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (kids, len(page_ids))
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R >>" % page_tree
    info = add(b"<< /Title %s /Producer (loci tests) >>" % _pdf_string(title)) if title else None

    out = bytearray(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref_at = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    if info:
        trailer += b" /Info %d 0 R" % info
    out += b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref_at
    return bytes(out)


def text_lines(
    lines: Sequence[str],
    *,
    x: float = 72.0,
    top: float = 720.0,
    size: float = 11.0,
    leading: float = 14.0,
) -> list[PdfText]:
    """Lines set one under the other; an empty string leaves a blank line (a paragraph break)."""
    return [PdfText(x, top - i * leading, line, size) for i, line in enumerate(lines) if line]


_VOCABULARY = (
    "the quick brown fox jumps over lazy dogs while seven wizards quietly judge boxing "
    "matches near old harbor lights and calm rivers carry paper boats past sleepy towns"
)
WORDS = _VOCABULARY.split()


def prose(n_words: int, seed: int = 0) -> str:
    """Deterministic filler prose with sentences of 8 to 15 words."""
    rng = random.Random(seed)
    words: list[str] = []
    while len(words) < n_words:
        sentence = [rng.choice(WORDS) for _ in range(rng.randint(8, 15))]
        sentence[0] = sentence[0].capitalize()
        sentence[-1] += "."
        words.extend(sentence)
    return " ".join(words[:n_words])


def wrap(text: str, width: int = 80) -> list[str]:
    lines: list[str] = []
    current = ""
    for word in text.split():
        if current and len(current) + 1 + len(word) > width:
            lines.append(current)
            current = word
        else:
            current = f"{current} {word}" if current else word
    if current:
        lines.append(current)
    return lines


# --- PDFs ------------------------------------------------------------------------------------


def two_page_pdf() -> bytes:
    page1 = text_lines(
        [
            "Alpha report opens on page one.",
            "The first paragraph talks about apples and orchards.",
            "",
            "A second paragraph on page one mentions ferries.",
        ]
    )
    page2 = text_lines(
        ["Beta section lives on page two.", "Zebras graze near the river on this page."]
    )
    return make_pdf([page1, page2], title="Quarterly Fruit Report")


def two_column_pdf() -> bytes:
    """A full-width title above two columns whose lines are drawn interleaved (left, right, ...).

    Reading the content stream in order would mix the columns line by line; a correct parser
    reads the whole left column, then the right one.
    """
    items = [PdfText(72, 740, "Two Column Study of Rivers", 11)]
    for i in range(12):
        y = 700 - i * 14
        items.append(PdfText(72, y, f"Left column line {i + 1:02d} about otters.", 11))
        items.append(PdfText(330, y, f"Right column line {i + 1:02d} about herons.", 11))
    items.append(PdfText(72, 480, "Footer note spans the whole width of the page below.", 11))
    return make_pdf([items])


def two_column_paper_pdf() -> tuple[bytes, list[str], list[str]]:
    """A paper's first page: title and abstract across the page, then two columns drawn one
    after the other. Returns the PDF and the lines of the left and right columns."""
    left = wrap(prose(200, seed=3), 45)
    right = wrap(prose(200, seed=4), 45)
    items = [PdfText(72, 750, "A Study of Things", 16)]
    for i, line in enumerate(wrap("Abstract. " + prose(60, seed=9), 95)):
        items.append(PdfText(72, 725 - i * 12, line, 10))
    items += [PdfText(72, 640 - i * 12, line, 10) for i, line in enumerate(left)]
    items += [PdfText(320, 640 - i * 12, line, 10) for i, line in enumerate(right)]
    return make_pdf([items]), left, right


def headings_pdf() -> bytes:
    """Large-font lines over body text, as a word processor would export headings."""
    body1 = wrap(prose(60, seed=1))
    body2 = wrap(prose(60, seed=2))
    items = [PdfText(72, 740, "Installation Guide", 20)]
    y = 710.0
    items.append(PdfText(72, y, "Requirements", 15))
    y -= 22
    for line in body1:
        items.append(PdfText(72, y, line, 11))
        y -= 14
    y -= 12
    items.append(PdfText(72, y, "Running the installer", 15))
    y -= 22
    for line in body2:
        items.append(PdfText(72, y, line, 11))
        y -= 14
    return make_pdf([items], title="Install Manual")


def pdf_with_running_headers(pages: int = 4) -> bytes:
    """Every page has the same small header line and a "Page N of M" footer around its text."""
    out = []
    for p in range(pages):
        items = [PdfText(72, 760, "ACME Corp internal memo", 8)]
        items += text_lines(wrap(prose(80, seed=50 + p)), top=700)
        items.append(PdfText(280, 40, f"Page {p + 1} of {pages}", 8))
        out.append(items)
    return make_pdf(out)


def encrypted_pdf(password: str = "s3cret") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(two_page_pdf())))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    buf = io.BytesIO()
    writer.write(buf)
    return buf.getvalue()


def truncated_pdf() -> bytes:
    data = make_pdf([text_lines([prose(40, seed=s)]) for s in range(6)])
    return data[: len(data) // 3]


def text_pdf(n_pages: int, words_per_page: int = 400, image_bytes: int = 0) -> bytes:
    """n pages of wrapped prose, ~400 words each: the shape of a typical report."""
    pages = []
    for p in range(n_pages):
        lines: list[str] = []
        for para in range(4):
            lines.extend(wrap(prose(words_per_page // 4, seed=p * 7 + para), width=95))
            lines.append("")
        pages.append(text_lines(lines, top=760, size=10, leading=12.5))
    return make_pdf(
        pages,
        title=f"Generated report of {n_pages} pages",
        compress=True,
        image_bytes=image_bytes,
    )


# --- DOCX ------------------------------------------------------------------------------------


def docx_with_structure() -> bytes:
    import docx

    document = docx.Document()
    document.core_properties.title = "Team Handbook"
    document.add_heading("Handbook", level=1)
    document.add_paragraph("Welcome to the team. This handbook explains how we work.")
    document.add_heading("Onboarding", level=2)
    document.add_paragraph("Get a laptop from the front desk.", style="List Bullet")
    document.add_paragraph("Install the password manager.", style="List Bullet")
    document.add_paragraph("Book a lunch with your buddy.", style="List Number")
    document.add_heading("Contacts", level=2)
    table = document.add_table(rows=3, cols=2)
    for r, (role, person) in enumerate(
        [("Role", "Person"), ("Payroll", "Ada Lovelace"), ("IT desk", "Alan Turing")]
    ):
        table.cell(r, 0).text = role
        table.cell(r, 1).text = person
    document.add_paragraph("Questions go to the shared inbox.")
    buf = io.BytesIO()
    document.save(buf)
    return buf.getvalue()


def zip_bomb_docx(inflated_bytes: int = 64 * 1024 * 1024) -> bytes:
    """A real DOCX plus one member of zeros that inflates about a thousand times."""
    source = zipfile.ZipFile(io.BytesIO(docx_with_structure()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for info in source.infolist():
            out.writestr(info, source.read(info))
        with out.open("word/media/padding.bin", "w") as member:
            zeros = bytes(1024 * 1024)
            for _ in range(inflated_bytes // len(zeros)):
                member.write(zeros)
    return buf.getvalue()


def docx_with_doctype() -> bytes:
    """A DOCX whose document part declares an internal entity (the billion-laughs shape)."""
    source = zipfile.ZipFile(io.BytesIO(docx_with_structure()))
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as out:
        for info in source.infolist():
            data = source.read(info)
            if info.filename == "word/document.xml":
                head, _, rest = data.partition(b"?>")
                data = (
                    head + b'?><!DOCTYPE w:document [<!ENTITY lol "lollollollol">'
                    b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;">]>' + rest
                )
            out.writestr(info, data)
    return buf.getvalue()


# --- HTML, markdown, text --------------------------------------------------------------------


def html_page() -> str:
    article = "\n".join(
        f"<p>{prose(70, seed=30 + i)} Lighthouse keepers log paragraph {i}.</p>" for i in range(4)
    )
    return f"""<!doctype html>
<html lang="en"><head>
<title>Lighthouse Keeping | Coastal Blog</title>
<meta property="og:title" content="Lighthouse Keeping Explained">
<style>body {{ color: red }}</style>
<script>var tracking = "SECRET_TRACKER_TOKEN"; console.log(tracking);</script>
</head><body>
<header><nav><ul><li><a href="/">Home navigation link</a></li><li><a href="/about">About us
navigation</a></li><li><a href="/shop">Shop navigation</a></li></ul></nav></header>
<main><article>
<h1>Lighthouse Keeping Explained</h1>
{article}
<h2>Daily duties</h2>
<ul><li>Trim the lamp wick every evening.</li><li>Polish the <b>Fresnel lens</b> daily.</li>
<li>Record the weather in the logbook.</li></ul>
<h2>Supply schedule</h2>
<table><tr><th>Item</th><th>Interval</th></tr><tr><td>Lamp oil</td><td>Monthly</td></tr>
<tr><td>Bread flour</td><td>Weekly</td></tr></table>
<p>{prose(50, seed=40)} Keepers retire after twenty winters.</p>
</article></main>
<footer><p>Copyright 2024 Coastal Blog footer. All rights reserved.</p>
<a href="/privacy">Privacy policy footer link</a></footer>
<script>document.write("INJECTED_SCRIPT_TEXT")</script>
</body></html>"""


MARKDOWN_WITH_FRONTMATTER = """\
---
title: Garden Notes
tags: [plants, soil]
date: 2024-05-01
---
# Ignored H1 Because Frontmatter Wins

Intro paragraph about the garden.
It spans two lines.

Setext Section
--------------

- compost weekly
- water at dawn

```python
def grow(seed):

    return seed * 2
```

| plant | month |
|-------|-------|
| basil | May   |

### Deep ATX heading

Final words.
"""


def cp1252_text() -> bytes:
    return (
        "Caf\u00e9 r\u00e9sum\u00e9: the na\u00efve d\u00e9j\u00e0 vu \u2014 \u201cquoted\u201d "
        "prices of \u20ac5 and \u20ac12 at the cr\u00e8me br\u00fbl\u00e9e stand.\n"
    ).encode("cp1252") * 20


def latin1_text() -> bytes:
    return (
        "Gr\u00fc\u00dfe aus K\u00f6ln! Die Stra\u00dfe ist sch\u00f6n und die B\u00e4ckerei "
        "\u00f6ffnet fr\u00fch. \u00c4rger gibt es nie.\n"
    ).encode("latin-1") * 20


def utf16_text() -> bytes:
    text = "\ufeffUTF-16 notes: \u65e5\u672c\u8a9e and \u00e9t\u00e9.\n\nSecond paragraph.\n"
    return text.encode("utf-16-le")


def binary_junk() -> bytes:
    return random.Random(1234).randbytes(8192)


def big_single_line(n_bytes: int = 20 * 1024 * 1024) -> bytes:
    unit = b"lorem ipsum dolor sit amet consectetur "
    return (unit * (n_bytes // len(unit) + 1))[:n_bytes]


# --- text that is hard on tokenizers ---------------------------------------------------------

MIXED_NOTES = """\
# Field notes from the Zürich workshop

Día uno. Renée and Søren met the café owner at 08:30; the espresso machine (a 1998 Faema E61,
serial #A-4471/ß) had lost pressure again. Über-technician Ünal replaced the gasket — third
time this year — and logged it at https://example.org/tickets/4471?view=full&lang=de-CH.

Costs so far: €1,240.50 for parts, ¥18,000 for the Kyoto order, and 3×12.5 kg of beans.
Temperatures ranged from −4 °C to 38.6 °C; humidity 41–67 %. Résumé of the fault: “the boiler
heats, the group head doesn’t”. Naïve fixes (descaling, re-seating the thermosyphon) failed.

## Translations we collected

会議は午後三時に始まりました。東京のチームは新しい温度センサーを提案しました。
서울 사무소는 다음 주에 부품을 보낼 예정입니다. Москва подтвердила заказ на двенадцать клапанов.
Ελληνικά: η αντλία λειτουργεί κανονικά. العربية: تم إصلاح المضخة. हिन्दी: पंप ठीक है।

## Log excerpt

    2026-03-04T09:15:02Z WARN pump[842]: pressure=0.8bar (< 1.0bar threshold) retry=3/5
    2026-03-04T09:15:07Z INFO valve_ctl: open(ch=2) -> OK; elapsed_ms=12.75
    sha256=9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08

- [ ] order spare O-rings (Ø 6×1.5 mm, food-grade EPDM)
- [x] email Ana-María about the invoice 🙂👍
- [ ] read the manual's §4.2.1 "Druckeinstellung" twice

| part | qty | note |
| --- | --- | --- |
| gasket | 2 | 8.5 mm, silicone |
| thermostat | 1 | 120°C NC, Ø 8 mm |

Zero\u200bwidth joins, soft\u00adhyphens, a non\u00a0breaking space, a thin\u2009space and an
ideographic\u3000space all turn up in pasted text; so do combining marks (cafe\u0301, n\u0303o)
and the odd placeholder like [MASK] or [UNK] copied from a model card.
"""
