"""A corpus of hostile and broken files, for the parsers' tests and for attacking a Loci server.

    python scripts/make_bad_inputs.py OUT_DIR     # writes every file, then `loci add OUT_DIR`

Each file is something a person or an attacker could upload: XML bombs (a DOCTYPE with nested
entities) in every XML-based format, one hidden behind a long comment where a check of the
first bytes misses it; a part in UTF-32; a Word file of millions of tiny paragraphs that passes
the size and ratio budgets; a zip bomb; truncated and corrupt JPEG, PNG, PDF and zip files;
files whose extension lies. `expected` is a phrase the failure reason must contain, or None for
a file that may also parse (an EPUB may carry a DOCTYPE; it is read without expanding it).

Only the standard library and Pillow (a dependency of Loci) are used, so the script runs
anywhere Loci is installed.
"""

from __future__ import annotations

import io
import random
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path

_W = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
_S = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_P = "http://schemas.openxmlformats.org/presentationml/2006/main"
_A = "http://schemas.openxmlformats.org/drawingml/2006/main"
_R = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PKG_RELS = "http://schemas.openxmlformats.org/package/2006/relationships"
_DECLARATION = b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
LAUGHS = (
    b'<!DOCTYPE lolz [<!ENTITY lol "lol">'
    + b"".join(
        b'<!ENTITY lol%d "%s">' % (i, (b"&lol%d;" % (i - 1) if i > 1 else b"&lol;") * 10)
        for i in range(1, 10)
    )
    + b"]>"
)


@dataclass(frozen=True)
class BadInput:
    name: str
    data: bytes
    expected: str | None  # a phrase of the failure reason; None: parsing may also succeed


def _zip(members: list[tuple[str, bytes]], stored: tuple[str, ...] = ("mimetype",)) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members:
            method = zipfile.ZIP_STORED if name in stored else zipfile.ZIP_DEFLATED
            archive.writestr(zipfile.ZipInfo(name), data, compress_type=method)
    return buf.getvalue()


def _rels(*targets: tuple[str, str, str]) -> bytes:
    body = "".join(
        f'<Relationship Id="{i}" Type="{_R}/{kind}" Target="{target}"/>'
        for i, kind, target in targets
    )
    return _DECLARATION + f'<Relationships xmlns="{_PKG_RELS}">{body}</Relationships>'.encode()


def _content_types(main: str) -> bytes:
    return (
        _DECLARATION
        + (
            '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
            '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.'
            'relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
            f'<Override PartName="/{main}" ContentType="application/vnd.openxmlformats-'
            'officedocument.wordprocessingml.document.main+xml"/></Types>'
        ).encode()
    )


def _hostile(xml: bytes, doctype: bytes, padding: bytes = b"") -> bytes:
    """`xml` with `doctype` after its declaration (and after `padding`, a comment)."""
    head, _, rest = xml.partition(b"?>")
    return head + b"?>" + padding + doctype + rest


def docx(body_xml: bytes = b"", *, document: bytes | None = None) -> bytes:
    """A minimal Word document: `body_xml` inside w:body, or a whole `document` part."""
    if document is None:
        paragraph = b"<w:p><w:r><w:t>The keeper logs the weather.</w:t></w:r></w:p>"
        document = (
            _DECLARATION
            + f'<w:document xmlns:w="{_W}"><w:body>'.encode()
            + (body_xml or paragraph)
            + b"</w:body></w:document>"
        )
    return _zip(
        [
            ("[Content_Types].xml", _content_types("word/document.xml")),
            ("_rels/.rels", _rels(("rId1", "officeDocument", "word/document.xml"))),
            ("word/document.xml", document),
        ]
    )


