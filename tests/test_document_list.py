"""Finding documents in a brain's list, over the API and `loci list`: by format, words, status;
newest first or by name, size, status or format; a page at a time with the total; a failure
says what to do, and offers a retry only when one can help; an empty list says whether a filter
emptied it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from loci.service import Loci
from tests.support import office_files, pdf_files
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.office_files import a_zip

BRAIN = "shelf"


FILES = [
    ("report.pdf", pdf_files.two_page_pdf(), "application/pdf"),
    ("plan.docx", office_files.docx_with_structure(), None),
    ("boiler.md", b"# Boiler\n\nThe pressure should read 1.5 bar when cold.\n", "text/markdown"),
    ("holiday.zip", a_zip(), "application/zip"),
]


def listed(api: httpx.Client, **params: Any) -> tuple[list[str], int]:
    response = api.get(f"/brains/{BRAIN}/files", params=params)
    assert response.status_code == 200, response.text
    return [d["name"] for d in response.json()], int(response.headers["X-Total-Count"])


@pytest.mark.both_backends
def test_the_list_filters_sorts_pages_and_explains_failures(server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": BRAIN}).status_code == 201
        ids = {}
        for name, data, mime in FILES:
            upload = (name, data, mime) if mime else (name, data)
            done = api.post(f"/brains/{BRAIN}/files", files={"files": upload}).json()
            ids[name] = done["results"][0]["document"]["id"]
        note = api.post(f"/brains/{BRAIN}/notes", json={"text": "Bleed the radiators."}).json()
        for document_id in ids.values():
            server.wait_ready(api, BRAIN, document_id)

        everything = [
            "report.pdf",
            "plan.docx",
            "boiler.md",
            "holiday.zip",
            note["document"]["name"],
        ]
        assert listed(api) == (everything, 5)  # oldest first, as before
        assert listed(api, sort="added", order="desc") == (everything[::-1], 5)
        by_format = {d["name"]: d["format"] for d in api.get(f"/brains/{BRAIN}/files").json()}
        assert by_format == {
            "report.pdf": "pdf",
            "plan.docx": "word",
            "boiler.md": "text",
            "holiday.zip": "other",
            note["document"]["name"]: "note",
        }
        assert listed(api, format="pdf,word") == (["report.pdf", "plan.docx"], 2)
        assert listed(api, format="note", kind="note") == ([note["document"]["name"]], 1)
        assert listed(api, kind="file,web", status="failed") == (["holiday.zip"], 1)
        assert listed(api, q="BOILER") == (["boiler.md"], 1)
        assert listed(api, q="boiler pdf") == ([], 0)  # every word must be found
        assert listed(api, sort="size", order="desc", limit=1)[0] == [
            max(FILES, key=lambda f: len(f[1]))[0]
        ]
        assert listed(api, sort="status") == (
            ["holiday.zip", "report.pdf", "plan.docx", "boiler.md", note["document"]["name"]],
            5,
        )
        # Pages: two at a time, the total over all of them.
        pages = [listed(api, sort="added", order="desc", limit=2, offset=o) for o in (0, 2, 4)]
        assert [names for names, _ in pages] == [
            everything[4:2:-1],
            everything[2:0:-1],
            ["report.pdf"],
        ]
        assert {total for _, total in pages} == {5}

        # Refused: a format that does not exist, a parameter given twice.
        assert api.get(f"/brains/{BRAIN}/files", params={"format": "pdf,movie"}).status_code == 422
        twice = api.get(f"/brains/{BRAIN}/files?format=pdf&format=word")
        assert twice.status_code == 422

        # The file no parser reads failed for good: no retry, and what to do instead.
        failed = api.get(f"/brains/{BRAIN}/files/{ids['holiday.zip']}").json()
        assert failed["status"] == "failed" and "no parser" in failed["status_reason"]
        assert failed["failure"]["code"] == "no_parser"
        assert failed["failure"]["retry_helps"] is False
        assert "Save it as PDF" in failed["failure"]["what_to_do"]
        ready = api.get(f"/brains/{BRAIN}/files/{ids['report.pdf']}").json()
        assert ready["failure"] is None

        # A failure that gave up after the worker's retries (no error code) may be transient.
        server.loci.store.fail_document(
            ids["boiler.md"], "the database was busy (after 5 attempts)"
        )
        flaky = api.get(f"/brains/{BRAIN}/files/{ids['boiler.md']}").json()
        assert flaky["failure"] == {
            "code": None,
            "retry_helps": True,
            "what_to_do": flaky["failure"]["what_to_do"],
        }
        assert "Retry" in flaky["failure"]["what_to_do"]


def test_loci_list_by_format_says_when_a_filter_empties_it(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert "no documents yet" in run_cli("list", home=home).stdout
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "report.pdf").write_bytes(pdf_files.two_page_pdf())
    (folder / "boiler.md").write_text("# Boiler\n\nOne and a half bar when cold.\n")
    assert run_cli("add", str(folder), home=home).returncode == 0

    pdfs = json.loads(run_cli("list", "--format", "pdf", "--json", home=home).stdout)
    assert [(d["name"], d["format"]) for d in pdfs] == [("report.pdf", "pdf")]
    both = json.loads(run_cli("list", "-f", "pdf", "-f", "text", "--json", home=home).stdout)
    assert sorted(d["name"] for d in both) == ["boiler.md", "report.pdf"]
    table = run_cli("list", "--format", "text", home=home).stdout
    assert "boiler.md" in table and "report.pdf" not in table

    nothing = run_cli("list", "--format", "image", "--kind", "web", home=home)
    assert nothing.returncode == 0
    assert "no documents match --kind web --format image" in nothing.stdout
    assert "add some" not in nothing.stdout
    wrong = run_cli("list", "--format", "movie", home=home)
    assert wrong.returncode != 0 and "movie" in wrong.stderr


def test_a_format_from_kind_name_and_type(loci: Loci) -> None:
    from loci.ingest.formats import format_of

    assert format_of("file", "scan.JPG", None) == "image"
    assert format_of("file", "talk.m4a", "audio/mp4") == "audio"
    assert format_of("file", "data", "application/pdf") == "pdf"
    assert format_of("file", "main.py", None) == "text"
    assert format_of("file", "mystery.bin", "application/octet-stream") == "other"
    assert format_of("web", "example.org-paper.pdf", "application/pdf") == "pdf"
    assert format_of("web", "example.org-article.html", "text/html") == "web"
    assert format_of("web", "example.org-article.md", "text/markdown") == "web"
    assert format_of("note", "todo.md", "text/markdown") == "note"
    assert format_of("evidence", "ev-call.md", "text/markdown") == "page"
