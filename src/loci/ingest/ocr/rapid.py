"""The second OCR engine, for hard photos: RapidOCR (PP-OCR models on ONNX Runtime), optional.

Tesseract reads nothing of a noisy, blurred, low-contrast phone snap, where RapidOCR's neural
detector and recogniser read nearly all of it, at about ten times Tesseract's CPU per image and
~200 MB of OpenCV and models (bench/ocr_accuracy.py, docs/benchmarks-journal.md). So it is an extra,
`loci[ocr-photos]`, and only runs where Tesseract fails (see `choice.py`).

The `rapidocr` 3.x wheel carries its models inside the package (`rapidocr/models`) and loads them
from there: nothing is downloaded at run time. The engine is built once per process, on first
use, and one image is read at a time (a lock), so memory holds one engine and one image's
tensors however many threads read scanned pages.

RapidOCR returns one box (a quadrilateral, in pixels) and one score per text line; a line becomes
one `Word` whose text is the whole line, grouped into lines and paragraphs by position the way
Tesseract numbers them, so `layout.ocr_blocks` maps regions and confidences the same way.
"""

from __future__ import annotations

import importlib.util
import logging
import threading
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any

from loci.errors import ParseError
from loci.ingest.ocr.engine import Recognized, Word

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

ENGINE_NAME = "rapidocr"
_MAX_SIDE = 2000  # a larger image is shrunk to this many pixels on its longer side first
_DETECT_SIDE = 1280  # … and the text detector reads it at most this large

_lock = threading.Lock()
_engine: Any = None
calls = 0  # images read by RapidOCR in this process (tests check which path an image took)


@cache
def rapid_available() -> bool:
    """The `loci[ocr-photos]` extra is installed (the import itself waits until first use)."""
    return importlib.util.find_spec("rapidocr") is not None


def recognize_rapid(image: Image.Image) -> Recognized:
    """Lines RapidOCR reads in the image, as `Word`s (one per line) in reading order."""
    import numpy as np

    global calls
    array = np.asarray(image.convert("RGB"))
    with _lock:
        calls += 1
        try:
            output = _get_engine()(array)
        except ParseError:
            raise
        except Exception as error:  # noqa: BLE001 — any engine failure fails this image alone
            raise ParseError(f"OCR (RapidOCR) failed: {error}"[:240]) from None
    boxes = [] if output.boxes is None else [[tuple(p) for p in box] for box in output.boxes]
    words = lines_to_words(boxes, list(output.txts or ()), list(output.scores or ()))
    return Recognized(image.width, image.height, tuple(words))


def _get_engine() -> Any:
    global _engine
    if _engine is None:
        try:
            from rapidocr import RapidOCR
        except ImportError as error:
            raise ParseError(f"RapidOCR could not be loaded ({error})") from None
        log.info("loading RapidOCR (the models in its wheel)")
        # No line-angle classifier: on a blurred, tilted snap it turned an upright line upside
        # down (its reading to nonsense) and lost another, where without it all were read.
        # The detector reads the image at most _DETECT_SIDE on its longer side (RapidOCR's default
        # scales the *shorter* side up to 736): on the bench's photos the same accuracy at half
        # the CPU, and a bounded peak however large the photo (docs/benchmarks-journal.md).
        params = {"Global.log_level": "error", "Global.max_side_len": _MAX_SIDE}
        detect = {"Det.limit_type": "max", "Det.limit_side_len": _DETECT_SIDE}
        _engine = RapidOCR(params={**params, **detect, "Global.use_cls": False})
    return _engine


Box = Sequence[tuple[float, float]]


def lines_to_words(
    boxes: Sequence[Box], texts: Sequence[str], scores: Sequence[float]
) -> list[Word]:
    """Text lines with their boxes → `Word`s numbered by line and paragraph.

    RapidOCR may cut one printed line into pieces (a gap between words): a piece whose vertical
    middle lies within the previous piece's height continues its line. A new paragraph starts
    where the gap above a line is more than its own height (a blank line's worth)."""
    words: list[Word] = []
    paragraph, line = 0, 0
    previous: Word | None = None
    for box, text, score in zip(boxes, texts, scores, strict=False):
        text = text.strip()
        if not text:
            continue
        xs, ys = [p[0] for p in box], [p[1] for p in box]
        left, top = max(0, int(min(xs))), max(0, int(min(ys)))
        width, height = max(1, int(max(xs)) - left), max(1, int(max(ys)) - top)
        if previous is not None:
            middle = top + height / 2
            if not previous.top <= middle <= previous.top + previous.height:
                line += 1
                if top - (previous.top + previous.height) > height:
                    paragraph += 1
        confidence = max(0.0, min(1.0, float(score)))
        word = Word(text, 1, paragraph, line, left, top, width, height, confidence)
        words.append(word)
        previous = word
    return words
