"""Uploads a user gets wrong, over real HTTP: too large (with and without Content-Length), empty,
mislabelled, hostile names, a batch with one bad file — and downloads that come back as they went.

The server here caps files at 0.01 MB (10,485 bytes), so "too large" costs little to send; the
body cap in front of the app is that plus 1 MB for the multipart framing.
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from loci.embed.base import Embedder
from loci.service import Loci
from tests.support import pdf_files
from tests.support.live_server import LiveServer
from tests.support.services import make_service

FILE_CAP = int(0.01 * 1024 * 1024)
BODY_CAP = FILE_CAP + 1024 * 1024

pytestmark = pytest.mark.both_backends


@pytest.fixture(scope="module")
def small_cap(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[LiveServer]:
    home = tmp_path_factory.mktemp("uploads") / "home"
    loci = make_service(home, embedder, max_file_mb=0.01, job_retry_base_s=0.01)
    assert loci.settings.max_file_bytes == FILE_CAP
    server = LiveServer(loci).start()
    yield server
    server.stop()
    loci.store.close()


@pytest.fixture
def brain_name(request: pytest.FixtureRequest) -> str:
    """A brain of its own for each test, named after it."""
    return str(request.node.name).removeprefix("test_")[:60].replace("_", "-")


@pytest.fixture
def where(brain_name: str) -> str:
    return f"/brains/{brain_name}"


@pytest.fixture
def api(small_cap: LiveServer, brain_name: str) -> Iterator[httpx.Client]:
    """The owner's client, with the test's brain created."""
    with small_cap.client() as client:
        assert client.post("/brains", json={"name": brain_name}).status_code == 201
        yield client


def blob_files(loci: Loci) -> set[Path]:
    root = loci.blobs.root
    return {p for p in root.rglob("*") if p.is_file()} if root.exists() else set()


def stored_nothing(api: httpx.Client, where: str) -> bool:
    status = api.get(f"{where}/status").json()
    return bool(api.get(f"{where}/files").json() == [] and status["bytes_stored"] == 0)


def multipart_stream(name: str, size: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    """A one-file multipart body, sent as a stream: httpx then uses chunked transfer encoding
    and no Content-Length, so only counting the bytes as they arrive can stop it."""
    yield (
        f'--loci-test\r\nContent-Disposition: form-data; name="files"; filename="{name}"\r\n'
        "Content-Type: text/plain\r\n\r\n"
    ).encode()
    sent = 0
    while sent < size:
        part = min(chunk, size - sent)
        yield b"a" * part
        sent += part
    yield b"\r\n--loci-test--\r\n"


STREAM_HEADERS = {"Content-Type": "multipart/form-data; boundary=loci-test"}


# too large ----------------------------------------------------------------------------------
def test_a_file_over_the_cap_is_413_and_nothing_is_stored(
    api: httpx.Client, where: str, small_cap: LiveServer
) -> None:
    blobs_before = blob_files(small_cap.loci)
    just_over = api.post(f"{where}/files", files={"files": ("big.txt", b"x" * (FILE_CAP + 1))})
    assert just_over.status_code == 413
    assert just_over.json()["error"] == "file_too_large"
    assert "big.txt" in just_over.json()["message"] and "10.2 KB" in just_over.json()["message"]

    # Far over: refused from its Content-Length, before the body is read.
    far_over = api.post(f"{where}/files", files={"files": ("huge.txt", b"x" * BODY_CAP)})
    assert int(far_over.request.headers["content-length"]) > BODY_CAP
    assert far_over.status_code == 413 and far_over.json()["error"] == "file_too_large"

    at_cap = api.post(f"{where}/files", files={"files": ("fits.txt", b"y" * FILE_CAP)})
    assert at_cap.status_code == 202  # the cap itself is allowed: the limit is not off by one
    assert [f["name"] for f in api.get(f"{where}/files").json()] == ["fits.txt"]
    assert len(blob_files(small_cap.loci) - blobs_before) == 1


def test_a_chunked_body_over_the_cap_is_413(
    api: httpx.Client, where: str, small_cap: LiveServer
) -> None:
    blobs_before = blob_files(small_cap.loci)
    for size in (FILE_CAP + 1, BODY_CAP + 200 * 1024):  # over the file cap; over the body cap
        response = api.post(
            f"{where}/files",
            content=multipart_stream("stream.txt", size),
            headers=STREAM_HEADERS,
        )
        assert "content-length" not in response.request.headers
        assert response.request.headers["transfer-encoding"] == "chunked"
        assert response.status_code == 413, response.text
        assert response.json()["error"] == "file_too_large"
    assert stored_nothing(api, where)
    assert blob_files(small_cap.loci) == blobs_before
    # the same streamed form under the cap goes through: the 413s above were about size
    fits = api.post(
        f"{where}/files", content=multipart_stream("small.txt", 1000), headers=STREAM_HEADERS
    )
    assert fits.status_code == 202
    assert fits.json()["results"][0]["document"]["size_bytes"] == 1000


def test_an_empty_file_is_400_with_a_reason(api: httpx.Client, where: str) -> None:
    response = api.post(f"{where}/files", files={"files": ("blank.md", b"")})
    assert response.status_code == 400
    body = response.json()
    assert body["error"] == "invalid_input" and "blank.md is empty" in body["message"]
    assert stored_nothing(api, where)


# what the bytes are vs. what the name says --------------------------------------------------
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)) * 4


def test_a_mislabelled_file_fails_with_a_reason_or_is_read_for_what_it_is(
    api: httpx.Client, where: str, brain_name: str, small_cap: LiveServer
) -> None:
    pdf = pdf_files.two_page_pdf()
    uploads = {
        "photo.pdf": PNG,  # a (broken) image named as a PDF
        "report.txt": pdf,  # a PDF named as text
        "page.pdf": b"<!doctype html><html><body><p>Herons nest by the weir.</p></body></html>",
        "junk.txt": random.Random(7).randbytes(4000),  # binary named as text
    }
    response = api.post(
        f"{where}/files", files=[("files", (n, data)) for n, data in uploads.items()]
    )
    assert response.status_code == 202
    ids = {r["name"]: r["document"]["id"] for r in response.json()["results"]}
    docs = {n: small_cap.wait_ready(api, brain_name, i) for n, i in ids.items()}

    # The bytes decide: it is read as the image it is, and fails as a corrupt one.
    assert docs["photo.pdf"]["status"] == "failed"
    assert "corrupt PNG image" in docs["photo.pdf"]["status_reason"]
    assert docs["junk.txt"]["status"] == "failed"
    assert "binary" in docs["junk.txt"]["status_reason"]

    # The bytes decide: the PDF is parsed as a PDF, with its pages, whatever its name.
    assert docs["report.txt"]["status"] == "ready"
    text = api.get(f"{where}/files/{ids['report.txt']}/text").json()["text"]
    assert "Zebras graze near the river" in text and "%PDF" not in text
    pages = {c["page"] for c in api.get(f"{where}/files/{ids['report.txt']}/chunks").json()}
    assert pages == {1, 2}
    assert docs["page.pdf"]["status"] == "ready"
    html_text = api.get(f"{where}/files/{ids['page.pdf']}/text").json()["text"]
    assert "Herons nest by the weir." in html_text and "<p>" not in html_text

    # A failed file is still kept, byte for byte, to download or reprocess.
    assert api.get(f"{where}/files/{ids['photo.pdf']}/download").content == PNG


# names --------------------------------------------------------------------------------------
HOSTILE_NAMES = {
    "../../escaped/über ✓ café.md": "über ✓ café.md",
    "..\\..\\windows\\system32\\évil.md": "évil.md",
    "/etc/passwd": "passwd",
    "..": "untitled",
    "a/b/": "untitled",
}


@pytest.mark.attack
def test_a_hostile_name_is_stored_under_a_safe_name(
    api: httpx.Client, where: str, brain_name: str, small_cap: LiveServer
) -> None:
    home = small_cap.loci.blobs.root.parent
    outside = home.parent
    before = {p for p in outside.rglob("*")}
    files = [
        ("files", (name, f"# note {i}\n\nDistinct text {i}.\n".encode()))
        for i, name in enumerate(HOSTILE_NAMES)
    ]
    response = api.post(f"{where}/files", files=files)
    assert response.status_code == 202
    stored = [r["document"] for r in response.json()["results"]]
    assert [d["name"] for d in stored] == list(HOSTILE_NAMES.values())
    for doc in stored:
        assert "/" not in doc["name"] and "\\" not in doc["name"]
        assert small_cap.wait_ready(api, brain_name, doc["id"])["status"] == "ready"

    created = {p for p in outside.rglob("*")} - before
    assert created, "the uploads were written somewhere"
    assert all(p.is_relative_to(home) for p in created), "a file was written outside the data dir"
    assert not any(p.name in HOSTILE_NAMES.values() for p in created)  # stored by hash, not name
    assert not (outside / "escaped").exists() and not (home.parent.parent / "escaped").exists()

    first = stored[0]
    download = api.get(f"{where}/files/{first['id']}/download")
    disposition = download.headers["content-disposition"]
    assert disposition.startswith("attachment;")
    assert f"filename*=UTF-8''{quote('über ✓ café.md')}" in disposition
    assert "/" not in disposition.split("filename*=")[0]


# several files ------------------------------------------------------------------------------
def test_one_bad_file_in_a_batch_does_not_stop_the_others(api: httpx.Client, where: str) -> None:
    files = [
        ("files", ("first.md", b"# First\n\nKept.\n")),
        ("files", ("empty.md", b"")),
        ("files", ("big.txt", b"z" * (FILE_CAP + 10))),
        ("files", ("second.pdf", pdf_files.two_page_pdf())),
    ]
    response = api.post(f"{where}/files", files=files)
    assert response.status_code == 202
    results = response.json()["results"]
    assert [r["name"] for r in results] == ["first.md", "empty.md", "big.txt", "second.pdf"]
    assert results[0]["document"] and results[3]["document"]
    assert results[1]["document"] is None and results[1]["error"]["error"] == "invalid_input"
    assert results[2]["document"] is None and results[2]["error"]["error"] == "file_too_large"
    listed = sorted(f["name"] for f in api.get(f"{where}/files").json())
    assert listed == ["first.md", "second.pdf"]

    # When every file fails there is nothing to accept: the first failure's status.
    all_bad = api.post(
        f"{where}/files",
        files=[("files", ("big2.txt", b"z" * (FILE_CAP + 10))), ("files", ("e.md", b""))],
    )
    assert all_bad.status_code == 413 and all_bad.json()["error"] == "file_too_large"


# downloads ----------------------------------------------------------------------------------
def test_a_download_is_an_attachment_with_the_exact_bytes(api: httpx.Client, where: str) -> None:
    uploads = {
        "every-byte.bin": bytes(range(256)) * 8 + os.urandom(512),
        "page.html": b"<html><body><script>alert(document.cookie)</script>hi</body></html>",
        "scan.pdf": pdf_files.two_page_pdf(),
    }
    response = api.post(f"{where}/files", files=[("files", (n, d)) for n, d in uploads.items()])
    assert response.status_code == 202
    for result in response.json()["results"]:
        download = api.get(f"{where}/files/{result['document']['id']}/download")
        assert download.status_code == 200
        assert download.content == uploads[result["name"]]
        assert download.headers["content-disposition"].startswith("attachment;")
        assert f'filename="{result["name"]}"' in download.headers["content-disposition"]
        assert download.headers["x-content-type-options"] == "nosniff"
        assert "sandbox" in download.headers["content-security-policy"]
