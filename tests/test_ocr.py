"""OCR: photos and scans are searchable as text, with page and region in their citations.

Every image here is made by the test with Pillow (its bundled font), small so OCR takes a fraction
of a second; the scanned PDF is those images saved as PDF pages, with no text layer at all. All of
it goes through the real service: add → worker → parse (Tesseract) → chunk → embed → search.
"""

from __future__ import annotations

import base64
import io
import shutil
import struct
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PIL import Image, ImageDraw, ImageFilter, ImageFont

from loci.answer.sources import Source
from loci.app import build_chat, service_settings
from loci.config import Settings
from loci.embed.base import Embedder
from loci.errors import BudgetExceeded, NoParser, ParseError
from loci.ingest.ocr.images import heif_supported
from loci.ingest.ocr_preview import needs_ocr
from loci.ingest.parsers import ParseBudgets, parse, supported_extensions
from loci.models import Hit, region_words
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore
from tests.support import pdf_files
from tests.support.image_files import scanned_pdf, text_image
from tests.support.live_server import LiveServer
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.services import make_service

pytestmark = pytest.mark.skipif(
    shutil.which("tesseract") is None, reason="Tesseract is not installed (make ocr)"
)

BUDGETS = ParseBudgets()


def encoded(image: Image.Image, fmt: str) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format=fmt)
    return buffer.getvalue()


def find(loci: Loci, query: str, name: str) -> Hit:
    hits = loci.searching.search(loci.brain(), SearchRequest(query, limit=10))
    for hit in hits:
        if hit.citation.name == name:
            return hit
    raise AssertionError(f"{name} not found for {query!r}: {[h.citation.name for h in hits]}")


# --- parsing ---------------------------------------------------------------------------------


def test_image_formats_are_supported() -> None:
    assert {".png", ".jpg", ".jpeg", ".webp", ".tiff", ".gif", ".bmp"} <= set(
        supported_extensions()
    )


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "TIFF", "GIF", "BMP"])
def test_each_image_format_is_read_by_ocr(fmt: str) -> None:
    data = encoded(text_image(["Quokka census tomorrow"]), fmt)
    doc = parse(data, f"note.{fmt.lower()}", BUDGETS)
    assert "Quokka census tomorrow" in doc.text
    assert doc.metadata["image"]["format"] == fmt
    assert needs_ocr(data, f"note.{fmt.lower()}")


def test_ocr_text_keeps_its_region_and_confidence() -> None:
    # one line near the top, one near the bottom of a tall image
    image = Image.new("RGB", (900, 900), "white")
    font = ImageFont.load_default(size=28)
    draw = ImageDraw.Draw(image)
    draw.text((30, 40), "Harbour master telephone", fill="black", font=font)
    draw.text((30, 820), "Lighthouse keeper rota", fill="black", font=font)
    doc = parse(encoded(image, "PNG"), "board.png", BUDGETS)
    top = next(b for b in doc.blocks if "Harbour" in b.text)
    bottom = next(b for b in doc.blocks if "Lighthouse" in b.text)
    assert top.location.region is not None and bottom.location.region is not None
    assert (
        top.location.region[1] < 0.1 and bottom.location.region[1] > 0.85
    )  # fractions of the height
    assert 0 < top.location.region[0] < top.location.region[2] <= 1
    assert top.location.ocr_confidence is not None and top.location.ocr_confidence > 0.8
    assert top.location.line_start == 1 and bottom.location.line_start == 2


def test_scanned_pdf_pages_are_read_and_text_pages_are_not_ocred_twice() -> None:
    pages = [text_image(["Page one talks of otters"]), text_image(["Page two is on walruses"])]
    doc = parse(scanned_pdf(pages), "scan.pdf", BUDGETS)
    assert doc.metadata["ocr"]["pages"] == [1, 2]
    assert [b.location.page for b in doc.blocks if "otters" in b.text] == [1]
    assert [b.location.page for b in doc.blocks if "walruses" in b.text] == [2]
    assert needs_ocr(scanned_pdf(pages), "scan.pdf")

    # pages with a text layer and an image on them (figures) are read as text, not OCRed
    text_pdf = pdf_files.text_pdf(2, words_per_page=300, image_bytes=5000)
    parsed = parse(text_pdf, "report.pdf", BUDGETS)
    assert "ocr" not in parsed.metadata
    assert {b.location.page for b in parsed.blocks} == {1, 2}
    assert not needs_ocr(text_pdf, "report.pdf")


