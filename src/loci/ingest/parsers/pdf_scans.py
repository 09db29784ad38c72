"""Scanned PDF pages: telling them apart, rendering them, and reading them with OCR.

The PDF parser (pdf.py) calls these per page, under its PDFium lock for anything that touches
the document; OCR itself runs outside the lock in `ScannedPages`' worker threads (each drives
one Tesseract process), so other PDFs are not kept waiting.
"""

from __future__ import annotations

import ctypes
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from loci.errors import BudgetExceeded, ParseError
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.models import Block

if TYPE_CHECKING:
    from PIL import Image

    from loci.ingest.ocr.choice import Reading

# Scanned pages: below this many characters per square point a page is read by OCR (a letter
# page of body text has ~3000 characters, 0.006 per pt²; 0.0002 is ~100 characters).
OCR_CHARS_PER_AREA = 0.0002
OCR_DPI = 200  # enough for body text; 300 costs twice the pixels for little gain
OCR_MAX_PIXELS = 12_000_000  # a page bigger than A3 at 200 dpi is rendered smaller
FIGURE_SHARE = 0.4  # a text page this much covered by images is worth a caption


def looks_scanned(page: pdfium.PdfPage, chars: int) -> bool:
    """Too little text for the page's area, and something drawn that could be a scan.

    A page of body text has thousands of characters; a scanned page has none, or a few from a
    stamp, a page number or an OCR layer some scanners add for the title only. Blank pages and
    pages of vector drawings have no image and are not worth rendering."""
    width, height = page.get_size()
    if chars >= OCR_CHARS_PER_AREA * width * height:
        return False
    raw = page.raw
    for i in range(pdfium_c.FPDFPage_CountObjects(raw)):
        kind = pdfium_c.FPDFPageObj_GetType(pdfium_c.FPDFPage_GetObject(raw, i))
        if kind in (pdfium_c.FPDF_PAGEOBJ_IMAGE, pdfium_c.FPDF_PAGEOBJ_FORM):
            return True
    return False


def image_share(document: pdfium.PdfDocument, index: int) -> float:
    """How much of the page its images cover (their bounding boxes, summed, at most 1)."""
    page = document[index]
    try:
        width, height = page.get_size()
        raw = page.raw
        left, bottom, right, top = (ctypes.c_float() for _ in range(4))
        covered = 0.0
        for i in range(pdfium_c.FPDFPage_CountObjects(raw)):
            item = pdfium_c.FPDFPage_GetObject(raw, i)
            if pdfium_c.FPDFPageObj_GetType(item) != pdfium_c.FPDF_PAGEOBJ_IMAGE:
                continue
            if pdfium_c.FPDFPageObj_GetBounds(item, left, bottom, right, top):
                covered += max(0.0, right.value - left.value) * max(0.0, top.value - bottom.value)
        area: float = width * height
        return min(1.0, covered / max(area, 1.0))
    finally:
        page.close()


def render(page: pdfium.PdfPage, *, grayscale: bool = True) -> Image.Image:
    """The page as an image at OCR resolution (greyscale for OCR, colour for a caption), shrunk
    for huge pages so that one rendered page stays a few megabytes."""
    width, height = page.get_size()
    scale = OCR_DPI / 72
    if width * height * scale * scale > OCR_MAX_PIXELS:
        scale = (OCR_MAX_PIXELS / (width * height)) ** 0.5
    bitmap = page.render(scale=scale, grayscale=grayscale)
    try:
        image: Image.Image = bitmap.to_pil().copy()  # the PIL image must outlive the bitmap
    finally:
        bitmap.close()
    return image


