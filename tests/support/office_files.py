"""Office documents and e-books to feed Loci, made at test time: DOCX, PPTX, XLSX, ODT and EPUB
(ZIP packages written member by member, including bombs and hostile XML), and RTF."""

from __future__ import annotations

import io
import zipfile
from collections.abc import Sequence

from tests.support.text_files import WORDS

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


def xlsx_huge_shared_strings(n_bytes: int) -> bytes:
    """A workbook whose shared-strings table alone is about `n_bytes` when inflated. A megabyte
    of numbered strings is repeated: deflate only sees 32 KB back, so the repeats compress no
    better than the first copy (some ten times, far under the ratio budget)."""
    item = "<si><t>Keeper {:09d} logs the {} weather</t></si>"
    unit = "".join(item.format(i * 7919, WORDS[i % len(WORDS)]) for i in range(20_000))
    body = unit * (n_bytes // len(unit) + 1)
    head = f'<?xml version="1.0" encoding="UTF-8"?><sst xmlns="{_S}">'
    return xlsx_workbook(shared_strings_xml=(head + body + "</sst>").encode(), compresslevel=1)


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


def a_zip() -> bytes:
    """A zip archive that is no Office file: stored, and failed by the indexer (no parser)."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("photos/readme.txt", "holiday photos")
    return buffer.getvalue()
