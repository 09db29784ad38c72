"""Hard photos: where Tesseract reads nothing, RapidOCR (`loci[ocr-photos]`) reads them.

The "phone photo" is made here with Pillow the way bench/ocr_accuracy.py makes its photo
condition (small grey text on grey, turned 5 degrees, blurred, pixel noise): Tesseract reads
nothing of it. One small image, so each RapidOCR reading takes a few seconds on a small machine.
"""

from __future__ import annotations

import io
import random
import shutil
from pathlib import Path

import pytest
from PIL import Image, ImageChops, ImageDraw, ImageFilter, ImageFont

from loci.config import Settings
from loci.embed.base import Embedder
from loci.ingest.ocr import choice, rapid
from loci.ingest.ocr.engine import recognize
from loci.ingest.parsers import ParseBudgets, parse
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support.services import make_service

pytestmark = [
    pytest.mark.skipif(shutil.which("tesseract") is None, reason="Tesseract is not installed"),
    pytest.mark.skipif(not rapid.rapid_available(), reason="loci[ocr-photos] is not installed"),
]

PHOTO_LINES = ["Move the quokka deployment to Thursday", "Budget owner Ingrid"]


def phone_photo(lines: list[str]) -> Image.Image:
    """bench/ocr_accuracy.py's "photo" condition, on a smaller canvas."""
    paper = 200
    image = Image.new("L", (620, 50 + 32 * len(lines)), paper)
    font = ImageFont.load_default(size=20)
    ImageDraw.Draw(image).multiline_text((30, 25), "\n".join(lines), fill=90, font=font, spacing=12)
    image = image.rotate(5, expand=True, fillcolor=paper, resample=Image.Resampling.BICUBIC)
    image = image.filter(ImageFilter.GaussianBlur(1))
    # Pillow's effect_noise(size, 24), centred on 128, but seeded: the same photo every run
    rng = random.Random(8)
    values = (
        min(255, max(0, round(rng.gauss(128, 24)))) for _ in range(image.width * image.height)
    )
    noise = Image.frombytes("L", image.size, bytes(values))
    return ImageChops.add(image, noise, scale=1.0, offset=-128)


def clean_image(lines: list[str]) -> Image.Image:
    image = Image.new("L", (700, 40 + 40 * len(lines)), 255)
    font = ImageFont.load_default(size=26)
    ImageDraw.Draw(image).multiline_text((30, 20), "\n".join(lines), fill=0, font=font, spacing=12)
    return image


def png(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def names_found(loci: Loci, query: str) -> list[str]:
    return [
        h.citation.name for h in loci.searching.search(loci.brain(), SearchRequest(query, limit=10))
    ]


def test_the_photo_is_beyond_tesseract() -> None:
    # the premise of every test below: Tesseract alone reads no word of the photo
    words = {w.text.lower() for w in recognize(phone_photo(PHOTO_LINES)).words}
    assert not words & {"quokka", "deployment", "thursday", "budget", "ingrid"}


def test_a_phone_photo_is_found_by_search_with_the_fallback_and_not_without(
    tmp_path: Path, embedder: Embedder
) -> None:
    photo = png(phone_photo(PHOTO_LINES))
    for fallback, home in ((True, "on"), (False, "off")):
        loci = make_service(tmp_path / home, embedder, ocr_fallback=fallback)
        try:
            brain = loci.brain()
            added = loci.library.add_bytes(brain, "whiteboard.png", photo)
            (done,) = loci.library.wait_for(brain, [added.document.id])
            assert done.status == "ready", done.status_reason
            found = names_found(loci, "quokka deployment")
            if fallback:
                assert found == ["whiteboard.png"]
                (hit,) = loci.searching.search(brain, SearchRequest("quokka deployment", limit=10))
                assert "quokka deployment" in hit.text.lower()
                assert (
                    hit.citation.location.region is not None
                )  # where on the photo, as with Tesseract
                assert hit.citation.location.ocr_confidence is not None
                assert hit.citation.location.ocr_confidence > 0.6
            else:
                assert found == []
                assert "no text found in this image" in (done.status_reason or "")
                assert "turned off" in (done.status_reason or "")
        finally:
            loci.store.close()


def test_the_setting_reads_off_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    assert Settings().ocr_fallback is True
    monkeypatch.setenv("LOCI_OCR_FALLBACK", "off")
    assert Settings().ocr_fallback is False


def test_a_clean_image_takes_the_tesseract_path_only() -> None:
    before = rapid.calls
    doc = parse(
        png(clean_image(["Invoice 4471 for the greenhouse glass"])), "a.png", ParseBudgets()
    )
    assert "greenhouse glass" in doc.text
    assert doc.metadata["ocr"]["engine"] == "tesseract"
    assert rapid.calls == before


def test_a_scanned_photo_page_is_read_by_the_fallback_and_cites_its_page() -> None:
    before = rapid.calls
    pages = [clean_image(["Minutes of the allotment committee"]), phone_photo(PHOTO_LINES)]
    buffer = io.BytesIO()
    pages[0].save(buffer, format="PDF", save_all=True, append_images=pages[1:], resolution=100)
    doc = parse(buffer.getvalue(), "minutes.pdf", ParseBudgets(ocr_processes=1))
    assert rapid.calls == before + 1  # the clean page took Tesseract's reading
    assert [b.location.page for b in doc.blocks if "allotment" in b.text] == [1]
    assert [b.location.page for b in doc.blocks if "quokka" in b.text.lower()] == [2]
    assert doc.metadata["ocr"]["engine"] == "rapidocr+tesseract"


def test_without_the_extra_the_no_text_warning_says_how_to_read_photos(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(choice, "rapid_available", lambda: False)
    before = rapid.calls
    doc = parse(png(phone_photo(PHOTO_LINES)), "snap.png", ParseBudgets())
    assert doc.blocks == ()
    assert doc.warnings == (
        "no text found in this image (install loci[ocr-photos] to read hard photos)",
    )
    assert rapid.calls == before


def test_rapidocr_lines_become_lines_and_paragraphs() -> None:
    def box(left: int, top: int, right: int, bottom: int) -> list[tuple[float, float]]:
        return [(left, top), (right, top), (right, bottom), (left, bottom)]

    words = rapid.lines_to_words(
        [box(10, 10, 200, 40), box(210, 12, 260, 38), box(10, 50, 180, 80), box(10, 160, 90, 190)],
        ["Sprint goals", "42", "ship the pelican", "Owner"],
        [0.99, 0.9, 0.95, 0.8],
    )
    # a line cut in two pieces stays one line; a blank line's gap starts a paragraph
    assert [(w.text, w.paragraph, w.line) for w in words] == [
        ("Sprint goals", 0, 0),
        ("42", 0, 0),
        ("ship the pelican", 0, 1),
        ("Owner", 1, 2),
    ]
    assert (words[0].left, words[0].top, words[0].width, words[0].height) == (10, 10, 190, 30)
