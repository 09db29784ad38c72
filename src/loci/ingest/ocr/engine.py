"""The OCR engine: Tesseract, run as a subprocess, read back as words with boxes and confidences.

Tesseract (Debian's `tesseract-ocr`, `make ocr`) was chosen over RapidOCR's PP-OCR models by
measurement (bench/ocr_accuracy.py, docs/benchmarks-journal.md): the same accuracy on clean,
rotated and low-contrast text at a tenth of the CPU time per image, and ~24 MB installed instead
of ~200 MB of OpenCV and models. RapidOCR does read a noisy, blurred phone snap that Tesseract
does not: it is the optional second engine for those (rapid.py, choice.py).

Running it as a process (not a binding) keeps a crash or a runaway page out of the worker, and
the time limit is a plain `timeout`.

The image goes in as PNG on stdin; TSV comes out on stdout: one row per word with its block,
paragraph and line numbers, its box in pixels and a 0-100 confidence.
"""

from __future__ import annotations

import io
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from loci.errors import BudgetExceeded, ParseError

if TYPE_CHECKING:
    from PIL import Image

log = logging.getLogger(__name__)

ENGINE_NAME = "tesseract"
_SMALL_IMAGE = 1000  # pixels on the longer side


@dataclass(frozen=True)
class Word:
    text: str
    block: int  # Tesseract's (block, paragraph, line) numbers group words into lines
    paragraph: int
    line: int
    left: int
    top: int
    width: int
    height: int
    confidence: float  # 0-1


@dataclass(frozen=True)
class Recognized:
    width: int
    height: int
    words: tuple[Word, ...]


class OcrUnavailable(ParseError):
    """No OCR engine on this machine: the text that needs one cannot be read."""

    code = "ocr_unavailable"


@cache
def tesseract_path() -> str | None:
    return shutil.which("tesseract")


def ocr_available() -> bool:
    return tesseract_path() is not None


# What a file read without OCR says to do: its text is there to read once an engine is, and
# nothing reads it again by itself.
NO_ENGINE = (
    "no OCR engine is installed — install Tesseract (`make ocr`, or Debian's tesseract-ocr), then "
    "`loci reprocess` the file to read it"
)


def recognize(image: Image.Image, *, timeout_s: float = 60.0, language: str = "eng") -> Recognized:
    """Words Tesseract reads in the image, in its reading order."""
    binary = tesseract_path()
    if binary is None:
        raise OcrUnavailable(
            "this needs OCR, and no OCR engine is installed (Debian: apt-get install tesseract-ocr)"
        )
    buffer = io.BytesIO()
    _upscaled(image).save(buffer, format="PNG", compress_level=1)  # fast: it is read once, at once
    # One thread per process: on a small machine OpenMP threads only fight the embedder and
    # the other workers, and Tesseract's own parallelism gains little on one page.
    env = {**os.environ, "OMP_THREAD_LIMIT": "1"}
    try:
        result = subprocess.run(
            [binary, "stdin", "stdout", "-l", language, "--psm", "3", "tsv"],
            input=buffer.getvalue(),
            capture_output=True,
            timeout=timeout_s,
            env=env,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise BudgetExceeded(f"OCR of one image took longer than {timeout_s:g} s") from None
    if result.returncode != 0:
        reason = result.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or ["?"]
        raise ParseError(f"OCR failed: {reason[0][:200]}")
    scale = _upscaled_factor(image)
    words = _words(result.stdout)
    if scale != 1:
        words = [_scaled(w, scale) for w in words]
    return Recognized(image.width, image.height, tuple(words))


def _upscaled_factor(image: Image.Image) -> int:
    # Tesseract reads best with letters at least ~20 px tall; a small screenshot's 11 px text is
    # read far better at twice the size. Only small images are enlarged, so memory stays bounded.
    return 2 if max(image.width, image.height) < _SMALL_IMAGE else 1


def _upscaled(image: Image.Image) -> Image.Image:
    from PIL import Image

    factor = _upscaled_factor(image)
    if factor == 1:
        return image
    return image.resize((image.width * factor, image.height * factor), Image.Resampling.LANCZOS)


def _scaled(word: Word, factor: int) -> Word:
    return Word(
        word.text,
        word.block,
        word.paragraph,
        word.line,
        word.left // factor,
        word.top // factor,
        word.width // factor,
        word.height // factor,
        word.confidence,
    )


def _words(tsv: bytes) -> list[Word]:
    words = []
    for row in tsv.decode("utf-8", "replace").splitlines()[1:]:
        cells = row.split("\t")
        if len(cells) != 12 or cells[0] != "5":
            continue
        text = cells[11].strip()
        if not text:
            continue
        try:
            block, paragraph, line = int(cells[2]), int(cells[3]), int(cells[4])
            left, top, width, height = (int(c) for c in cells[6:10])
            confidence = max(0.0, min(100.0, float(cells[10]))) / 100
        except ValueError:
            continue
        words.append(Word(text, block, paragraph, line, left, top, width, height, confidence))
    return words