class ScannedPages:
    """OCR of the scanned pages of one PDF, `ocr_processes` pages at a time.

    Tesseract runs one thread per process, so two pages in two processes use both cores of a
    small machine while the next page is rendered; memory holds at most that many pages plus
    the one being rendered. Results are gathered by page, so the order stays the document's."""

    def __init__(self, budgets: ParseBudgets, deadline: Deadline) -> None:
        from loci.ingest.ocr import ocr_available

        self.budgets = budgets
        self.deadline = deadline
        self.available = ocr_available()
        self.pages: list[int] = []
        self.skipped: list[int] = []  # scanned pages left unread (no engine, over the budget)
        self._pool: ThreadPoolExecutor | None = None
        self._running: deque[tuple[int, Future[Reading]]] = deque()
        self._found: dict[int, list[Block]] = {}
        self._engines: dict[int, str] = {}  # which engine's reading was kept, per page
        self._failed: list[str] = []

    def can_read(self) -> bool:
        """Whether the next scanned page will be read (else it is only counted, not rendered)."""
        return self.available and len(self.pages) < self.budgets.max_ocr_pages

    def read(self, page_number: int, image: Image.Image | bool) -> None:
        from loci.ingest.ocr.choice import read_image

        if isinstance(image, bool):
            self.skipped.append(page_number)
            return
        if self._pool is None:
            self._pool = ThreadPoolExecutor(max(1, self.budgets.ocr_processes), "ocr")
        while len(self._running) >= max(1, self.budgets.ocr_processes):
            self._collect_one()
        self.deadline.extend(self.budgets.ocr_seconds_per_page)
        timeout = self.deadline.remaining()
        fallback = self.budgets.ocr_fallback
        reading = self._pool.submit(read_image, image, timeout_s=timeout, fallback=fallback)
        self._running.append((page_number, reading))
        self.pages.append(page_number)

    def finish(self) -> None:
        """Wait for the pages still being read (an OCR error is raised here)."""
        while self._running:
            self._collect_one()

    def close(self) -> None:
        """Drop pages not yet started; the ones running end within their time limit."""
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
            self._pool = None

    def _collect_one(self) -> None:
        from loci.ingest.ocr import ocr_blocks

        page_number, future = self._running.popleft()
        try:
            reading = future.result()
        except BudgetExceeded:
            raise  # a page past its time limit: the rest would likely be too
        except ParseError as error:  # the engine failed on this page only: keep the others
            self._failed.append(f"page {page_number} could not be read by OCR ({error.message})")
            return
        self._found[page_number] = ocr_blocks(reading.recognized, page=page_number)
        self._engines[page_number] = reading.engine

    @property
    def blocks(self) -> list[Block]:
        return [block for page in sorted(self._found) for block in self._found[page]]

    def warnings(self) -> list[str]:
        from loci.ingest.ocr.choice import fallback_note
        from loci.ingest.ocr.engine import NO_ENGINE
        from loci.ingest.ocr.layout import LOW_CONFIDENCE, low_confidence

        found = list(self._failed)
        if self.skipped and not self.available:
            found.append(
                f"{len(self.skipped)} scanned page(s) without text were not read: {NO_ENGINE}"
            )
        elif self.skipped:
            found.append(
                f"{len(self.skipped)} scanned page(s) past the {self.budgets.max_ocr_pages}-page"
                " OCR budget were not read"
            )
        empty = [page for page, blocks in self._found.items() if not blocks]
        note = fallback_note(self.budgets.ocr_fallback)
        if empty and note:
            found.append(f"OCR found no text on {len(empty)} scanned page(s){note}")
        uncertain = low_confidence(self.blocks)
        if uncertain:
            found.append(
                f"{uncertain} of {len(self.blocks)} OCR passages read with low confidence"
                f" (below {LOW_CONFIDENCE:.0%}; marked in their citations)"
            )
        return found

    def summary(self) -> dict[str, object]:
        from loci.ingest.ocr import ENGINE_NAME
        from loci.ingest.ocr.layout import low_confidence

        engines = sorted(set(self._engines.values())) or [ENGINE_NAME]
        return {
            "engine": "+".join(engines),
            "pages": self.pages,
            "blocks": len(self.blocks),
            "low_confidence": low_confidence(self.blocks),
        }
