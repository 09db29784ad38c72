"""The text of one PDF page as *segments*: runs of text with their boxes, from PDFium.

PDFium's text comes line by line. For each line we ask PDFium for the rectangles of its text runs
(one call per line, not per character: that is what keeps us at hundreds of pages a second). A
line whose runs are separated by a wide gap is cut there into segments: this is how two columns
drawn interleaved ("left line 1, right line 1, ...") come apart (`pdf_layout` puts them back in
reading order).

Callers hold the PDFium lock (pdf.py): PDFium is not thread-safe.
"""

from __future__ import annotations

import ctypes
import re
import statistics
from dataclasses import dataclass

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from loci.ingest.parsers import Deadline

_LINE_BREAK = re.compile(r"\r\n|\r|\n")
# Page text, in one pass: control characters dropped, ligatures spelled out, tabs and no-break
# spaces made plain spaces.
_CLEAN = str.maketrans(
    {
        **dict.fromkeys([*map(chr, range(0x00, 0x09)), *map(chr, range(0x0B, 0x20))]),
        **dict.fromkeys(["\x7f", "\ufffe", "\uffff"]),
        "\ufb00": "ff",
        "\ufb01": "fi",
        "\ufb02": "fl",
        "\ufb03": "ffi",
        "\ufb04": "ffl",
        "\ufb05": "st",
        "\ufb06": "st",
        "\t": " ",
        "\u00a0": " ",
    }
)


@dataclass
class Segment:
    """A run of text on one line, in PDF units (y grows upwards)."""

    text: str
    left: float
    bottom: float
    right: float
    top: float
    size: float  # font height from the loose glyph box: robust to scaled text matrices

    @property
    def height(self) -> float:
        return self.top - self.bottom


def text_segments(textpage: pdfium.PdfTextPage, deadline: Deadline) -> list[Segment]:
    """Runs of text with their boxes, PDFium's lines cut at wide gaps."""
    count = textpage.count_chars()
    if count <= 0:
        return []
    text = textpage.get_text_range(0, count)
    raw = textpage.raw
    # This loop runs once per line of every page: the PDFium functions are looked up once.
    # (Out-parameters go in as the ctypes objects themselves: ready-made byref() is slower.)
    char_index = pdfium_c.FPDFText_GetCharIndexFromTextIndex
    count_rects = pdfium_c.FPDFText_CountRects
    get_rect = pdfium_c.FPDFText_GetRect
    loose_box = pdfium_c.FPDFText_GetLooseCharBox
    left, bottom, right, top = (ctypes.c_double() for _ in range(4))
    loose = pdfium_c.FS_RECTF()
    segments: list[Segment] = []
    position = 0
    for number, match in enumerate([*_LINE_BREAK.finditer(text), None]):
        if number % 512 == 511:
            deadline.check()  # a single page can hold megabytes of text
        end = match.start() if match else len(text)
        line_start, line_text = position, text[position:end]
        position = match.end() if match else len(text)
        if not line_text.strip():
            continue
        first = char_index(raw, line_start)
        last = char_index(raw, line_start + len(line_text) - 1)
        if first < 0 or last < first:
            continue
        rects = [
            (left.value, bottom.value, right.value, top.value)
            for r in range(count_rects(raw, first, last - first + 1))
            if get_rect(raw, r, left, top, right, bottom)
        ]
        if not rects:
            continue
        for piece_text, offset, box in _split_at_gaps(raw, line_text, first, rects):
            cleaned = " ".join(piece_text.translate(_CLEAN).split())
            if not cleaned:
                continue
            lead = first + offset + (len(piece_text) - len(piece_text.lstrip()))
            size = box[3] - box[1]
            if loose_box(raw, lead, loose):
                size = loose.top - loose.bottom
            segments.append(Segment(cleaned, box[0], box[1], box[2], box[3], round(size, 1)))
    return segments


_Box = tuple[float, float, float, float]


def _split_at_gaps(
    raw: object, line_text: str, first: int, rects: list[_Box]
) -> list[tuple[str, int, _Box]]:
    """(text, offset in line, box) pieces of one PDFium line, cut where runs are far apart."""
    if len(rects) == 1:  # most lines: one run of text
        return [(line_text, 0, rects[0])]
    union = _union(rects)
    threshold = max(statistics.median(r[3] - r[1] for r in rects), 4.0)
    ordered = sorted(rects)
    if all(b[0] - a[2] <= threshold for a, b in zip(ordered, ordered[1:], strict=False)):
        return [(line_text, 0, union)]
    # Rare (columns drawn interleaved, tab stops): find the wide gaps at the line's spaces,
    # which PDFium inserts between runs, using the boxes of the characters either side.
    pieces: list[tuple[str, int, _Box]] = []
    start = 0
    previous_right: float | None = None
    piece_boxes: list[_Box] = []
    box = pdfium_c.FS_RECTF()
    loose_box = pdfium_c.FPDFText_GetLooseCharBox
    for offset, char in enumerate(line_text):
        if char.isspace():
            continue
        if not loose_box(raw, first + offset, box):
            continue
        char_box = (box.left, box.bottom, box.right, box.top)
        if previous_right is not None and char_box[0] - previous_right > threshold and piece_boxes:
            pieces.append((line_text[start:offset], start, _union(piece_boxes)))
            start, piece_boxes = offset, []
        piece_boxes.append(char_box)
        previous_right = char_box[2]
    if piece_boxes:
        pieces.append((line_text[start:], start, _union(piece_boxes)))
    return pieces or [(line_text, 0, union)]


def _union(boxes: list[_Box]) -> _Box:
    return (
        min(b[0] for b in boxes),
        min(b[1] for b in boxes),
        max(b[2] for b in boxes),
        max(b[3] for b in boxes),
    )
