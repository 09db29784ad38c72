"""The dry run predicts what adding does, because both follow one plan of what a file becomes.

For a PDF, a fetched HTML page, a text note, a photo of a whiteboard, a file over the size cap,
an unknown binary, a blank file of an unknown type and an HTML page saved as `.pdf`, the
preflight's prediction (outcome, format, OCR, the reason for a refusal or a failure) is held
against what adding then does: the error it raises, or the document's kind, status, reason and
the parser and OCR it recorded. The cap is a fraction of a megabyte, where a message rounded to
whole megabytes would say "the limit is 0 MB".
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageDraw

from loci.embed.base import Embedder
from loci.errors import LociError
from loci.ingest.preflight import PreflightItem
from loci.models import Document
from loci.service import AddResult, Loci
from tests.support import pdf_files
from tests.support.live_server import LiveServer
from tests.support.loopback import Loopback
from tests.support.services import make_service

pytestmark = pytest.mark.both_backends

CAP_MB = 0.05  # 52,428 bytes
CAP = int(CAP_MB * 1024 * 1024)


@pytest.fixture
def capped(tmp_path: Path, embedder: Embedder, database_url: str | None) -> Iterator[Loci]:
    loci = make_service(
        tmp_path / "home",
        embedder,
        database_url,
        max_file_mb=CAP_MB,
        fetch_allowed_networks=["127.0.0.1/32"],
        job_retry_base_s=0.01,
    )
    assert loci.settings.max_file_bytes == CAP
    yield loci
    loci.store.close()


def _files(folder: Path) -> list[Path]:
    folder.mkdir()
    whiteboard = Image.new("L", (420, 80), 255)
    ImageDraw.Draw(whiteboard).text((10, 30), "Standup moved to Thursday", fill=0)
    whiteboard.save(folder / "whiteboard.png")
    contents = {
        "report.pdf": pdf_files.text_pdf(2, words_per_page=150),
        "note.txt": b"Call the plumber on Tuesday about the radiator valve.\n",
        "big.txt": b"x" * (CAP + 1),
        "drawing.xyz": b"\x00\x01 not a format Loci reads \x02",
        "blank.xyz": b"  \n\n",
        "saved-page.pdf": b"<!doctype html><html><body><p>An error page, not a PDF.</p></html>",
    }
    for name, data in contents.items():
        (folder / name).write_bytes(data)
    return [folder / "whiteboard.png", *(folder / name for name in contents)]


def _added(loci: Loci, item: PreflightItem, add: AddResult | LociError) -> Document | None:
    """Checks `add` against the prediction; returns the finished document, if one was kept."""
    if item.outcome == "refuse":
        assert isinstance(add, LociError), item.source
        assert add.message == item.error, item.source
        return None
    assert isinstance(add, AddResult) and not add.deduped, (item.source, add)
    brain = loci.brain()
    [document] = loci.library.wait_for(brain, [add.document.id])
    assert document.kind == item.kind, item.source
    extracted = document.metadata.get("extracted", {})
    if item.outcome == "fail":
        assert document.status == "failed", item.source
        assert document.status_reason == item.error, item.source
        return document
    assert item.outcome == "add" and document.status == "ready", (item.source, document)
    assert extracted["parser"] == item.parser, item.source
    assert ("ocr" in extracted) == item.ocr, item.source
    if item.chunks_exact:
        assert document.chunk_count == item.chunks, item.source
    return document


def test_the_dry_run_predicts_what_adding_does(
    capped: Loci, page_server: Loopback, tmp_path: Path
) -> None:
    loci, brain = capped, capped.brain()
    paths = _files(tmp_path / "in")
    url = page_server.url("/article")
    flight = loci.library.preflight(brain, paths=paths, urls=[url])
    assert loci.library.documents(brain) == []  # the dry run kept nothing

    predicted = {Path(i.source).name if i.kind == "file" else "page": i for i in flight.items}
    assert {k: (i.outcome, i.parser, i.ocr) for k, i in predicted.items()} == {
        "page": ("add", "html", False),
        "whiteboard.png": ("add", "image", True),
        "report.pdf": ("add", "pdf", False),
        "note.txt": ("add", "text", False),
        "big.txt": ("refuse", None, False),
        "drawing.xyz": ("fail", None, False),
        "blank.xyz": ("fail", None, False),
        "saved-page.pdf": ("add", "html", False),
    }
    big = predicted["big.txt"]
    assert (
        big.over_limit
        == big.error
        == (f"big.txt is {CAP + 1:,} bytes; the limit is 51.2 KB ({CAP:,} bytes)")
    )
    assert predicted["drawing.xyz"].error == "no parser for this type"
    assert predicted["blank.xyz"].error == "the file is empty"  # as parsing finds it, first

    def add(path: Path | None) -> AddResult | LociError:
        try:
            return (
                loci.library.add_url(brain, url)
                if path is None
                else loci.library.add_file(brain, path)
            )
        except LociError as error:
            return error

    page = _added(loci, predicted["page"], add(None))
    assert page is not None and page.source_url == url
    for path in paths:
        _added(loci, predicted[path.name], add(path))


def test_an_upload_is_refused_as_its_dry_run_said(capped: Loci) -> None:
    """Over HTTP the body is read only to the cap, and the refusal is still the service's."""
    brain = capped.brain()
    server = LiveServer(capped, run_worker=False).start()
    too_big = ("files", ("big.txt", b"x" * (CAP + 200), "text/plain"))
    try:
        with server.client() as api:
            dry = api.post("/brains/default/preflight/files", files=[too_big])
            real = api.post("/brains/default/files", files=[too_big])
    finally:
        server.stop()
    assert dry.status_code == 200, dry.text
    [item] = dry.json()["items"]
    assert item["outcome"] == "refuse"
    assert real.status_code == 413 and real.json()["error"] == "file_too_large"
    assert real.json()["message"] == item["error"] == "big.txt is 51.4 KB; the limit is 51.2 KB"
    assert capped.library.documents(brain) == []
