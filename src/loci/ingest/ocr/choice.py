"""Which engine's reading of an image to keep: Tesseract's, or RapidOCR's where Tesseract fails.

Tesseract reads every image first: it is fast and reads clean scans, screenshots and fair photos
as well as RapidOCR does. Its reading is *weak* when it found no text, when its mean confidence is
under `LOW_OCR_CONFIDENCE`, or when it found too few characters for the image's size (a phone
photo of a whiteboard read as three stray letters). Only then, and only when RapidOCR is installed
(`loci[ocr-photos]`) and the fallback is on, RapidOCR reads the image too, and the reading with
more confident text (characters weighted by their confidence) is kept.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

from loci.ingest.ocr.engine import ENGINE_NAME, Recognized, recognize
from loci.ingest.ocr.rapid import ENGINE_NAME as RAPID_NAME
from loci.ingest.ocr.rapid import rapid_available, recognize_rapid
from loci.models import LOW_OCR_CONFIDENCE

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

# Fewer characters than this per megapixel is "too few for the area": a 0.4-megapixel screenshot
# needs 8, a scanned letter page at 200 dpi (3.7 megapixels) 74, a 12-megapixel photo 240.
MIN_CHARS_PER_MEGAPIXEL = 20
# RapidOCR cannot be stopped mid-image: it is not started with less time than this left.
_RAPID_MIN_SECONDS = 5.0

_HINT = "install loci[ocr-photos] to read hard photos"
_OFF = "the OCR fallback for hard photos is turned off"


@dataclass(frozen=True)
class Reading:
    recognized: Recognized
    engine: str  # the engine whose words were kept


def fallback_ready(enabled: bool) -> bool:
    """Whether a weak Tesseract reading will be retried with RapidOCR."""
    return enabled and rapid_available()


def fallback_note(enabled: bool) -> str:
    """What a "no text found" warning adds: how hard photos could be read, if they are not."""
    if fallback_ready(enabled):
        return ""
    return f" ({_OFF})" if rapid_available() else f" ({_HINT})"


def read_image(image: Image.Image, *, timeout_s: float = 60.0, fallback: bool = True) -> Reading:
    """The better reading of the image (see the module doc); raises what Tesseract raises."""
    started = time.monotonic()
    first = recognize(image, timeout_s=timeout_s)
    if not fallback_ready(fallback) or not is_weak(first):
        return Reading(first, ENGINE_NAME)
    left = timeout_s - (time.monotonic() - started)
    if left < _RAPID_MIN_SECONDS:
        log.info("OCR fallback skipped: %.1f s left of the time budget", left)
        return Reading(first, ENGINE_NAME)
    second = recognize_rapid(image)
    if confident_chars(second) > confident_chars(first):
        return Reading(second, RAPID_NAME)
    return Reading(first, ENGINE_NAME)


def is_weak(recognized: Recognized) -> bool:
    chars = sum(_length(w.text) for w in recognized.words)
    if chars == 0:
        return True
    mean = confident_chars(recognized) / chars
    megapixels = recognized.width * recognized.height / 1e6
    return mean < LOW_OCR_CONFIDENCE or chars < MIN_CHARS_PER_MEGAPIXEL * megapixels


def confident_chars(recognized: Recognized) -> float:
    """Characters read, each weighted by the engine's confidence in its word or line."""
    return sum(w.confidence * _length(w.text) for w in recognized.words)


def _length(text: str) -> int:
    """Characters that are not spaces (Tesseract's words have none, RapidOCR's lines do), and
    none at all for text with no letter or digit (speckles read as punctuation)."""
    if not any(c.isalnum() for c in text):
        return 0
    return sum(1 for c in text if not c.isspace())
