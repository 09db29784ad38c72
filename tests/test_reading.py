"""A citation opens the source at the passage, over the API: a PDF's page drawn as a PNG with the
passage's boxes found in its text layer, a scanned page's passage at the region OCR read, a text
passage by its characters in the extracted text; and the refusals (not a PDF, a page it does not
have, another document's passage)."""

from __future__ import annotations

import io
import shutil

import pytest
from PIL import Image

from tests.support import pdf_files
from tests.support.image_files import scanned_pdf, text_image
from tests.support.live_server import LiveServer

BRAIN = "reader"


def test_a_pdf_passage_is_marked_on_its_page_and_a_text_passage_by_its_characters(
    server: LiveServer,
) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": BRAIN}).status_code == 201
        ids = {}
        for name, data in (
            ("report.pdf", pdf_files.two_page_pdf()),
            (
                "boiler.md",
                b"# Boiler\n\nBleed the radiators in autumn.\n\nThe gauge reads 1.5 bar.",
            ),
        ):
            done = api.post(f"/brains/{BRAIN}/files", files={"files": (name, data)}).json()
            ids[name] = done["results"][0]["document"]["id"]
            assert server.wait_ready(api, BRAIN, ids[name])["status"] == "ready"
        files = f"/brains/{BRAIN}/files"

        chunks = api.get(f"{files}/{ids['report.pdf']}/chunks").json()
        zebras = next(c for c in chunks if "Zebras" in c["text"])
        passage = api.get(f"{files}/{ids['report.pdf']}/passage", params={"chunk_id": zebras["id"]})
        assert passage.status_code == 200, passage.text
        body = passage.json()
        assert body["page_count"] == 2 and body["chunk"]["page"] == 2
        # One box per line of the passage, in reading order, near the top left of the page.
        assert len(body["boxes"]) == 2
        (l1, t1, r1, b1), (l2, t2, r2, b2) = body["boxes"]
        assert 0 < l1 < r1 < 0.6 and 0 < t1 < b1 <= t2 < b2 < 0.2

        start = api.get(f"{files}/{ids['report.pdf']}/passage").json()
        assert start == {"chunk": None, "page_count": 2, "boxes": []}

        page = api.get(f"{files}/{ids['report.pdf']}/page", params={"number": 2, "width": 600})
        assert page.status_code == 200
        assert page.headers["content-type"] == "image/png"
        assert "private" in page.headers["cache-control"]
        image = Image.open(io.BytesIO(page.content))
        assert image.width == 600 and image.height > 600  # a portrait page

        # Refused with the reason: a page past the end, a document that is not a PDF.
        past = api.get(f"{files}/{ids['report.pdf']}/page", params={"number": 3})
        assert past.status_code == 400 and "outside this PDF's 2 pages" in past.json()["message"]
        text_page = api.get(f"{files}/{ids['boiler.md']}/page", params={"number": 1})
        assert text_page.status_code == 400 and "not a PDF" in text_page.json()["message"]

        # A text passage is marked by its characters in the extracted text.
        (bleed,) = [
            c
            for c in api.get(f"{files}/{ids['boiler.md']}/chunks").json()
            if "radiators" in c["text"]
        ]
        text = api.get(f"{files}/{ids['boiler.md']}/text").json()["text"]
        assert bleed["char_end"] > bleed["char_start"] >= 0
        assert "Bleed the radiators" in text[bleed["char_start"] : bleed["char_end"]]
        marked = api.get(f"{files}/{ids['boiler.md']}/passage", params={"chunk_id": bleed["id"]})
        assert marked.json()["boxes"] == [] and marked.json()["page_count"] is None

        # A download can be read a range at a time (a player seeking in a recording).
        download = f"{files}/{ids['boiler.md']}/download"
        whole = api.get(download)
        assert whole.status_code == 200 and whole.headers["accept-ranges"] == "bytes"
        size = len(whole.content)
        first = api.get(download, headers={"Range": "bytes=0-5"})
        assert first.status_code == 206 and first.content == whole.content[:6]
        assert first.headers["content-range"] == f"bytes 0-5/{size}"
        last = api.get(download, headers={"Range": "bytes=-4"})
        assert last.status_code == 206 and last.content == whole.content[-4:]
        beyond = api.get(download, headers={"Range": f"bytes={size}-"})
        assert beyond.status_code == 416 and beyond.headers["content-range"] == f"bytes */{size}"
        several = api.get(download, headers={"Range": "bytes=0-1,4-5"})
        assert several.status_code == 200 and several.content == whole.content

        # Another document's passage is not this one's.
        other = api.get(f"{files}/{ids['boiler.md']}/passage", params={"chunk_id": zebras["id"]})
        assert other.status_code == 404


@pytest.mark.skipif(shutil.which("tesseract") is None, reason="Tesseract is not installed")
def test_a_scanned_pages_passage_is_marked_where_ocr_read_it(server: LiveServer) -> None:
    pages = [
        text_image(["Tenancy agreement", "The rent is due on the first day"]),
        text_image(["Schedule of repairs", "The landlord replaces the boiler flue"], top=150),
    ]
    with server.client() as api:
        assert api.post("/brains", json={"name": BRAIN}).status_code == 201
        done = api.post(
            f"/brains/{BRAIN}/files", files={"files": ("lease.pdf", scanned_pdf(pages))}
        ).json()
        document_id = done["results"][0]["document"]["id"]
        assert server.wait_ready(api, BRAIN, document_id)["status"] == "ready"
        chunks = api.get(f"/brains/{BRAIN}/files/{document_id}/chunks").json()
        flue = next(c for c in chunks if "boiler flue" in c["text"])
        body = api.get(
            f"/brains/{BRAIN}/files/{document_id}/passage", params={"chunk_id": flue["id"]}
        ).json()
        assert body["page_count"] == 2
        (box,) = body["boxes"]
        # The region OCR recorded: on the lower half of the page, where the text was drawn.
        assert [round(v, 3) for v in box] == [round(float(v), 3) for v in flue["region"].split(",")]
        assert box[1] > 0.5
