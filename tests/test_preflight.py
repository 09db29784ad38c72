"""`loci add --dry-run` and the preflight routes: what an add would do, with nothing written.

The folder test runs the dry run and then the real add on the same folder and holds the two
against each other item by item, so a preflight that drifts from what `add` does fails here.
"""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from loci.embed.base import Embedder
from loci.ingest.preflight import OcrPlan, ocr_needed
from loci.service import Loci
from tests.support import pdf_files, text_files
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.loopback import Loopback
from tests.support.services import make_service

KELP = """# Kelp forests

Giant kelp can grow up to sixty centimetres a day in cold, nutrient-rich water along rocky
coasts. Sea otters protect kelp forests by eating the urchins that would otherwise graze them.
"""
BOILER = "# Boiler\n\nOpen the filling loop until the gauge reads 1.5 bar, then close it.\n"
LONG = "\n\n".join(f"## Part {i}\n\n" + text_files.prose(180, seed=i) for i in range(6))


def _folder(root: Path) -> Path:
    """New files, one already in the brain, one twice, one unreadable type, one over a 1 MB cap,
    one empty, a scanned (image-only) PDF and a photo of a whiteboard."""
    folder = root / "import"
    (folder / "sub").mkdir(parents=True)
    (folder / "kelp.md").write_text(KELP)
    (folder / "long.md").write_text(LONG)
    (folder / "report.pdf").write_bytes(pdf_files.text_pdf(2, words_per_page=200))
    (folder / "boiler.md").write_text(BOILER)  # added before the dry run
    (folder / "sub" / "boiler-again.md").write_text(BOILER)
    (folder / "notes.txt").write_text("Call the plumber on Tuesday about the radiator valve.\n")
    (folder / "sub" / "notes-copy.txt").write_text(
        "Call the plumber on Tuesday about the radiator valve.\n"
    )
    (folder / "drawing.xyz").write_bytes(b"\x00\x01 not a format Loci reads \x02")
    (folder / "huge.txt").write_text("x" * (1024 * 1024 + 10))
    (folder / "empty.md").write_bytes(b"")
    (folder / "scan.pdf").write_bytes(pdf_files.make_pdf([[], []], image_bytes=4000))
    whiteboard = Image.new("L", (420, 80), 255)
    ImageDraw.Draw(whiteboard).text((10, 30), "Standup moved to Thursday", fill=0)
    whiteboard.save(folder / "whiteboard.png")
    return folder


