"""OCR: reading the text in images and in PDF pages that have no text layer.

    images.open_image      untrusted bytes → a decoded first frame, under a pixel budget
    engine.recognize       an image → words with boxes and confidences (Tesseract)
    rapid.recognize_rapid  … the same from RapidOCR (optional extra `loci[ocr-photos]`)
    choice.read_image      Tesseract, then RapidOCR where Tesseract's reading is weak
    layout.ocr_blocks      words → paragraph blocks with lines, region and confidence

Parsers call these; nothing here knows about documents, stores, settings or parsers
(`loci.ingest.ocr_preview` tells whether adding a file will run OCR).
"""

from loci.ingest.ocr.engine import ENGINE_NAME, OcrUnavailable, ocr_available, recognize
from loci.ingest.ocr.images import IMAGE_EXTENSIONS, open_image, sniff_image
from loci.ingest.ocr.layout import ocr_blocks

__all__ = [
    "ENGINE_NAME",
    "IMAGE_EXTENSIONS",
    "OcrUnavailable",
    "ocr_available",
    "ocr_blocks",
    "open_image",
    "recognize",
    "sniff_image",
]
