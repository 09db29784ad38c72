"""Will adding this file run OCR? A cheap answer for previews (the `add --dry-run` preflight).

It follows the parser the file gets (`loci.ingest.plan`): an image is always read by OCR; a PDF
is when some page has too little text for its area and an image on it (a scan). The PDF is
opened, but no page is rendered. `needs_ocr` is False when no OCR engine is installed, since
then none will run.

It sits beside the parsers and the OCR package, not inside OCR: it asks the PDF parser which
pages are scans, and the PDF parser itself calls OCR.
"""

from __future__ import annotations

from loci.errors import ParseError
from loci.ingest.ocr.engine import ocr_available
from loci.ingest.parsers import choose_parser


def needs_ocr(data: bytes, name: str = "") -> bool:
    """True when parsing these bytes (named `name`) will run OCR on at least one image or page."""
    if not ocr_available():
        return False
    try:
        parser = choose_parser(data, name)
    except ParseError:
        return False  # nothing reads it, so no OCR either
    return bool(ocr_targets(data, parser))


def ocr_targets(data: bytes, parser: str) -> list[int]:
    """What OCR would read for a file the `parser` reads: [1] for an image, the scanned pages'
    numbers for a PDF, else []."""
    if parser == "image":
        return [1]
    if parser == "pdf":
        from loci.ingest.parsers.pdf import scanned_pages

        try:
            return scanned_pages(data)
        except ParseError:
            return []  # the parse itself will fail, with its reason, before any OCR
    return []


def pdf_page_count(data: bytes) -> int:
    """How many pages the PDF has, for an estimate (1 when it cannot be opened: the parser
    reports a broken PDF with its own reason)."""
    import pypdfium2 as pdfium  # type: ignore[import-untyped]

    try:
        pdf = pdfium.PdfDocument(data)
    except Exception:
        return 1
    try:
        return len(pdf)
    finally:
        pdf.close()
