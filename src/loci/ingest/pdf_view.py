"""A PDF page as a person reads it: rendered to PNG, with where a cited passage sits on it.

A citation names a page and the passage's text; the reader shows that page and marks the
passage. Its boxes are found by searching the page's own text layer for each line of the
passage (PDFium's search, from where the previous line was found, so a line repeated elsewhere
on the page is not marked instead); the start and the end of a line are searched apart, so a
line the parser cleaned (a ligature, a hyphen) is still marked from its first words. A passage
read by OCR has no text layer to search: its region, recorded at indexing, is its box.

Boxes are fractions of the page (left, top, right, bottom; origin top left), as OCR regions are,
so they hold at any rendering size.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from contextlib import contextmanager

import pypdfium2 as pdfium  # type: ignore[import-untyped]

from loci.errors import InvalidInput, ParseError
from loci.ingest.parsers.pdf import _PDFIUM_LOCK as PDFIUM_LOCK  # PDFium is not thread-safe
from loci.models import Region

MIN_WIDTH, MAX_WIDTH = 200, 2400
_PROBE = 48  # characters searched at each end of a line
_SHORT = 4  # lines shorter than this are too common to place


@contextmanager
def _opened(data: bytes) -> Iterator[pdfium.PdfDocument]:
    try:
        document = pdfium.PdfDocument(data)
    except pdfium.PdfiumError as error:
        raise ParseError(f"the PDF cannot be opened ({error})") from None
    try:
        yield document
    finally:
        document.close()


def _page(document: pdfium.PdfDocument, number: int) -> pdfium.PdfPage:
    if not 1 <= number <= len(document):
        raise InvalidInput(f"page {number} is outside this PDF's {len(document)} pages")
    return document[number - 1]


def page_count(data: bytes) -> int:
    with PDFIUM_LOCK, _opened(data) as document:
        return len(document)


def render_page(data: bytes, number: int, width: int) -> bytes:
    """Page `number` (1-based) as a PNG `width` pixels wide."""
    width = max(MIN_WIDTH, min(MAX_WIDTH, width))
    with PDFIUM_LOCK, _opened(data) as document:
        page = _page(document, number)
        points = page.get_width() or 1.0
        image = page.render(scale=width / points).to_pil()
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def passage_boxes(data: bytes, number: int, text: str) -> list[Region]:
    """Where the lines of `text` are on page `number`, as fractions of the page."""
    lines = [" ".join(line.split()) for line in text.splitlines()]
    with PDFIUM_LOCK, _opened(data) as document:
        page = _page(document, number)
        width, height = page.get_size()
        textpage = page.get_textpage()
        boxes: list[Region] = []
        after = 0
        for line in lines:
            if len(line) < _SHORT:
                continue
            found = _find_line(textpage, line, after) or _find_line(textpage, line, 0)
            if found is None:
                continue
            start, count = found
            after = start + count
            for index in range(textpage.count_rects(start, count)):
                left, bottom, right, top = textpage.get_rect(index)
                boxes.append(
                    (
                        max(0.0, left / width),
                        max(0.0, 1 - top / height),
                        min(1.0, right / width),
                        min(1.0, 1 - bottom / height),
                    )
                )
        textpage.close()
    return boxes


def _find(textpage: pdfium.PdfTextPage, needle: str, after: int) -> tuple[int, int] | None:
    searcher = textpage.search(needle, index=after, match_case=False, match_whole_word=False)
    try:
        found = searcher.get_next()
    finally:
        searcher.close()
    return None if found is None else (int(found[0]), int(found[1]))


def _find_line(textpage: pdfium.PdfTextPage, line: str, after: int) -> tuple[int, int] | None:
    """(first character, character count) of `line` on the page, searched from `after`."""
    head = _find(textpage, line[:_PROBE], after)
    if head is None:
        return None
    if len(line) <= _PROBE:
        return head
    tail = _find(textpage, line[-_PROBE:], head[0])
    if tail is None or tail[0] - head[0] > 3 * len(line):
        return head  # the end was not found near the start: mark what was
    return head[0], tail[0] + tail[1] - head[0]