@pytest.mark.attack
def test_a_decompression_bomb_fails_on_its_header() -> None:
    # 64 megapixels of one colour: a few kilobytes on disk, 64 MB and up once decoded
    bomb = encoded(Image.new("1", (8000, 8000)), "PNG")
    assert len(bomb) < 100_000
    with pytest.raises(BudgetExceeded, match="megapixel budget"):
        parse(bomb, "bomb.png", BUDGETS)


def test_a_lying_header_far_past_pillows_own_limit_fails_too() -> None:
    # a PNG that declares 100,000 x 100,000 pixels; its data would never decode that far
    def chunk(kind: bytes, body: bytes) -> bytes:
        crc = zlib.crc32(kind + body) & 0xFFFFFFFF
        return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)

    header = struct.pack(">IIBBBBB", 100_000, 100_000, 8, 0, 0, 0, 0)
    data = (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(b"\x00" * 1000))
        + chunk(b"IEND", b"")
    )
    with pytest.raises(BudgetExceeded, match="pixel budget"):
        parse(data, "huge.png", BUDGETS)


def test_corrupt_and_disguised_images_fail_with_reasons() -> None:
    truncated = encoded(text_image(["Broken picture"]), "PNG")[:400]
    with pytest.raises(ParseError, match="corrupt PNG image"):
        parse(truncated, "broken.png", BUDGETS)
    with pytest.raises(ParseError, match="not a JPG image"):
        parse(b"this is a shopping list, not a photo", "list.jpg", BUDGETS)


@pytest.mark.skipif(heif_supported(), reason="a HEIC decoder is installed here")
def test_heic_without_a_decoder_says_what_is_missing() -> None:
    iphone_photo = b"\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic" + b"\x00" * 200
    with pytest.raises(NoParser, match="no decoder for HEIC images here"):
        parse(iphone_photo, "IMG_0001.HEIC", BUDGETS)


def test_a_text_file_that_starts_with_bm_is_not_a_bitmap() -> None:
    doc = parse(b"BMW service booked for the ninth of May", "car.txt", BUDGETS)
    assert "BMW service" in doc.text


# --- through the service ---------------------------------------------------------------------


@pytest.mark.both_backends  # region and confidence go through the store
def test_images_are_found_by_search(loci: Loci) -> None:
    brain = loci.brain()
    files = {
        "whiteboard.png": encoded(
            text_image(["Sprint goals: migrate the pelican database", "Owner: Priya"]), "PNG"
        ),
        "receipt.jpg": encoded(text_image(["Ironmonger receipt", "Brass hinges 4.20"]), "JPEG"),
    }
    ids = [loci.library.add_bytes(brain, name, data).document.id for name, data in files.items()]
    for document in loci.library.wait_for(brain, ids):
        assert document.status == "ready", (document.name, document.status_reason)

    hit = find(loci, "pelican database migration", "whiteboard.png")
    assert "pelican database" in hit.text
    assert hit.citation.location.region is not None
    assert (
        hit.citation.location.ocr_confidence is not None
        and hit.citation.location.ocr_confidence > 0.8
    )
    assert region_words(hit.citation.location.region).startswith("top")
    assert "Brass hinges" in find(loci, "brass hinges receipt", "receipt.jpg").text


def test_scanned_pdf_cites_the_page_the_answer_is_on(loci: Loci) -> None:
    brain = loci.brain()
    pages = [
        text_image(["Tenancy agreement", "The rent is due on the first day"]),
        text_image(["Schedule of repairs", "The landlord replaces the boiler flue"]),
    ]
    added = loci.library.add_bytes(brain, "lease-scan.pdf", scanned_pdf(pages))
    (document,) = loci.library.wait_for(brain, [added.document.id])
    assert document.status == "ready", document.status_reason

    hit = find(loci, "who replaces the boiler flue", "lease-scan.pdf")
    assert hit.citation.location.page == 2
    assert "boiler flue" in hit.text
    assert find(loci, "when is the rent due", "lease-scan.pdf").citation.location.page == 1


