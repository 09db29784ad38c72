"""Will adding this file run OCR? A cheap answer for previews (the `add --dry-run` preflight).

It looks at the bytes the way the parsers will: an image is always read by OCR; a PDF is when
some page has too little text for its area and an image on it (a scan). The PDF is opened, but
no page is rendered. False when no OCR engine is installed, since then none will run.

It sits beside the parsers and the OCR package, not inside OCR: it asks the PDF parser which
pages are scans, and the PDF parser itself calls OCR.
"""

from __future__ import annotations

from loci.errors import ParseError
from loci.ingest.ocr.engine import ocr_available
from loci.ingest.ocr.images import sniff_image


def needs_ocr(data: bytes, name: str = "") -> bool:
    """True when parsing these bytes will run OCR on at least one image or page.

    `name` is accepted for symmetry with `parse` but the bytes decide (as they do there)."""
    if not ocr_available():
        return False
    return bool(ocr_targets(data))


def ocr_targets(data: bytes) -> list[int]:
    """What OCR would read: [1] for an image, the scanned pages' numbers for a PDF, else []."""
    head = data[:1024]
    if sniff_image(head) is not None:
        return [1]
    if b"%PDF-" in head:
        from loci.ingest.parsers.pdf import scanned_pages

        try:
            return scanned_pages(data)
        except ParseError:
            return []  # the parse itself will fail, with its reason, before any OCR
    return []
