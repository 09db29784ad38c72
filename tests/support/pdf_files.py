"""PDFs to feed Loci, made at test time so no binary file is committed.

They are written by a tiny PDF writer (Helvetica text placed at x/y coordinates), so the tests
control the exact layout, including content streams whose drawing order differs from the reading
order.
"""

from __future__ import annotations

import io
import random
import zlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from tests.support.text_files import prose, wrap

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