def _snapshot(home: Path) -> dict[str, Any]:
    """Every table's row count and every blob: what a write would change."""
    with sqlite3.connect(f"file:{home / 'loci.db'}?mode=ro", uri=True) as db:
        tables = [
            row[0]
            for row in db.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
                " AND sql NOT LIKE 'CREATE VIRTUAL%'"
            )
        ]
        counts = {t: db.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    blobs = sorted(str(p.relative_to(home)) for p in (home / "blobs").rglob("*") if p.is_file())
    return {"rows": counts, "blobs": blobs}


def test_dry_run_of_a_folder_matches_the_add_and_writes_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = _folder(tmp_path)
    env = {"LOCI_MAX_FILE_MB": "1"}
    first = run_cli("add", str(folder / "boiler.md"), "--json", home=home, env=env)
    assert first.returncode == 0, first.stderr
    existing_id = json.loads(first.stdout)[0]["document"]["id"]
    before = _snapshot(home)

    dry = run_cli("add", "--dry-run", str(folder), "--json", home=home, env=env)
    assert dry.returncode == 4, dry.stderr  # as the add will: some items fail
    assert _snapshot(home) == before
    flight = json.loads(dry.stdout)
    items = {Path(i["source"]).relative_to(folder).as_posix(): i for i in flight["items"]}

    assert flight["status"] == "error" and flight["existing_rows"] == 1
    assert items["boiler.md"]["outcome"] == "duplicate"
    assert items["boiler.md"]["duplicate_of"] == {
        "id": existing_id,
        "name": "boiler.md",
        "status": "ready",
        "reason": None,
    }
    assert items["sub/boiler-again.md"]["duplicate_of"]["id"] == existing_id
    assert items["boiler.md"]["parser"] == "markdown"
    # The second copy of notes duplicates the first of this same batch (no id yet).
    assert items["sub/notes-copy.txt"]["duplicate_of"] == {
        "id": None,
        "name": "notes.txt",
        "status": None,
        "reason": None,
    }
    assert (
        items["huge.txt"]["outcome"] == "refuse"
        and "limit is 1 MB" in items["huge.txt"]["over_limit"]
    )
    assert items["drawing.xyz"]["outcome"] == "fail"
    assert "no parser" in items["drawing.xyz"]["error"]
    assert items["empty.md"]["outcome"] == "refuse"
    assert items["report.pdf"]["parser"] == "pdf" and items["report.pdf"]["ocr"] is False
    assert items["scan.pdf"]["ocr"] is True and items["scan.pdf"]["chunks_exact"] is False
    assert items["whiteboard.png"]["parser"] == "image" and items["whiteboard.png"]["ocr"] is True
    assert items["long.md"]["chunks"] > 3 and items["long.md"]["parser"] == "markdown"
    assert items["kelp.md"]["seconds"] > 0
    assert any("huge.txt" in e for e in flight["errors"])
    assert any("already in this brain as #" in w for w in flight["warnings"])
    totals = flight["totals"]
    assert totals["items"] == len(items) == 12
    assert totals["chunks"] == sum(i["chunks"] for i in items.values() if i["outcome"] == "add")

    human = run_cli("add", "--dry-run", str(folder), home=home, env=env)
    assert "12 items: 6 to add, 3 already there, 1 will fail, 2 refused" in human.stdout
    assert "nothing was written" in human.stdout
    assert _snapshot(home) == before

    real = run_cli("add", str(folder), "--json", home=home, env=env)
    outcomes = {
        Path(o["source"]).relative_to(folder).as_posix(): o for o in json.loads(real.stdout)
    }
    assert real.returncode == dry.returncode
    assert outcomes.keys() == items.keys()
    for source, item in items.items():
        outcome = outcomes[source]
        document = outcome["document"]
        if item["outcome"] == "add":
            assert outcome["ok"] and not outcome["deduped"], source
            if item["chunks_exact"]:
                assert document["chunk_count"] == item["chunks"], source
        elif item["outcome"] == "duplicate":
            assert outcome["deduped"], source
        elif item["outcome"] == "fail":
            assert document is not None and document["status"] == "failed", source
        else:
            assert document is None and outcome["error"] == item["error"], source
    added = sum(o["ok"] and not o["deduped"] for o in outcomes.values())
    deduped = sum(o["deduped"] for o in outcomes.values())
    failed = sum(not o["ok"] for o in outcomes.values())
    assert (added, deduped, failed) == (
        totals["add"],
        totals["duplicate"],
        totals["fail"] + totals["refuse"],
    )


def test_a_dry_run_of_a_file_that_failed_says_so_and_how_to_retry(tmp_path: Path) -> None:
    home = tmp_path / "home"
    drawing = tmp_path / "drawing.xyz"
    drawing.write_bytes(b"\x00\x01 not a format Loci reads \x02")
    first = run_cli("add", str(drawing), "--json", home=home)
    failed = json.loads(first.stdout)[0]["document"]
    assert failed["status"] == "failed"

    human = run_cli("add", "--dry-run", str(drawing), home=home)
    line = f"already in this brain as #{failed['id']} drawing.xyz; that copy failed: "
    assert line + "no parser for this type" in " ".join(human.stdout.split())
    assert f"`loci reprocess {failed['id']}` tries it again" in human.stdout
    assert "1 already there (1 of them failed)" in human.stdout
    flight = json.loads(run_cli("add", "--dry-run", str(drawing), "--json", home=home).stdout)
    assert any(f"loci reprocess {failed['id']}" in w for w in flight["warnings"])


def test_the_api_preflight_returns_the_same_object(tmp_path: Path, embedder: Embedder) -> None:
    loci = make_service(tmp_path / "home", embedder, job_retry_base_s=0.01)
    folder = _folder(tmp_path)
    (folder / "huge.txt").unlink()  # over the cap, a whole request is refused (413) as an upload
    brain = loci.brain()
    existing = loci.library.add_file(brain, folder / "boiler.md").document
    loci.library.wait_for(brain, [existing.id])
    paths = sorted(p for p in folder.rglob("*") if p.is_file())
    expected = loci.library.preflight(brain, paths=paths)
    live = LiveServer(loci, run_worker=False)  # creates the owner account
    before = _snapshot(tmp_path / "home")
    live.start()
    try:
        with live.client() as api:
            files = [("files", (p.name, p.read_bytes(), "application/octet-stream")) for p in paths]
            response = api.post("/brains/default/preflight/files", files=files)
            assert response.status_code == 200, response.text
            got = response.json()
            blocked = api.post(
                "/brains/default/preflight/urls", json={"urls": ["http://10.0.0.1/wiki"]}
            )
            assert blocked.status_code == 200, blocked.text
    finally:
        live.stop()
    assert _snapshot(tmp_path / "home") == before

    def comparable(item: dict[str, Any]) -> dict[str, Any]:
        # The API knows uploads by file name only, and timings vary run to run.
        return {k: v for k, v in item.items() if k not in ("source", "seconds", "media_type")}

    from loci.cli.output import to_jsonable

    want = to_jsonable(expected)
    assert [comparable(i) for i in got["items"]] == [comparable(i) for i in want["items"]]
    for key in ("status", "existing_rows"):
        assert got[key] == want[key]
    assert {k: v for k, v in got["totals"].items() if k != "seconds"} == {
        k: v for k, v in want["totals"].items() if k != "seconds"
    }
    assert got["existing_rows"] == 1
    assert any(i["duplicate_of"] and i["duplicate_of"]["id"] == existing.id for i in got["items"])
    [refused] = blocked.json()["items"]
    assert refused["outcome"] == "refuse" and "private address" in refused["error"]


def test_a_url_dry_run_checks_the_address_without_connecting(
    page_server: Loopback, loci: Loci
) -> None:
    flight = loci.library.preflight(
        loci.brain(), urls=[page_server.url("/article"), "file:///etc/passwd"]
    )
    loopback, file_url = flight.items
    assert loopback.outcome == "refuse" and "loopback address" in (loopback.error or "")
    assert loopback.address is None
    assert file_url.outcome == "refuse" and "only http and https" in (file_url.error or "")
    assert page_server.connections == []
    assert flight.status == "error" and len(flight.errors) == 2


def test_an_allowed_url_is_fetched_and_reported(page_server: Loopback, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32"}
    run_cli("status", home=home, env=env)  # creates the data directory
    before = _snapshot(home)
    dry = run_cli("add", "--dry-run", page_server.url("/article"), "--json", home=home, env=env)
    assert dry.returncode == 0, dry.stderr
    assert _snapshot(home) == before
    [item] = json.loads(dry.stdout)["items"]
    assert item["outcome"] == "add" and item["kind"] == "web" and item["parser"] == "html"
    assert item["address"] == "127.0.0.1" and item["media_type"] == "text/html"
    assert item["chunks"] >= 1 and item["rendered"] is False
    real = run_cli("add", page_server.url("/article"), "--json", home=home, env=env)
    [outcome] = json.loads(real.stdout)
    assert outcome["document"]["chunk_count"] == item["chunks"]


def test_ocr_is_predicted_as_the_parsers_decide() -> None:
    assert ocr_needed(pdf_files.text_pdf(1)) == OcrPlan(0, None)
    scanned = ocr_needed(pdf_files.make_pdf([[], [], []], image_bytes=2000))
    assert scanned == OcrPlan(3, "pages 1, 2, 3 without a text layer")
    png = io.BytesIO()
    Image.new("L", (40, 20), 255).save(png, format="PNG")
    assert ocr_needed(png.getvalue()) == OcrPlan(1, "an image: its text comes from OCR")
    assert ocr_needed(b"# notes") == OcrPlan(0, None)