@pytest.mark.attack
def test_a_bomb_fails_alone_while_the_rest_of_the_batch_lands(loci: Loci) -> None:
    brain = loci.brain()
    bomb = loci.library.add_bytes(brain, "bomb.png", encoded(Image.new("1", (8000, 8000)), "PNG"))
    broken = loci.library.add_bytes(brain, "broken.gif", b"GIF89a" + b"\x00" * 40)
    good = loci.library.add_bytes(
        brain, "gate.png", encoded(text_image(["Gate code is walnut seven"]), "PNG")
    )
    done = {
        d.name: d
        for d in loci.library.wait_for(
            brain, [bomb.document.id, broken.document.id, good.document.id]
        )
    }
    assert done["bomb.png"].status == "failed"
    assert "megapixel budget" in (done["bomb.png"].status_reason or "")
    assert done["broken.gif"].status == "failed"
    assert "corrupt GIF image" in (done["broken.gif"].status_reason or "")
    assert done["gate.png"].status == "ready"
    assert "walnut" in find(loci, "gate code walnut", "gate.png").text


# --- captions from a vision model ------------------------------------------------------------


@pytest.fixture
def vision_llm() -> Iterator[ScriptedLLM]:
    llm = ScriptedLLM().start()
    yield llm
    llm.stop()


def service_with_chat(tmp_path: Path, embedder: Embedder, llm: ScriptedLLM, vision: bool) -> Loci:
    settings = Settings(
        home=tmp_path / "home",
        llm_base_url=llm.base_url,
        llm_model="scripted-vision",
        llm_vision=vision,
        job_retry_base_s=0.01,
    )
    settings.home.mkdir(parents=True)
    return Loci(
        store=SqliteStore(settings.database_path),
        blobs=BlobStore(settings.blob_dir),
        embedder=lambda: embedder,
        settings=service_settings(settings),
        chat=lambda: build_chat(settings),
    )


def sent_images(request: dict[str, Any]) -> list[Image.Image]:
    """The images a chat request carried, decoded from their data: URLs."""
    images: list[Image.Image] = []
    for message in request["messages"]:
        if isinstance(message["content"], list):
            for part in message["content"]:
                if part["type"] == "image_url":
                    url = part["image_url"]["url"]
                    assert url.startswith("data:image/jpeg;base64,")
                    raw = base64.b64decode(url.split(",", 1)[1])
                    images.append(Image.open(io.BytesIO(raw)))
    return images


def test_pictures_get_captions_indexed_beside_their_text(
    tmp_path: Path, embedder: Embedder, vision_llm: ScriptedLLM
) -> None:
    captions = iter(
        [
            "A photo of a red bicycle leaning against a blue garden shed.",
            "A scanned page with a bar chart of rainfall rising towards autumn.",
            "A scanned page with a sketch of a heron standing in reeds.",
        ]
    )
    vision_llm.responder = lambda request: Reply(next(captions))
    loci = service_with_chat(tmp_path, embedder, vision_llm, vision=True)
    try:
        brain = loci.brain()
        photo = Image.new("RGB", (640, 480), "skyblue")
        ImageDraw.Draw(photo).ellipse((200, 150, 440, 390), fill="red")
        first = loci.library.add_bytes(brain, "garden.jpg", encoded(photo, "JPEG"))
        (done,) = loci.library.wait_for(brain, [first.document.id])
        assert done.status == "ready", done.status_reason
        scan = scanned_pdf(
            [text_image(["Rain gauge log for spring"]), text_image(["Rain gauge log for autumn"])]
        )
        second = loci.library.add_bytes(brain, "rain.pdf", scan)
        (done,) = loci.library.wait_for(brain, [second.document.id])
        assert done.status == "ready", done.status_reason

        # one request per picture, each carrying the picture: the photo, then each scanned page
        images = [img for request in vision_llm.requests for img in sent_images(request)]
        assert len(vision_llm.requests) == len(images) == 3
        assert images[0].size == (640, 480)
        sky, ball = images[0].getpixel((10, 10)), images[0].getpixel((320, 270))
        assert isinstance(sky, tuple) and isinstance(ball, tuple)  # RGB pixels
        assert sky[2] > 180 and ball[0] > 180 and ball[2] < 90  # blue sky, red disc
        assert images[1].height > images[1].width * 0.2  # a rendered page, not a thumbnail

        bike = find(loci, "red bicycle by the shed", "garden.jpg")
        assert bike.text.startswith("Picture: A photo of a red bicycle")
        assert find(loci, "bar chart of rainfall", "rain.pdf").citation.location.page == 1
        heron = find(loci, "sketch of a heron in the reeds", "rain.pdf")
        assert (
            heron.citation.location.page == 2 and "autumn" in heron.text
        )  # beside page 2's OCR text
    finally:
        loci.store.close()


