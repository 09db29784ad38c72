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
    return _with_zeros(docx_with_structure(), "word/media/padding.bin", inflated_bytes)


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


# --- PPTX, XLSX, EPUB, ODT (zip packages written member by member) ----------------------------

_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DOC_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"


def _zip(
    members: Sequence[tuple[str, str | bytes]],
    *,
    stored_first: bool = False,
    compresslevel: int | None = None,
) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=compresslevel) as archive:
        for index, (name, data) in enumerate(members):
            method = zipfile.ZIP_STORED if stored_first and index == 0 else zipfile.ZIP_DEFLATED
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return buf.getvalue()


def _xml_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _rels(*targets: tuple[str, str, str]) -> str:
    """A relationships part; each target is (id, type suffix, target)."""
    items = "".join(
        f'<Relationship Id="{i}" Type="{_DOC_REL}/{kind}" Target="{target}"/>'
        for i, kind, target in targets
    )
    head = '<?xml version="1.0" encoding="UTF-8"?>'
    return f'{head}<Relationships xmlns="{_RELS}">{items}</Relationships>'


def _core(title: str, author: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><cp:coreProperties xmlns:cp="http://schemas.'
        'openxmlformats.org/package/2006/metadata/core-properties" xmlns:dc="http://purl.org/dc/'
        f'elements/1.1/"><dc:title>{_xml_escape(title)}</dc:title><dc:creator>'
        f"{_xml_escape(author)}</dc:creator></cp:coreProperties>"
    )


def _content_types(main: str) -> str:
    return (
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/'
        'package/2006/content-types"><Default Extension="xml" ContentType="application/xml"/>'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
        f'relationships+xml"/><Override PartName="/{main}" ContentType="application/xml"/></Types>'
    )


def _sp(paragraphs: Sequence[tuple[int, str]], placeholder: str | None = None) -> str:
    ph = f'<p:nvPr><p:ph type="{placeholder}"/></p:nvPr>' if placeholder else "<p:nvPr/>"
    body = "".join(
        f'<a:p><a:pPr lvl="{level}"/><a:r><a:t>{_xml_escape(text)}</a:t></a:r></a:p>'
        for level, text in paragraphs
    )
    return (
        f'<p:sp><p:nvSpPr><p:cNvPr id="2" name="s"/><p:cNvSpPr/>{ph}</p:nvSpPr><p:spPr/>'
        f"<p:txBody><a:bodyPr/>{body}</p:txBody></p:sp>"
    )


def _pptx_table(rows: Sequence[Sequence[str]]) -> str:
    trs = "".join(
        "<a:tr>"
        + "".join(
            f"<a:tc><a:txBody><a:bodyPr/><a:p><a:r><a:t>{_xml_escape(c)}</a:t></a:r></a:p>"
            "</a:txBody></a:tc>"
            for c in row
        )
        + "</a:tr>"
        for row in rows
    )
    return (
        '<p:graphicFrame><p:nvGraphicFramePr><p:cNvPr id="4" name="t"/><p:cNvGraphicFramePr/>'
        f'<p:nvPr/></p:nvGraphicFramePr><p:xfrm/><a:graphic><a:graphicData uri="{_A}/table">'
        f"<a:tbl>{trs}</a:tbl></a:graphicData></a:graphic></p:graphicFrame>"
    )


def _slide(shapes: str, root: str = "p:sld") -> str:
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><{root} xmlns:a="{_A}" xmlns:p="{_P}" '
        f'xmlns:r="{_R}"><p:cSld><p:spTree><p:nvGrpSpPr><p:cNvPr id="1" name=""/>'
        f"<p:cNvGrpSpPr/><p:nvPr/></p:nvGrpSpPr><p:grpSpPr/>{shapes}</p:spTree></p:cSld>"
        f"</{root}>"
    )


