"""PDF: text per page in reading order, with paragraphs, size-based headings and page numbers.

PDFium (via pypdfium2, C speed) extracts the characters; the layout is rebuilt here from where
the text sits, because a PDF's drawing order is not its reading order. Per page:

1. PDFium's text comes line by line. For each line we ask PDFium for the rectangles of its text
   runs (one call per line, not per character: that is what keeps us at hundreds of pages a
   second). A line whose runs are separated by a wide gap is cut there into *segments*: this is
   how two columns drawn interleaved ("left line 1, right line 1, ...") come apart.
2. Columns: an x-range no narrow segment crosses, with column-like text on both sides, is a
   gutter. Segments are read top to bottom; a segment that spans the gutter (a title, a
   full-width figure caption) closes the column run above it: left column, then right column.
3. Segments on the same baseline are joined into lines, lines into paragraphs at vertical gaps
   and at font-size changes. Line numbers count the page's lines in this reading order.

After all pages, paragraphs set in a clearly larger font than the body text become headings,
ranked by size, so chunks of a PDF get heading paths like any markdown file.

A page with too little text for its area and an image on it is a scan: it is rendered and read
by OCR instead (pdf_scans.py), its text blocks carrying their regions; text pages never are.

PDFium is not thread-safe, so its calls are serialised per process (a lock, taken per page so
that OCR, which runs outside it, does not hold up other PDFs).
"""

from __future__ import annotations

import ctypes
import logging
import re
import statistics
import threading
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from loci.errors import BudgetExceeded, EncryptedDocument, ParseError
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.pdf_scans import (
    FIGURE_SHARE,
    ScannedPages,
    image_share,
    needs_ocr,
    render,
)
from loci.models import Block, ParsedDocument

if TYPE_CHECKING:
    from PIL import Image

logger = logging.getLogger(__name__)

_PDFIUM_LOCK = threading.Lock()

_EOF_WINDOW = 16 * 1024  # readers accept %%EOF near the end; trailing junk is common
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")
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
_HEADING_RATIO = 1.15  # font size over body size from which a short paragraph is a heading
_HEADING_MAX_CHARS = 200
_HEADING_MAX_LINES = 3
_DOT_LEADER = re.compile(r"(?:\.\s?){4,}")
_PAGE_NUMBER = re.compile(
    r"^\W{0,2}(?:page\s+)?(?:\d{1,5}|[ivxlcdm]{1,7})(?:\s*(?:/|of)\s*\d{1,5})?\W{0,2}$", re.I
)
_DIGITS = re.compile(r"\d+")
_JUNK_TITLE = re.compile(
    r"^(?:untitled|title|document\d*|microsoft \w+ - .*)$|\.(?:docx?|pdf|tex|dvi|indd|rtf|odt)$",
    re.I,
)
_COLUMN_MIN_SEGMENTS = 3
_COLUMN_MIN_MEDIAN_CHARS = 15  # text columns have long lines; table cells do not


@dataclass
class _Segment:
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


@dataclass
class _Line:
    segments: list[_Segment]
    left: float
    bottom: float
    right: float
    top: float

    @property
    def text(self) -> str:
        return " ".join(s.text for s in sorted(self.segments, key=lambda s: s.left))

    @property
    def size(self) -> float:
        return max(s.size for s in self.segments)

    def overlaps(self, segment: _Segment) -> bool:
        overlap = min(self.top, segment.top) - max(self.bottom, segment.bottom)
        return overlap >= 0.5 * min(self.top - self.bottom, segment.height)

    def add(self, segment: _Segment) -> None:
        self.segments.append(segment)
        self.left = min(self.left, segment.left)
        self.right = max(self.right, segment.right)
        self.bottom = min(self.bottom, segment.bottom)
        self.top = max(self.top, segment.top)


@dataclass
class _Paragraph:
    page: int
    lines: list[str] = field(default_factory=list)
    line_start: int = 0
    sizes: Counter[float] = field(default_factory=Counter)  # font size → characters