def test_without_vision_no_picture_is_sent_anywhere(
    tmp_path: Path, embedder: Embedder, vision_llm: ScriptedLLM
) -> None:
    loci = service_with_chat(tmp_path, embedder, vision_llm, vision=False)
    try:
        brain = loci.brain()
        added = loci.library.add_bytes(
            brain, "memo.png", encoded(text_image(["Memo about the tandem bicycle"]), "PNG")
        )
        (done,) = loci.library.wait_for(brain, [added.document.id])
        assert done.status == "ready"
        assert vision_llm.requests == []
        assert "Picture:" not in find(loci, "tandem bicycle memo", "memo.png").text
    finally:
        loci.store.close()


def test_a_failing_vision_model_leaves_the_ocr_text(
    tmp_path: Path, embedder: Embedder, vision_llm: ScriptedLLM
) -> None:
    vision_llm.responder = lambda request: Reply(status=400, error_message="images not supported")
    loci = service_with_chat(tmp_path, embedder, vision_llm, vision=True)
    try:
        brain = loci.brain()
        added = loci.library.add_bytes(
            brain, "sign.png", encoded(text_image(["Beware of the geese"]), "PNG")
        )
        (done,) = loci.library.wait_for(brain, [added.document.id])
        assert done.status == "ready"
        assert "no picture caption" in (done.status_reason or "")
        assert "geese" in find(loci, "beware geese", "sign.png").text
    finally:
        loci.store.close()


def test_without_an_engine_images_and_scans_say_why_they_have_no_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loci.ingest.ocr import engine

    monkeypatch.setattr(engine, "tesseract_path", lambda: None)
    image = encoded(text_image(["Unread words"]), "PNG")
    doc = parse(image, "photo.png", BUDGETS)
    assert doc.blocks == ()
    advice = "install Tesseract (`make ocr`, or Debian's tesseract-ocr), then `loci reprocess`"
    (warning,) = doc.warnings
    assert warning.startswith("the text in this image was not read: no OCR engine is installed")
    assert advice in warning  # nothing reads it again by itself
    assert not needs_ocr(image, "photo.png")  # nothing will run
    scan = parse(scanned_pdf([text_image(["Unread page"])] * 2), "scan.pdf", BUDGETS)
    assert scan.blocks == ()
    (said,) = [w for w in scan.warnings if w.startswith("2 scanned page(s) without text")]
    assert "were not read: no OCR engine is installed" in said and advice in said


@pytest.mark.both_backends  # region and confidence go through the store
def test_low_confidence_text_is_kept_and_marked(
    tmp_path: Path, embedder: Embedder, database_url: str | None
) -> None:
    # a blurred grey line (a smudged carbon copy): Tesseract half-reads it, unsure (RapidOCR,
    # when installed, reads nothing of it: the fallback is off here to keep the test quick)
    smudged = Image.new("L", (1200, 200), 200)
    font = ImageFont.load_default(size=18)
    ImageDraw.Draw(smudged).text(
        (20, 40), "Smudged carbon copy of the delivery note", fill=80, font=font
    )
    data = encoded(smudged.filter(ImageFilter.GaussianBlur(2.0)), "PNG")
    doc = parse(data, "carbon.png", ParseBudgets(ocr_fallback=False))
    (block,) = doc.blocks
    assert "carbon" in block.text.lower()  # kept, however uncertain
    assert block.location.ocr_confidence is not None and block.location.ocr_confidence < 0.6
    assert any("low OCR confidence" in w for w in doc.warnings)

    loci = make_service(tmp_path / "home", embedder, database_url, ocr_fallback=False)
    try:
        brain = loci.brain()
        added = loci.library.add_bytes(brain, "carbon.png", data)
        (done,) = loci.library.wait_for(brain, [added.document.id])
        assert done.status == "ready" and "low OCR confidence" in (done.status_reason or "")
        hit = find(loci, "carbon copy", "carbon.png")
        assert (
            hit.citation.location.ocr_confidence is not None
            and hit.citation.location.ocr_confidence < 0.6
        )
        assert "OCR uncertain" in Source(1, hit, brain.name).label()
    finally:
        loci.store.close()