def pptx_deck(*, broken_slide: bool = False) -> bytes:
    """Three slides. The presentation lists them as slide1, slide3, slide2 (file names do not
    give the order); the second slide shown has a table and speaker notes."""
    opening = _slide(
        _sp([(0, "Migration programme for the lighthouse fleet")])  # body text before the title
        + _sp([(0, "Quarterly Review")], "title")
    )
    revenue = _slide(
        _sp([(0, "Revenue by Region")], "title")
        + _pptx_table([["Region", "Revenue"], ["North", "120 walrus coins"], ["South", "95"]])
    )
    if broken_slide:
        revenue = revenue[: len(revenue) // 2]
    steps = _slide(
        _sp([(0, "Next Steps")], "title")
        + _sp(
            [(0, "Hire two keepers"), (1, "one for the night shift"), (0, "Paint the tower")],
            "body",
        )
    )
    notes = _slide(
        _sp([(0, "1")], "sldNum")
        + _sp([(0, "Mention the otter partnership when showing the north figures.")], "body"),
        root="p:notes",
    )
    presentation = (
        f'<?xml version="1.0" encoding="UTF-8"?><p:presentation xmlns:p="{_P}" xmlns:r="{_R}">'
        '<p:sldIdLst><p:sldId id="256" r:id="rId1"/><p:sldId id="257" r:id="rId3"/>'
        '<p:sldId id="258" r:id="rId2"/></p:sldIdLst></p:presentation>'
    )
    return _zip(
        [
            ("[Content_Types].xml", _content_types("ppt/presentation.xml")),
            ("_rels/.rels", _rels(("rId1", "officeDocument", "ppt/presentation.xml"))),
            ("docProps/core.xml", _core("Lighthouse Quarterly", "Grace Darling")),
            ("ppt/presentation.xml", presentation),
            (
                "ppt/_rels/presentation.xml.rels",
                _rels(
                    ("rId1", "slide", "slides/slide1.xml"),
                    ("rId2", "slide", "slides/slide2.xml"),
                    ("rId3", "slide", "slides/slide3.xml"),
                ),
            ),
            ("ppt/slides/slide1.xml", opening),
            ("ppt/slides/slide2.xml", steps),
            ("ppt/slides/slide3.xml", revenue),
            (
                "ppt/slides/_rels/slide3.xml.rels",
                _rels(("rId1", "notesSlide", "../notesSlides/notesSlide1.xml")),
            ),
            ("ppt/notesSlides/notesSlide1.xml", notes),
        ]
    )


def _cell_ref(column: int, row: int) -> str:
    letters = ""
    column += 1
    while column:
        column, rest = divmod(column - 1, 26)
        letters = chr(65 + rest) + letters
    return f"{letters}{row}"


def xlsx_workbook(
    sheets: Sequence[tuple[str, Sequence[Sequence[object]]]] | None = None,
    *,
    shared_strings_xml: bytes | None = None,
    extra: Sequence[tuple[str, bytes]] = (),
    compresslevel: int | None = None,
) -> bytes:
    """A workbook whose strings go to the shared-strings table (except those starting with
    "inline:", written as inline strings); `datetime.date` values get a date style."""
    import datetime

    if sheets is None:
        staff: list[list[object]] = [["Name", "Role", "City", "Started"]]
        for i in range(1, 61):
            staff.append(
                [f"Keeper {i:02d}", "keeper", "Aberdeen", datetime.date(2020, 1, i % 28 + 1)]
            )
        staff[37] = [
            "Ada Lovelace",
            "inline:analyst of engines",
            "London",
            datetime.date(1953, 7, 1),
        ]
        sheets = [
            ("Staff", staff),
            (
                "Budget",
                [["Item", "Cost"], ["Lamp oil", 1250], ["Bread flour", 12.5], ["Ropes", True]],
            ),
        ]
    strings: list[str] = []
    index: dict[str, int] = {}
    sheet_parts = []
    for _, rows in sheets:
        xml_rows = []
        for r, row in enumerate(rows, start=1):
            cells = []
            for c, value in enumerate(row):
                ref = _cell_ref(c, r)
                if isinstance(value, bool):
                    cells.append(f'<c r="{ref}" t="b"><v>{int(value)}</v></c>')
                elif isinstance(value, datetime.date):
                    serial = (value - datetime.date(1899, 12, 30)).days
                    cells.append(f'<c r="{ref}" s="1"><v>{serial}</v></c>')
                elif isinstance(value, int | float):
                    cells.append(f'<c r="{ref}"><v>{value}</v></c>')
                elif str(value).startswith("inline:"):
                    text = _xml_escape(str(value)[7:])
                    cells.append(f'<c r="{ref}" t="inlineStr"><is><t>{text}</t></is></c>')
                else:
                    text = str(value)
                    if text not in index:
                        index[text] = len(strings)
                        strings.append(text)
                    cells.append(f'<c r="{ref}" t="s"><v>{index[text]}</v></c>')
            xml_rows.append(f'<row r="{r}">{"".join(cells)}</row>')
        sheet_parts.append(
            f'<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="{_S}"><sheetData>'
            + "".join(xml_rows)
            + "</sheetData></worksheet>"
        )
    shared = (
        shared_strings_xml
        or (
            f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{_S}" count="{len(strings)}">'
            + "".join(f"<si><t>{_xml_escape(s)}</t></si>" for s in strings)
            + "</sst>"
        ).encode()
    )
    workbook = (
        f'<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="{_S}" xmlns:r="{_R}"><sheets>'
        + "".join(
            f'<sheet name="{_xml_escape(name)}" sheetId="{i}" r:id="rId{i}"/>'
            for i, (name, _) in enumerate(sheets, start=1)
        )
        + "</sheets></workbook>"
    )
    n = len(sheets)
    styles = (
        f'<?xml version="1.0" encoding="UTF-8"?><styleSheet xmlns="{_S}"><cellXfs count="2">'
        '<xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/></cellXfs></styleSheet>'
    )
    members: list[tuple[str, str | bytes]] = [
        ("[Content_Types].xml", _content_types("xl/workbook.xml")),
        ("_rels/.rels", _rels(("rId1", "officeDocument", "xl/workbook.xml"))),
        ("docProps/core.xml", _core("Lighthouse Staff", "Grace Darling")),
        ("xl/workbook.xml", workbook),
        (
            "xl/_rels/workbook.xml.rels",
            _rels(
                *[(f"rId{i}", "worksheet", f"worksheets/sheet{i}.xml") for i in range(1, n + 1)],
                (f"rId{n + 1}", "sharedStrings", "sharedStrings.xml"),
                (f"rId{n + 2}", "styles", "styles.xml"),
            ),
        ),
        ("xl/sharedStrings.xml", shared),
        ("xl/styles.xml", styles),
    ]
    members += [(f"xl/worksheets/sheet{i}.xml", part) for i, part in enumerate(sheet_parts, 1)]
    return _zip([*members, *extra], compresslevel=compresslevel)


def xlsx_bomb(inflated_bytes: int = 64 * 1024 * 1024) -> bytes:
    """A workbook with a sheet-sized member of zeros that inflates about a thousand times."""
    return _with_zeros(xlsx_workbook(), "xl/worksheets/padding.xml", inflated_bytes)


def _with_zeros(archive: bytes, name: str, inflated_bytes: int) -> bytes:
    """`archive` (a ZIP) with one more member, `name`: that many zero bytes, deflated."""
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(archive)) as source,
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out,
    ):
        for info in source.infolist():
            out.writestr(info, source.read(info))
        with out.open(name, "w") as member:
            zeros = bytes(1024 * 1024)
            for _ in range(inflated_bytes // len(zeros)):
                member.write(zeros)
    return buf.getvalue()


def xlsx_huge_shared_strings(n_bytes: int) -> bytes:
    """A workbook whose shared-strings table alone is about `n_bytes` when inflated. A megabyte
    of numbered strings is repeated: deflate only sees 32 KB back, so the repeats compress no
    better than the first copy (some ten times, far under the ratio budget)."""
    item = "<si><t>Keeper {:09d} logs the {} weather</t></si>"
    unit = "".join(item.format(i * 7919, WORDS[i % len(WORDS)]) for i in range(20_000))
    body = unit * (n_bytes // len(unit) + 1)
    head = f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{_S}">'
    return xlsx_workbook(shared_strings_xml=(head + body + "</sst>").encode(), compresslevel=1)


def csv_table(delimiter: str = ";", encoding: str = "cp1252") -> bytes:
    rows = ["Name;Café;Notes".replace(";", delimiter)]
    for i in range(1, 41):
        rows.append(delimiter.join([f"Guest {i:02d}", "crème brûlée", f"table {i}"]))
    rows[25] = delimiter.join(
        ["Ada Lovelace", "thé glacé", '"asked about ""engines""\non two lines"']
    )
    return ("\r\n".join(rows) + "\r\n").encode(encoding)


def epub_book() -> bytes:
    """An EPUB 3 book: spine order differs from manifest order, chapter names from the nav."""

    def chapter(heading: str, body: str) -> str:
        return (
            '<?xml version="1.0" encoding="UTF-8"?><!DOCTYPE html><html xmlns="http://www.w3.org/'
            f'1999/xhtml"><head><title>{heading}</title><style>p {{ color: red }}</style></head>'
            f"<body><h1>{heading}</h1>{body}<script>var SECRET_SCRIPT = 1;</script></body></html>"
        )

    opf = (
        '<?xml version="1.0" encoding="UTF-8"?><package xmlns="http://www.idpf.org/2007/opf" '
        'version="3.0" unique-identifier="id"><metadata xmlns:dc="http://purl.org/dc/elements/'
        '1.1/"><dc:identifier id="id">urn:uuid:1</dc:identifier><dc:title>The Keeper&apos;s '
        "Year</dc:title><dc:creator>Grace Darling</dc:creator><dc:creator>Thomas Stevenson"
        "</dc:creator><dc:language>en</dc:language></metadata><manifest>"
        '<item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/>'
        '<item id="c2" href="text/winter.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="c1" href="text/spring%20tides.xhtml" media-type="application/xhtml+xml"/>'
        '<item id="cover" href="text/cover.xhtml" media-type="application/xhtml+xml"/>'
        '</manifest><spine><itemref idref="cover"/><itemref idref="c1"/><itemref idref="c2"/>'
        "</spine></package>"
    )
    nav = (
        '<?xml version="1.0" encoding="UTF-8"?><html xmlns="http://www.w3.org/1999/xhtml" '
        'xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol>'
        '<li><a href="text/spring%20tides.xhtml">I. Spring Tides</a></li>'
        '<li><a href="text/winter.xhtml#start">II. Winter Storms</a></li></ol></nav></body></html>'
    )
    spring = chapter(
        "Spring Tides",
        "<p>The lamp is trimmed at dusk &amp; the seals return to the skerries.</p>"
        "<h2>Provisions</h2><ul><li>Lamp oil</li><li>Ship&#8217;s biscuit<ul><li>two barrels"
        "</li></ul></li></ul><p>Escaped &lt;b&gt;markup&lt;/b&gt; never survives.</p>",
    )
    winter = chapter(
        "Winter Storms",
        "<p>Storm petrels shelter under the gallery during the January gales.</p>"
        "<table><tr><th>Month</th><th>Gales</th></tr><tr><td>January</td><td>9</td></tr></table>",
    )
    cover = '<html xmlns="http://www.w3.org/1999/xhtml"><body><img src="c.jpg"/></body></html>'
    container = (
        '<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:'
        'xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type='
        '"application/oebps-package+xml"/></rootfiles></container>'
    )
    return _zip(
        [
            ("mimetype", "application/epub+zip"),
            ("META-INF/container.xml", container),
            ("OEBPS/content.opf", opf),
            ("OEBPS/nav.xhtml", nav),
            ("OEBPS/text/cover.xhtml", cover),
            ("OEBPS/text/spring tides.xhtml", spring),
            ("OEBPS/text/winter.xhtml", winter),
        ],
        stored_first=True,
    )


def odt_document() -> bytes:
    ns = (
        'xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" '
        'xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" '
        'xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" '
        'xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0"'
    )
    content = (
        f'<?xml version="1.0" encoding="UTF-8"?><office:document-content {ns}>'
        '<office:automatic-styles><text:list-style style:name="L1">'
        '<text:list-level-style-number text:level="1"/><text:list-level-style-bullet '
        'text:level="2"/></text:list-style></office:automatic-styles><office:body><office:text>'
        "<text:sequence-decls/>"
        '<text:h text:outline-level="1">Garden Plan</text:h>'
        '<text:p>Plant the <text:span>broad beans</text:span> in<text:s text:c="3"/>March.'
        "<text:note><text:note-body><text:p>FOOTNOTE_TEXT</text:p></text:note-body></text:note>"
        "</text:p>"
        '<text:h text:outline-level="2">Tasks</text:h>'
        '<text:list text:style-name="L1"><text:list-item><text:p>Dig the beds</text:p>'
        "<text:list><text:list-item><text:p>north bed first</text:p></text:list-item></text:list>"
        "</text:list-item><text:list-item><text:p>Spread compost</text:p></text:list-item>"
        "</text:list>"
        '<text:h text:outline-level="2">Seeds</text:h>'
        "<table:table><table:table-row><table:table-cell><text:p>Crop</text:p></table:table-cell>"
        "<table:table-cell><text:p>Month</text:p></table:table-cell><table:table-cell/>"
        "</table:table-row><table:table-row><table:table-cell><text:p>Parsnips</text:p>"
        "</table:table-cell><table:table-cell><text:p>April</text:p></table:table-cell>"
        "</table:table-row></table:table><text:p>Water the seedlings at dawn.</text:p>"
        "</office:text></office:body></office:document-content>"
    )
    meta = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-meta xmlns:office="urn:oasis:'
        'names:tc:opendocument:xmlns:office:1.0" xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:meta="urn:oasis:names:tc:opendocument:xmlns:meta:1.0"><office:meta><dc:title>'
        "Allotment Notebook</dc:title><meta:initial-creator>Percy Thrower</meta:initial-creator>"
        "</office:meta></office:document-meta>"
    )
    return _zip(
        [
            ("mimetype", "application/vnd.oasis.opendocument.text"),
            ("content.xml", content),
            ("meta.xml", meta),
            ("META-INF/manifest.xml", '<?xml version="1.0"?><manifest/>'),
        ],
        stored_first=True,
    )


RTF_DOCUMENT = (
    rb"{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fswiss Helvetica;}{\f1 Symbol;}}"
    rb"{\colortbl;\red255\green0\blue0;}"
    rb"{\stylesheet{\s0 Normal;}{\s1\b\fs32 heading 1;}{\s2 heading 2;}}"
    rb"{\info{\title Kitchen Manual}{\author Mrs Beeton}}"
    rb"{\*\generator Riched20 10.0;}"
    rb"\pard\s1 Kitchen Rules\par"
    rb"\pard The caf\'e9 opens at seven; coffee costs \u8364?3.\par"
    rb"\pard\s2 Cleaning\par"
    rb"\pard{\pntext\f1 \'b7\tab}\ls1 Scrub the {\b copper} pans\par"
    rb"\pard{\pntext\f1 \'b7\tab}\ls1 Oil the chopping boards\par"
    rb"\pard\intbl Day\cell Task\cell\row"
    rb"\pard\intbl Monday\cell Descale the kettle\cell\row"
    rb"\pard{\pict\pngblip 89504e470d0a1a0a}After the table comes a closing line.\par}"
)


def eml_message(attachment: tuple[str, bytes, str] | None = None) -> bytes:
    from email.message import EmailMessage

    message = EmailMessage()
    message["From"] = "Grace Darling <grace@example.org>"
    message["To"] = "Keepers <keepers@example.org>"
    message["Date"] = "Tue, 07 Sep 1838 06:30:00 +0000"
    message["Subject"] = "=?utf-8?q?Rescue_at_Big_Harcar_=E2=80=94_report?="
    message.set_content(
        "Dear all,\n\nWe rowed out to the Forfarshire wreck at dawn.\n"
        "Nine survivors were brought to the lighthouse.\n\nGrace\n"
    )
    if attachment is not None:
        name, data, mime = attachment
        maintype, subtype = mime.split("/", 1)
        message.add_attachment(data, maintype=maintype, subtype=subtype, filename=name)
    return message.as_bytes()


def mbox_mailbox() -> bytes:
    first = (
        b"From: Ada <ada@example.org>\nTo: Charles <charles@example.org>\n"
        b"Subject: Notes on the engine\nDate: Mon, 01 Jul 1843 10:00:00 +0000\n\n"
        b"The analytical engine weaves algebraic patterns.\n\n"
        b">From the looms of Jacquard, as I said.\n"
    )
    second = eml_message(
        ("survivors.txt", b"Survivor list: nine souls, all accounted for.\n", "text/plain")
    )
    return (
        b"From ada@example.org Mon Jul  1 10:00:00 1843\n"
        + first
        + b"\nFrom grace@example.org Tue Sep  7 06:30:00 1838\n"
        + second.replace(b"\r\n", b"\n")
    )


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
