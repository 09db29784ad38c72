"""PDF: text per page in reading order, with paragraphs, size-based headings and page numbers.

PDFium (via pypdfium2, C speed) extracts the characters; the layout is rebuilt from where the
text sits, because a PDF's drawing order is not its reading order. Per page, the text comes as
segments cut at wide gaps (pdf_text.py), is put in reading order, columns apart, and joined into
lines and paragraphs (pdf_layout.py). After all pages, page furniture is dropped and paragraphs
set in a clearly larger font become headings (pdf_blocks.py).

A page with too little text for its area and an image on it is a scan: it is rendered and read
by OCR instead (pdf_scans.py), its text blocks carrying their regions; text pages never are.

This module opens the document, walks its pages within the budgets and reads its metadata.
PDFium is not thread-safe, so its calls are serialised per process (a lock, taken per page so
that OCR, which runs outside it, does not hold up other PDFs).
"""

from __future__ import annotations

import logging
import re
import threading
from collections.abc import Iterator
from typing import TYPE_CHECKING

import pypdfium2 as pdfium  # type: ignore[import-untyped]
import pypdfium2.raw as pdfium_c  # type: ignore[import-untyped]

from loci.errors import BudgetExceeded, EncryptedDocument, ParseError
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.parsers.pdf_blocks import document_blocks
from loci.ingest.parsers.pdf_layout import Paragraph, page_paragraphs, reading_order
from loci.ingest.parsers.pdf_scans import (
    FIGURE_SHARE,
    ScannedPages,
    image_share,
    looks_scanned,
    render,
)
from loci.ingest.parsers.pdf_text import text_segments
from loci.ingest.progress import report
from loci.models import ParsedDocument

if TYPE_CHECKING:
    from PIL import Image

logger = logging.getLogger(__name__)

_PDFIUM_LOCK = threading.Lock()

_EOF_WINDOW = 16 * 1024  # readers accept %%EOF near the end; trailing junk is common
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f\ufffe\uffff]")
_JUNK_TITLE = re.compile(
    r"^(?:untitled|title|document\d*|microsoft \w+ - .*)$|\.(?:docx?|pdf|tex|dvi|indd|rtf|odt)$",
    re.I,
)


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
        paragraphs: list[Paragraph] = []
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
            # Page n of m, as OCR once a scanned page is being read (it sets the pace).
            report("ocr" if scanned.pages else "parse", index + 1, pages)
        scanned.finish()
    finally:
        scanned.close()
        with _PDFIUM_LOCK:
            document.close()
    blocks = document_blocks(paragraphs)
    if scanned.blocks:
        # Each page is either text or OCR, so a stable sort by page interleaves them rightly.
        blocks = sorted([*blocks, *scanned.blocks], key=lambda b: b.location.page or 0)
    warnings.extend(scanned.warnings())
    if scanned.pages:
        metadata["ocr"] = scanned.summary()
    if figures:
        metadata["figure_pages"] = figures
    if not blocks and not scanned.skipped:
        warnings.append("no extractable text")
    declared = metadata.pop("title", None)
    title = (declared if isinstance(declared, str) and _useful_title(declared) else None) or next(
        (b.text for b in blocks if b.kind == "heading" and b.level == 1 and b.location.page == 1),
        None,
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
                        segments = text_segments(textpage, deadline)
                    finally:
                        textpage.close()
                    if looks_scanned(page, sum(len(s.text) for s in segments)):
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
) -> tuple[list[Paragraph], Image.Image | None | bool]:
    """The page's text paragraphs; or, for a page that has next to no text but an image (a
    scan), the page rendered for OCR instead (when `for_ocr`), or True to say it is one."""
    page = document[index]
    try:
        textpage = page.get_textpage()
        try:
            segments = text_segments(textpage, deadline)
        finally:
            textpage.close()
        chars = sum(len(s.text) for s in segments)
        if looks_scanned(page, chars):
            return [], render(page) if for_ocr else True
    finally:
        page.close()
    if not segments:
        return [], None
    streams = reading_order(segments)
    return page_paragraphs(streams, page_number=index + 1), None
