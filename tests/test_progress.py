"""Each document being indexed says how far it has come (`progress`: OCR page n of m, embedding
chunk k of n), cheaply: a few writes a second at most, and null once it is ready or failed."""

from __future__ import annotations

import io
import shutil
import time
from typing import Any

import pytest
from PIL import Image, ImageDraw, ImageFont

from loci.errors import NotFound
from loci.ingest.progress import Throttled, report, reporting
from loci.models import Brain, Document, Progress
from loci.service import Loci
from tests.support import pdf_files
from tests.support.live_server import LiveServer


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_reports_are_passed_on_a_few_times_a_second_and_ocr_at_once() -> None:
    clock, written = Clock(), list[Progress]()
    watch = Throttled(written.append, every_s=0.3, clock=clock)
    with reporting(watch):
        for page in range(1, 6):  # a fast parse: 1/8 s a page
            clock.now += 0.125
            report("parse", page, 40)
        report("ocr", 5, 40)  # the first scanned page: seconds of work ahead, said at once
        clock.now += 0.125
        report("ocr", 6, 40)
    report("parse", 7, 40)  # outside the block: nobody watches
    assert written == [Progress("parse", 3, 40), Progress("ocr", 5, 40)]


def test_a_failing_progress_write_never_stops_the_parse() -> None:
    def broken(_: Progress) -> None:
        raise OSError("database is read-only")

    clock = Clock()
    watch = Throttled(broken, clock=clock)
    clock.now += 1
    watch("parse", 1, 2)  # logged, not raised


def _scan_page(line: str) -> Image.Image:
    image = Image.new("RGB", (900, 260), "white")
    font = ImageFont.load_default(size=28)
    ImageDraw.Draw(image).text((30, 30), line, fill="black", font=font)
    return image


def _scanned_pdf(lines: list[str]) -> bytes:
    pages = [_scan_page(line) for line in lines]
    buffer = io.BytesIO()
    pages[0].save(buffer, format="PDF", save_all=True, append_images=pages[1:], resolution=100)
    return buffer.getvalue()


@pytest.mark.both_backends
@pytest.mark.skipif(shutil.which("tesseract") is None, reason="Tesseract is not installed")
def test_ocr_reports_page_n_of_m_then_embedding_then_nothing(
    loci: Loci, brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    written: list[tuple[float, Progress | None]] = []
    real = loci.store.set_progress

    def spy(document_id: int, progress: Progress | None) -> None:
        written.append((time.monotonic(), progress))
        real(document_id, progress)

    monkeypatch.setattr(loci.store, "set_progress", spy)
    lines = [f"Invoice {n} for the kiln repair, paid in full" for n in range(1, 5)]
    added = loci.library.add_bytes(brain, "scans.pdf", _scanned_pdf(lines))
    [doc] = loci.library.wait_for(brain, [added.document.id], until="searchable")
    ocr = [p for _, p in written if p is not None and p.stage == "ocr"]
    assert ocr and all(p.total == 4 and 1 <= p.done <= 4 for p in ocr)
    assert [p.done for p in ocr] == sorted(p.done for p in ocr)
    gaps = [b - a for (a, _), (b, _) in zip(written, written[1:], strict=False)]
    assert all(gap >= 0.25 for gap in gaps[1:])  # after the eager first OCR report
    assert doc.vectors_pending and doc.progress == Progress("embed", 0, doc.chunk_count)

    [doc] = loci.library.wait_for(brain, [doc.id])
    assert (doc.status, doc.progress) == ("ready", None)


@pytest.mark.both_backends
def test_the_api_shows_a_documents_progress_until_it_is_ready(loci: Loci, brain: Brain) -> None:
    server = LiveServer(loci, run_worker=False).start()
    try:
        with server.client() as http:
            added = loci.library.add_bytes(brain, "report.pdf", pdf_files.text_pdf(8))
            queued: dict[str, Any] = http.get(f"/brains/default/files/{added.document.id}").json()
            assert (queued["status"], queued["vectors_pending"], queued["progress"]) == (
                "processing",
                False,
                None,  # waiting in the queue
            )
            loci.library.wait_for(brain, [added.document.id], until="searchable")
            words = http.get(f"/brains/default/files/{added.document.id}").json()
            assert words["vectors_pending"] is True
            assert words["progress"] == {
                "stage": "embed",
                "done": 0,
                "total": words["chunk_count"],
            }
            loci.library.wait_for(brain, [added.document.id])
            ready = http.get(f"/brains/default/files/{added.document.id}").json()
            assert (ready["status"], ready["vectors_pending"], ready["progress"]) == (
                "ready",
                False,
                None,
            )
    finally:
        server.stop()


@pytest.mark.both_backends
def test_waiting_for_many_notes_returns_each_in_order_and_names_one_that_is_gone(
    loci: Loci, brain: Brain
) -> None:
    ids = [
        loci.library.add_note(brain, f"Note {n} about lighthouses.", title=f"N{n}").document.id
        for n in range(40)
    ]
    counts: list[int] = []

    def report(docs: list[Document]) -> None:
        counts.append(sum(d.status == "ready" for d in docs))

    docs = loci.library.wait_for(brain, ids, report)
    assert [d.id for d in docs] == ids and all(d.status == "ready" for d in docs)
    assert counts and counts[-1] == 40 and counts == sorted(counts)  # the last report: all done
    gone = loci.library.add_note(brain, "A note removed before the wait.", title="gone")
    loci.library.remove(brain, gone.document.id)
    with pytest.raises(NotFound, match=f"no document {gone.document.id}"):
        loci.library.wait_for(brain, [ids[0], gone.document.id])
