"""Images (photos, screenshots, scans): decoded under limits, then read by OCR.

The text comes back as paragraph blocks with their lines and regions on the image (`page` is None:
an image is one surface), so a citation can say where in the picture a passage is. With no OCR
engine installed the image is still stored and indexed by name, with a warning that says why it
has no text; a caption (when a vision model is configured) is added later, by the indexer.
"""

from __future__ import annotations

import logging

from loci.ingest.ocr import ocr_available, ocr_blocks, open_image, sniff_image
from loci.ingest.ocr.choice import fallback_note, read_image
from loci.ingest.ocr.engine import NO_ENGINE
from loci.ingest.ocr.layout import LOW_CONFIDENCE, low_confidence
from loci.ingest.parsers import Deadline, ParseBudgets
from loci.ingest.progress import report
from loci.models import ParsedDocument

log = logging.getLogger(__name__)


def parse_image(data: bytes, budgets: ParseBudgets) -> ParsedDocument:
    deadline = Deadline(budgets, "image")
    image = open_image(data, budgets.max_image_pixels)
    metadata: dict[str, object] = {
        "image": {"format": sniff_image(data) or "", "width": image.width, "height": image.height}
    }
    if not ocr_available():
        return ParsedDocument(
            title=None,
            blocks=(),
            metadata=metadata,
            warnings=(f"the text in this image was not read: {NO_ENGINE}",),
        )
    fallback = budgets.ocr_fallback
    report("ocr", 0, 1)
    reading = read_image(image, timeout_s=deadline.remaining(), fallback=fallback)
    blocks = ocr_blocks(reading.recognized)
    uncertain = low_confidence(blocks)
    metadata["ocr"] = {"engine": reading.engine, "blocks": len(blocks), "low_confidence": uncertain}
    warnings = []
    if not blocks:
        warnings.append(f"no text found in this image{fallback_note(fallback)}")
    if uncertain:
        warnings.append(
            f"{uncertain} of {len(blocks)} passages read with low OCR confidence"
            f" (below {LOW_CONFIDENCE:.0%}; marked in their citations)"
        )
    return ParsedDocument(
        title=None, blocks=tuple(blocks), metadata=metadata, warnings=tuple(warnings)
    )