def parse_pdf(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    if data.rfind(b"%%EOF", -_EOF_WINDOW) == -1:
        raise ParseError("truncated PDF: the file ends before its end-of-file marker")
    deadline = Deadline(budgets, "PDF")
    with _PDFIUM_LOCK:
        document = _open(data)
    scanned = ScannedPages(budgets, deadline)
    try:
        with _PDFIUM_LOCK:
            pages = len(document)
            if pages > budgets.max_pdf_pages:
                raise BudgetExceeded(
                    f"PDF has {pages} pages, over the {budgets.max_pdf_pages}-page budget"
                )
            metadata = _metadata(document, pages)
        paragraphs: list[_Paragraph] = []
        figures: list[int] = []  # text pages mostly covered by pictures (captioned, if enabled)
        warnings: list[str] = []
        for index in range(pages):
            deadline.check()
            # The lock is held per page, not per file: OCR of a scanned page runs outside it
            # (a subprocess, seconds long) so other PDFs are not kept waiting meanwhile.
            try:
                with _PDFIUM_LOCK:
                    found, scan = _read_page(document, index, deadline, scanned.can_read())
                    if found and image_share(document, index) >= FIGURE_SHARE:
                        figures.append(index + 1)
                paragraphs.extend(found)
                if scan is not None:
                    scanned.read(index + 1, scan)
            except pdfium.PdfiumError as exc:
                warnings.append(f"page {index + 1} could not be read ({exc}); skipped")
        scanned.finish()
    finally:
        scanned.close()
        with _PDFIUM_LOCK:
            document.close()
    blocks = _blocks(paragraphs)
    if scanned.blocks:
        # Each page is either text or OCR, so a stable sort by page interleaves them rightly.
        blocks = sorted([*blocks, *scanned.blocks], key=lambda b: b.page or 0)
    warnings.extend(scanned.warnings())
    if scanned.pages:
        metadata["ocr"] = scanned.summary()
    if figures:
        metadata["figure_pages"] = figures
    if not blocks and not scanned.skipped:
        warnings.append("no extractable text")
    declared = metadata.pop("title", None)
    title = (declared if isinstance(declared, str) and _useful_title(declared) else None) or next(
        (b.text for b in blocks if b.kind == "heading" and b.level == 1 and b.page == 1), None
    )
    return ParsedDocument(
        title=title, blocks=tuple(blocks), metadata=metadata, warnings=tuple(warnings)
    )


def scanned_pages(data: bytes, limit: int = 5000) -> list[int]:
    """Page numbers (1-based) that have little or no text and an image: those OCR would read.
    For previews (the dry run); opening the PDF fails as `parse_pdf` would."""
    if data.rfind(b"%%EOF", -_EOF_WINDOW) == -1:
        raise ParseError("truncated PDF: the file ends before its end-of-file marker")
    deadline = Deadline(ParseBudgets(), "PDF")
    with _PDFIUM_LOCK:
        document = _open(data)
        try:
            found = []
            for index in range(min(len(document), limit)):
                page = document[index]
                try:
                    textpage = page.get_textpage()
                    try:
                        # counted as the parser counts them, so the preview says what it does
                        segments = _segments(textpage, deadline)
                    finally:
                        textpage.close()
                    if needs_ocr(page, sum(len(s.text) for s in segments)):
                        found.append(index + 1)
                finally:
                    page.close()
            return found
        finally:
            document.close()


def _useful_title(title: str) -> bool:
    """Authoring tools often fill Title with a file name or a placeholder; the first big
    heading on page one says more than "Microsoft Word - draft3.docx"."""
    return not _JUNK_TITLE.search(title)


def _open(data: bytes) -> pdfium.PdfDocument:
    try:
        return pdfium.PdfDocument(data)
    except pdfium.PdfiumError as exc:
        code = getattr(exc, "err_code", None)
        if code == pdfium_c.FPDF_ERR_PASSWORD:
            raise EncryptedDocument("password-protected PDF") from None
        if code == pdfium_c.FPDF_ERR_SECURITY:
            raise EncryptedDocument("PDF uses an unsupported encryption scheme") from None
        raise ParseError("corrupt PDF: its structure could not be read") from None


def _metadata(document: pdfium.PdfDocument, pages: int) -> dict[str, object]:
    metadata: dict[str, object] = {"pages": pages}
    try:
        info = document.get_metadata_dict(skip_empty=True)
    except pdfium.PdfiumError:
        return metadata
    for key in ("Title", "Author", "Subject", "Keywords", "Creator", "Producer", "CreationDate"):
        value = info.get(key)
        if isinstance(value, str) and value.strip():
            metadata[key.lower()] = " ".join(_CONTROL.sub(" ", value).split())
    return metadata


# --- one page ----------------------------------------------------------------------------------


def render_pages(data: bytes, numbers: list[int]) -> Iterator[tuple[int, Image.Image]]:
    """(page number, page image in colour) for the given 1-based pages, rendered one at a time
    (for captions of scanned and figure pages). Pages that cannot be rendered are skipped."""
    with _PDFIUM_LOCK:
        document = _open(data)
    try:
        for number in numbers:
            with _PDFIUM_LOCK:
                if not 1 <= number <= len(document):
                    continue
                page = document[number - 1]
                try:
                    image = render(page, grayscale=False)
                except pdfium.PdfiumError:
                    continue
                finally:
                    page.close()
            yield number, image
    finally:
        with _PDFIUM_LOCK:
            document.close()


def _read_page(
    document: pdfium.PdfDocument, index: int, deadline: Deadline, for_ocr: bool
) -> tuple[list[_Paragraph], Image.Image | None | bool]:
    """The page's text paragraphs; or, for a page that has next to no text but an image (a
    scan), the page rendered for OCR instead (when `for_ocr`), or True to say it is one."""
    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            segments = _segments(textpage, deadline)
        finally:
            textpage.close()
        chars = sum(len(s.text) for s in segments)
        if needs_ocr(page, chars):
            return [], render(page) if for_ocr else True
    finally:
        page.close()
    if not segments:
        return [], None
    streams = _reading_order(segments)
    return _paragraphs(streams, page_number=index + 1), None


def _segments(textpage: pdfium.PdfTextPage, deadline: Deadline) -> list[_Segment]:
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
    segments: list[_Segment] = []
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
            segments.append(_Segment(cleaned, box[0], box[1], box[2], box[3], round(size, 1)))
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


def _reading_order(segments: list[_Segment]) -> list[list[_Segment]]:
    """Streams of segments to read one after the other: columns in order, top to bottom."""
    by_position = sorted(segments, key=lambda s: (-(s.top + s.bottom) / 2, s.left))
    gutters = _gutters(segments)
    if not gutters:
        return [by_position]
    streams: list[list[_Segment]] = []
    columns: list[list[_Segment]] = [[] for _ in range(len(gutters) + 1)]

    def flush() -> None:
        for column in columns:
            if column:
                streams.append(list(column))
                column.clear()

    spanning: list[_Segment] | None = None  # the full-width run being read, if any
    for segment in by_position:
        column = _column_of(segment, gutters)
        if column is None:
            if spanning is None:
                flush()
                spanning = []
                streams.append(spanning)
            spanning.append(segment)
        else:
            spanning = None
            columns[column].append(segment)
    flush()
    return streams


def _column_of(segment: _Segment, gutters: list[tuple[float, float]]) -> int | None:
    """Index of the column holding the segment; None when it reaches into a gutter."""
    column = 0
    for lo, hi in gutters:
        if segment.left >= hi - 0.5:
            column += 1
        elif segment.right > lo + 0.5:
            return None
    return column


def _gutters(segments: list[_Segment]) -> list[tuple[float, float]]:
    """Vertical strips no column-width segment crosses, with real text columns either side."""
    lo = min(s.left for s in segments)
    hi = max(s.right for s in segments)
    width = hi - lo
    if width <= 0:
        return []
    # Full-width lines (titles, spanning captions) cross gutters by design: leave them out.
    narrow = sorted((s for s in segments if s.right - s.left < 0.6 * width), key=lambda s: s.left)
    if len(narrow) < 2 * _COLUMN_MIN_SEGMENTS:
        return []
    min_gap = max(6.0, 0.6 * statistics.median(s.height for s in narrow))
    gaps: list[tuple[float, float]] = []
    reach = narrow[0].right
    for segment in narrow[1:]:
        if segment.left - reach >= min_gap and lo + 0.15 * width < segment.left < hi - 0.1 * width:
            gaps.append((reach, segment.left))
        reach = max(reach, segment.right)
    if not gaps:
        return []
    bounds = [lo, *[x for gap in gaps for x in gap], hi]
    for column in range(len(gaps) + 1):
        start, end = bounds[2 * column], bounds[2 * column + 1]
        inside = [s for s in narrow if s.left >= start - 0.5 and s.right <= end + 0.5]
        if len(inside) < _COLUMN_MIN_SEGMENTS:
            return []
        if statistics.median(len(s.text) for s in inside) < _COLUMN_MIN_MEDIAN_CHARS:
            return []
        if statistics.median(s.right - s.left for s in inside) < 0.5 * (end - start):
            return []
    return gaps


def _paragraphs(streams: list[list[_Segment]], page_number: int) -> list[_Paragraph]:
    stream_lines = [_lines(stream) for stream in streams]
    all_lines = [line for lines in stream_lines for line in lines]
    heights = [line.top - line.bottom for line in all_lines]
    gaps = [
        above.bottom - below.top
        for lines in stream_lines
        for above, below in zip(lines, lines[1:], strict=False)
        if above.bottom - below.top > -0.5 * (below.top - below.bottom)
    ]
    typical_gap = statistics.median(gaps) if gaps else 0.0
    break_at = typical_gap + 0.6 * (statistics.median(heights) if heights else 10.0)

    paragraphs: list[_Paragraph] = []
    number = 0
    for lines in stream_lines:
        current: _Paragraph | None = None
        previous: _Line | None = None
        previous_size = 0.0
        for line in lines:
            number += 1
            text = line.text
            size = line.size
            new = (
                current is None
                or previous is None
                or previous.bottom - line.top > break_at
                or abs(size - previous_size) > 0.15 * max(size, previous_size)
            )
            if new or current is None:
                current = _Paragraph(page=page_number, line_start=number)
                paragraphs.append(current)
            current.lines.append(text)
            current.sizes[size] += len(text)
            previous, previous_size = line, size
    return paragraphs


def _lines(stream: list[_Segment]) -> list[_Line]:
    lines: list[_Line] = []
    for segment in stream:  # already sorted top to bottom
        if lines and lines[-1].overlaps(segment):
            lines[-1].add(segment)
        else:
            lines.append(_Line([segment], segment.left, segment.bottom, segment.right, segment.top))
    return lines


# --- whole document -------------------------------------------------------------------------------


def _blocks(paragraphs: list[_Paragraph]) -> list[Block]:
    body = _body_size(paragraphs)
    paragraphs = _without_page_furniture(paragraphs, body)
    heading_sizes = sorted({_size(p) for p in paragraphs if _is_heading(p, body)}, reverse=True)
    levels = {size: min(rank + 1, 6) for rank, size in enumerate(heading_sizes)}
    blocks = []
    for paragraph in paragraphs:
        text = "\n".join(paragraph.lines)
        line_end = paragraph.line_start + len(paragraph.lines) - 1
        if _is_heading(paragraph, body):
            blocks.append(
                Block(
                    "heading",
                    " ".join(paragraph.lines),
                    level=levels[_size(paragraph)],
                    page=paragraph.page,
                    line_start=paragraph.line_start,
                    line_end=line_end,
                )
            )
        else:
            blocks.append(
                Block(
                    "paragraph",
                    text,
                    page=paragraph.page,
                    line_start=paragraph.line_start,
                    line_end=line_end,
                )
            )
    return blocks


def _without_page_furniture(paragraphs: list[_Paragraph], body: float) -> list[_Paragraph]:
    """Drop page numbers and running headers/footers: the first or last paragraph of a page
    that is only a number, or whose text (digits aside) tops or tails many pages. Left in, they
    would be glued into chunks mid-sentence and match every query about the document title.
    Heading-sized text is kept: the title page's title often doubles as the running header."""
    by_page: dict[int, list[_Paragraph]] = {}
    for paragraph in paragraphs:
        by_page.setdefault(paragraph.page, []).append(paragraph)
    edges = [p for ps in by_page.values() for p in (ps[:1] + ps[1:][-1:])]
    edge_ids = {id(p) for p in edges}
    repeats = Counter(_furniture_key(p) for p in edges)
    threshold = max(3, len(by_page) // 3)
    kept = []
    for paragraph in paragraphs:
        if id(paragraph) in edge_ids and len(paragraph.lines) <= 2:
            key = _furniture_key(paragraph)
            if _PAGE_NUMBER.match(" ".join(paragraph.lines)):
                continue
            if repeats[key] >= threshold and _size(paragraph) < body * _HEADING_RATIO:
                continue
        kept.append(paragraph)
    return kept


def _furniture_key(paragraph: _Paragraph) -> str:
    return _DIGITS.sub("#", " ".join(paragraph.lines).lower())


def _size(paragraph: _Paragraph) -> float:
    return round(paragraph.sizes.most_common(1)[0][0])


def _body_size(paragraphs: list[_Paragraph]) -> float:
    """The font size most characters of the document are set in."""
    total: Counter[float] = Counter()
    for paragraph in paragraphs:
        for size, chars in paragraph.sizes.items():
            total[round(size)] += chars
    return total.most_common(1)[0][0] if total else 0.0


def _is_heading(paragraph: _Paragraph, body: float) -> bool:
    if body <= 0 or _size(paragraph) < body * _HEADING_RATIO:
        return False
    text = " ".join(paragraph.lines)
    return (
        len(paragraph.lines) <= _HEADING_MAX_LINES
        and len(text) <= _HEADING_MAX_CHARS
        and any(c.isalpha() for c in text)
        and not text.endswith((".", ",", ";"))
        and not _DOT_LEADER.search(text)  # a table-of-contents entry
    )