def paragraph_bomb_docx(xml_bytes: int = 63 * 1024 * 1024) -> bytes:
    """A Word document whose body is `xml_bytes` of one-letter paragraphs, each four elements.
    An incompressible picture keeps the package under the compression-ratio budget, as the
    photos of a real document would."""
    paragraph = b"<w:p><w:r><w:t>a</w:t></w:r></w:p>"
    return _padded_docx(paragraph * (xml_bytes // len(paragraph)), seed=63)


def long_runs_docx(xml_bytes: int = 63 * 1024 * 1024, run_chars: int = 256 * 1024) -> bytes:
    """A Word document whose body is `xml_bytes` of paragraphs each holding one long run of
    words: few XML elements (far under the element budget), but tens of megabytes of text that
    the parser copies several times over. Padded like `paragraph_bomb_docx`."""
    sentence = b"The keeper logs the weather at the lamp each night. "
    run = (sentence * (run_chars // len(sentence) + 1))[:run_chars]
    paragraph = b"<w:p><w:r><w:t>" + run + b"</w:t></w:r></w:p>"
    return _padded_docx(paragraph * max(1, xml_bytes // len(paragraph)), seed=64)


def _padded_docx(body: bytes, seed: int) -> bytes:
    """A Word document of `body`, beside an incompressible picture a sixtieth its size, so the
    package stays under the compression-ratio budget whatever the body compresses to."""
    document = (
        _DECLARATION
        + f'<w:document xmlns:w="{_W}"><w:body>'.encode()
        + body
        + b"</w:body></w:document>"
    )
    picture = random.Random(seed).randbytes(len(document) // 60)
    return _zip(
        [
            ("[Content_Types].xml", _content_types("word/document.xml")),
            ("_rels/.rels", _rels(("rId1", "officeDocument", "word/document.xml"))),
            ("word/document.xml", document),
            ("word/media/image1.png", picture),
        ],
        stored=("word/media/image1.png",),
    )


def _padded(package: bytes, inflated: int) -> bytes:
    """`package` plus an incompressible picture, so it passes the compression-ratio budget."""
    buf = io.BytesIO(package)
    with zipfile.ZipFile(buf, "a") as archive:
        picture = random.Random(1).randbytes(inflated // 60)
        archive.writestr("word/media/image1.png", picture, compress_type=zipfile.ZIP_STORED)
    return buf.getvalue()


def budget_shapes(budget: int) -> dict[str, bytes]:
    """Word files at and past an element budget of `budget`, each the worst case of its kind
    (bench/parse_xml_bomb.py): the 63 MB paragraph bomb, then one-letter paragraphs (four
    elements each), empty paragraphs and paragraphs heavy with attributes, just under it."""
    tiny = b"<w:p><w:r><w:t>a</w:t></w:r></w:p>"  # 4 nodes
    empty = b"<w:p/>"  # 1 node
    attributes = b'<w:p w:rsidR="00A1B2C3" w:rsidRDefault="00A1B2C3" w:rsidP="00D4E5F6"/>'  # 4
    under = int(budget * 0.99)
    return {
        "63 MB paragraph bomb": paragraph_bomb_docx(),
        "tiny paragraphs at budget": _padded(docx(tiny * (under // 4)), len(tiny) * under // 4),
        "empty paragraphs at budget": _padded(docx(empty * under), len(empty) * under),
        "attribute-heavy at budget": _padded(
            docx(attributes * (under // 4)), len(attributes) * under // 4
        ),
    }


def xlsx(*, shared_strings: bytes | None = None, sheet: bytes | None = None) -> bytes:
    workbook = (
        _DECLARATION
        + f'<workbook xmlns="{_S}" xmlns:r="{_R}"><sheets>'.encode()
        + b'<sheet name="Log" sheetId="1" r:id="rId1"/></sheets></workbook>'
    )
    strings = shared_strings or (
        _DECLARATION
        + f'<sst xmlns="{_S}"><si><t>Weather</t></si><si><t>Calm</t></si></sst>'.encode()
    )
    cells = sheet or (
        _DECLARATION
        + f'<worksheet xmlns="{_S}"><sheetData>'.encode()
        + b'<row r="1"><c r="A1" t="s"><v>0</v></c></row>'
        + b'<row r="2"><c r="A2" t="s"><v>1</v></c></row></sheetData></worksheet>'
    )
    return _zip(
        [
            ("[Content_Types].xml", _content_types("xl/workbook.xml")),
            ("_rels/.rels", _rels(("rId1", "officeDocument", "xl/workbook.xml"))),
            ("xl/workbook.xml", workbook),
            (
                "xl/_rels/workbook.xml.rels",
                _rels(
                    ("rId1", "worksheet", "worksheets/sheet1.xml"),
                    ("rId2", "sharedStrings", "sharedStrings.xml"),
                ),
            ),
            ("xl/sharedStrings.xml", strings),
            ("xl/worksheets/sheet1.xml", cells),
        ]
    )


def pptx(*, slide: bytes | None = None) -> bytes:
    presentation = (
        _DECLARATION
        + f'<p:presentation xmlns:p="{_P}" xmlns:r="{_R}">'.encode()
        + b'<p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>'
    )
    body = slide or (
        _DECLARATION
        + f'<p:sld xmlns:p="{_P}" xmlns:a="{_A}"><p:cSld><p:spTree><p:sp><p:txBody>'.encode()
        + b"<a:p><a:r><a:t>Storm warnings</a:t></a:r></a:p>"
        + b"</p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
    )
    return _zip(
        [
            ("[Content_Types].xml", _content_types("ppt/presentation.xml")),
            ("_rels/.rels", _rels(("rId1", "officeDocument", "ppt/presentation.xml"))),
            ("ppt/presentation.xml", presentation),
            ("ppt/_rels/presentation.xml.rels", _rels(("rId1", "slide", "slides/slide1.xml"))),
            ("ppt/slides/slide1.xml", body),
        ]
    )


def odt(*, content: bytes | None = None) -> bytes:
    office = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
    text = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
    body = content or (
        _DECLARATION
        + f'<office:document-content xmlns:office="{office}" xmlns:text="{text}">'.encode()
        + b"<office:body><office:text><text:p>The tide came in.</text:p></office:text>"
        + b"</office:body></office:document-content>"
    )
    return _zip(
        [
            ("mimetype", b"application/vnd.oasis.opendocument.text"),
            ("content.xml", body),
        ]
    )


def epub(*, chapter: bytes | None = None) -> bytes:
    container = (
        _DECLARATION
        + b'<container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container">'
        + b'<rootfiles><rootfile full-path="OEBPS/content.opf" '
        + b'media-type="application/oebps-package+xml"/></rootfiles></container>'
    )
    opf = (
        _DECLARATION
        + b'<package xmlns="http://www.idpf.org/2007/opf" version="3.0">'
        + b'<metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Tides</dc:title>'
        + b'</metadata><manifest><item id="c1" href="c1.xhtml" '
        + b'media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/>'
        + b"</spine></package>"
    )
    page = chapter or (
        _DECLARATION
        + b'<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Tides</h1>'
        + b"<p>The tide came in twice a day.</p></body></html>"
    )
    return _zip(
        [
            ("mimetype", b"application/epub+zip"),
            ("META-INF/container.xml", container),
            ("OEBPS/content.opf", opf),
            ("OEBPS/c1.xhtml", page),
        ]
    )


def _image(kind: str) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.new("RGB", (320, 200), "white").save(buf, kind)
    return buf.getvalue()


def _pdf() -> bytes:
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n%s\nendobj\n" % (number, body)
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def _zip_bomb_docx(inflated_bytes: int = 210 * 1024 * 1024) -> bytes:
    buf = io.BytesIO()
    with (
        zipfile.ZipFile(io.BytesIO(docx())) as source,
        zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out,
    ):
        for info in source.infolist():
            out.writestr(info, source.read(info))
        with out.open("word/media/padding.bin", "w") as member:
            zeros = bytes(1024 * 1024)
            for _ in range(inflated_bytes // len(zeros)):
                member.write(zeros)
    return buf.getvalue()


def corpus(*, with_paragraph_bomb: bool = True) -> list[BadInput]:
    """Every hostile file, built in memory (the paragraph bomb takes about a second)."""
    laughs_body = b"<w:p><w:r><w:t>&lol9;</w:t></w:r></w:p>"
    comment = b"<!--" + b" padding past the first bytes " * 300 + b"-->"
    jpeg, png, pdf = _image("JPEG"), _image("PNG"), _pdf()
    document = _DECLARATION + f'<w:document xmlns:w="{_W}"><w:body>'.encode()
    document += laughs_body + b"</w:body></w:document>"
    utf32 = document.replace(b'encoding="UTF-8"', b'encoding="UTF-32"').decode().encode("utf-32")
    items = [
        BadInput("laughs.docx", docx(document=_hostile(document, LAUGHS)), "DOCTYPE"),
        BadInput(
            "laughs-hidden.docx", docx(document=_hostile(document, LAUGHS, comment)), "DOCTYPE"
        ),
        BadInput(
            "laughs-strings.xlsx",
            xlsx(shared_strings=_hostile(_strings_with(b"&lol9;"), LAUGHS, comment)),
            "DOCTYPE",
        ),
        BadInput("laughs-sheet.xlsx", xlsx(sheet=_hostile(_sheet(), LAUGHS)), "DOCTYPE"),
        BadInput(
            "laughs-hidden-sheet.xlsx", xlsx(sheet=_hostile(_sheet(), LAUGHS, comment)), "DOCTYPE"
        ),
        BadInput("laughs.pptx", pptx(slide=_hostile(_slide(), LAUGHS, comment)), "DOCTYPE"),
        BadInput("laughs.odt", odt(content=_hostile(_odt_content(), LAUGHS, comment)), "DOCTYPE"),
        BadInput("laughs.epub", epub(chapter=_hostile(_chapter(b"&lol9;"), LAUGHS)), None),
        BadInput("utf32.docx", docx(document=utf32), "UTF-8 or UTF-16"),
        BadInput("zip-bomb.docx", _zip_bomb_docx(), "budget"),
        BadInput("missing-string.xlsx", xlsx(sheet=_sheet(b"7")), "shared string"),
        BadInput("truncated.docx", docx()[:300], "DOCX"),
        BadInput("truncated.xlsx", xlsx()[: len(xlsx()) // 2], "XLSX"),
        BadInput("truncated.jpg", jpeg[: len(jpeg) // 3], "JPEG"),
        BadInput("corrupt.jpg", jpeg[:4] + bytes(600) + jpeg[604:], "JPEG"),
        BadInput("truncated.png", png[:40], "PNG"),
        BadInput("corrupt.png", png[:8] + b"\xde\xad" * 40, "PNG"),
        BadInput("truncated.pdf", pdf[: len(pdf) // 2], "PDF"),
        BadInput(
            "corrupt.pdf", b"%PDF-1.7\n" + random.Random(7).randbytes(3000) + b"\n%%EOF\n", "PDF"
        ),
        BadInput("truncated.zip", _zip([("a.txt", b"hello " * 500)])[:200], None),
        BadInput("archive.zip", _zip([("a.txt", b"hello")]), "zip archive"),
        BadInput("notes.jpg", b"Just some notes, not a picture at all.\n", "JPG"),
        BadInput("report.docx", b"Quarterly report\n\nSales rose.\n", "not a DOCX"),
        BadInput("paper.pdf", b"Plain words saved with the wrong name.\n", "not a PDF"),
        BadInput("old.doc", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(1000), ".doc"),
        BadInput("noise.txt", random.Random(3).randbytes(4096), "binary"),
        BadInput("deep.rtf", b"{\\rtf1" + b"{" * 20_000 + b"}" * 20_000 + b"}", "RTF"),
    ]
    if with_paragraph_bomb:
        items.append(BadInput("paragraphs.docx", paragraph_bomb_docx(), "XML elements"))
    return items


def _strings_with(text: bytes) -> bytes:
    return _DECLARATION + f'<sst xmlns="{_S}"><si><t>'.encode() + text + b"</t></si></sst>"


def _sheet(index: bytes = b"0") -> bytes:
    return (
        _DECLARATION
        + f'<worksheet xmlns="{_S}"><sheetData><row r="1">'.encode()
        + b'<c r="A1" t="s"><v>'
        + index
        + b"</v></c></row></sheetData></worksheet>"
    )


def _slide() -> bytes:
    return (
        _DECLARATION
        + f'<p:sld xmlns:p="{_P}" xmlns:a="{_A}"><p:cSld><p:spTree><p:sp><p:txBody>'.encode()
        + b"<a:p><a:r><a:t>&lol9;</a:t></a:r></a:p></p:txBody></p:sp></p:spTree></p:cSld></p:sld>"
    )


def _odt_content() -> bytes:
    office = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
    text = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
    return (
        _DECLARATION
        + f'<office:document-content xmlns:office="{office}" xmlns:text="{text}">'.encode()
        + b"<office:body><office:text><text:p>&lol9;</text:p></office:text></office:body>"
        + b"</office:document-content>"
    )


def _chapter(text: bytes) -> bytes:
    return (
        _DECLARATION
        + b'<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>Tides</h1><p>'
        + text
        + b"</p></body></html>"
    )


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        sys.stderr.write(__doc__ or "")
        return 2
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    for item in corpus():
        (out / item.name).write_bytes(item.data)
        sys.stderr.write(f"{item.name}: {len(item.data):,} bytes\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