def test_a_text_page_mostly_covered_by_a_picture_gets_a_caption_too(
    tmp_path: Path, embedder: Embedder, vision_llm: ScriptedLLM
) -> None:
    vision_llm.responder = lambda request: Reply("A site plan of the allotment with six beds.")
    pages = [
        pdf_files.text_lines(
            [
                "Allotment society minutes",
                "Members agreed the water rota for the summer and thanked the treasurer.",
                "The shed roof will be mended before the autumn storms arrive.",
            ]
        ),
        pdf_files.text_lines(
            [
                "Figure 1: the new layout, as drawn by the secretary after the spring meeting",
                "of the allotment society, with the beds renumbered from the gate.",
            ],
            top=760,
        ),
    ]
    pdf = pdf_files.make_pdf(pages, image_bytes=10_000)
    # The fixture draws its image 200 pt square on every page; on page 2 it is blown up to
    # cover most of the page (same byte length, so the cross-reference table stays right).
    small, large = b"q 200 0 0 200 300 40 cm", b"q 500 0 0 600 050 40 cm"
    first = pdf.index(small)
    pdf = pdf[: first + 1] + pdf[first + 1 :].replace(small, large, 1)
    parsed = parse(pdf, "minutes.pdf", BUDGETS)
    assert parsed.metadata["figure_pages"] == [2] and "ocr" not in parsed.metadata

    loci = service_with_chat(tmp_path, embedder, vision_llm, vision=True)
    try:
        brain = loci.brain()
        added = loci.library.add_bytes(brain, "minutes.pdf", pdf)
        (done,) = loci.library.wait_for(brain, [added.document.id])
        assert done.status == "ready", done.status_reason
        assert len(vision_llm.requests) == 1  # page 1 is text with a small figure: no caption
        (image,) = sent_images(vision_llm.requests[0])
        assert image.mode == "RGB"  # rendered in colour for the model, unlike OCR's greyscale
        plan = find(loci, "site plan of the allotment beds", "minutes.pdf")
        assert plan.citation.location.page == 2 and "Figure 1" in plan.text
    finally:
        loci.store.close()


@pytest.mark.both_backends  # region and confidence go through the store
def test_the_api_cites_page_and_region_of_ocr_text(server: LiveServer) -> None:
    page_one = text_image(["Recipe card for damson jam"])
    page_two = Image.new("RGB", (900, 900), "white")
    ImageDraw.Draw(page_two).text(
        (470, 820), "Boil for twelve minutes", fill="black", font=ImageFont.load_default(size=28)
    )
    with server.client() as api:
        assert api.post("/brains", json={"name": "kitchen"}).status_code == 201
        upload = ("jam.pdf", scanned_pdf([page_one, page_two]))
        (result,) = api.post("/brains/kitchen/files", files={"files": upload}).json()["results"]
        doc = server.wait_ready(api, "kitchen", result["document"]["id"])
        assert doc["status"] == "ready", doc["status_reason"]
        hits = api.post("/brains/kitchen/search", json={"query": "how long to boil"}).json()["hits"]
        top = hits[0]
        assert top["name"] == "jam.pdf" and top["page"] == 2
        left, upper, right, lower = (float(v) for v in top["region"].split(","))
        assert left > 0.5 and upper > 0.85 and right <= 1 and lower <= 1  # bottom right
        assert 0.8 < top["ocr_confidence"] <= 1
        chunks = api.get(f"/brains/kitchen/files/{doc['id']}/chunks").json()
        assert {c["page"] for c in chunks} == {1, 2} and all(c["region"] for c in chunks)


def test_a_page_the_engine_fails_on_is_skipped_with_its_reason(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import loci.ingest.ocr.choice as ocr
    from loci.ingest.ocr.engine import recognize as real  # the engine choice.py calls

    calls = 0

    def crashing_on_the_second_page(image: Image.Image, **kwargs: Any) -> Any:
        nonlocal calls
        calls += 1
        if calls == 2:
            raise ParseError("OCR failed: Segmentation fault")
        return real(image, **kwargs)

    monkeypatch.setattr(ocr, "recognize", crashing_on_the_second_page)
    pages = [text_image([f"Ledger page {word}"]) for word in ("alpha", "bravo", "charlie")]
    one_at_a_time = ParseBudgets(ocr_processes=1)
    doc = parse(scanned_pdf(pages), "ledger.pdf", one_at_a_time)
    assert {b.location.page for b in doc.blocks} == {1, 3}
    assert "charlie" in doc.text.lower()
    assert "page 2 could not be read by OCR (OCR failed: Segmentation fault)" in doc.warnings
