"""The `loci` command as a person runs it, on a temporary data directory: the first test runs the
real installed command in subprocesses (end to end); the others run the same app in-process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from tests.support.cli import run_cli, run_cli_process
from tests.support.paths import REPO

EXAMPLES = REPO / "examples"
CITATION_FIELDS = {
    "document_id",
    "name",
    "title",
    "chunk_index",
    "page",
    "line_start",
    "line_end",
    "heading_path",
    "source_url",
}


def test_add_folder_then_search_with_citations(tmp_path: Path) -> None:
    home = tmp_path / "home"
    added = run_cli_process("add", str(EXAMPLES), "--json", home=home)
    assert added.returncode == 0, added.stderr
    outcomes = json.loads(added.stdout)
    assert len(outcomes) == 4 and all(o["ok"] for o in outcomes)
    assert {o["document"]["status"] for o in outcomes} == {"ready"}

    found = run_cli_process("search", "what does the deposit cost", "--json", home=home)
    assert found.returncode == 0, found.stderr
    result = json.loads(found.stdout)
    hit = result["hits"][0]
    assert hit["name"] == "lease-summary.txt"
    assert set(hit) >= CITATION_FIELDS
    assert {"snippet", "score", "text_rank", "vector_rank", "matched_by", "text"} <= set(hit)
    assert "2,300" in hit["text"]

    human = run_cli_process("find", "raised beds along the fence", home=home)
    assert human.returncode == 0
    assert "meeting-2026-03-04.md" in human.stdout.splitlines()[0]

    listed = json.loads(run_cli_process("ls", "--json", home=home).stdout)
    assert sorted(d["name"] for d in listed) == sorted(p.name for p in EXAMPLES.iterdir())


def test_brains_are_separate(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert (
        run_cli(
            "note", "The wifi password is on the fridge.", "--brain", "family", home=home
        ).returncode
        == 0
    )
    family = json.loads(
        run_cli("search", "wifi password", "--brain", "family", "--json", home=home).stdout
    )
    assert family["hits"]
    assert run_cli("brains", "create", "work", home=home).returncode == 0
    work = json.loads(
        run_cli("search", "wifi password", "--brain", "work", "--json", home=home).stdout
    )
    assert work["hits"] == []


def test_note_from_stdin_show_rm_and_status(tmp_path: Path) -> None:
    home = tmp_path / "home"
    saved = run_cli(
        "note",
        "--title",
        "Bike lock",
        "-t",
        "codes",
        "--json",
        home=home,
        stdin="The bike lock code is 4711.\n",
    )
    assert saved.returncode == 0, saved.stderr
    doc = json.loads(saved.stdout)[0]["document"]
    assert doc["kind"] == "note" and doc["tags"] == ["codes"] and doc["title"] == "Bike lock"

    shown = json.loads(
        run_cli("show", str(doc["id"]), "--text", "--chunks", "--json", home=home).stdout
    )
    assert "4711" in shown["text"] and shown["chunks"][0]["text"].startswith("The bike lock")

    status = json.loads(run_cli("status", "--json", home=home).stdout)
    assert status["stats"]["documents_by_status"] == {"ready": 1}
    assert status["embedder_model"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert status["embedder_dims"] == 384 and status["database_bytes"] > 0

    assert run_cli("rm", str(doc["id"]), home=home).returncode == 0
    gone = run_cli("show", str(doc["id"]), home=home)
    assert gone.returncode == 3
    assert gone.stderr.strip().count("\n") == 0 and "no document" in gone.stderr


def test_usage_errors_and_missing_paths_exit_non_zero(tmp_path: Path) -> None:
    home = tmp_path / "home"
    too_many = run_cli("search", "x", "--limit", "31", home=home)
    assert too_many.returncode == 2
    missing = run_cli("add", str(tmp_path / "nope.pdf"), home=home)
    assert missing.returncode == 1 and "no such file" in missing.stdout + missing.stderr


def test_add_no_wait_then_worker_indexes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    folder = tmp_path / "docs"
    folder.mkdir()
    shutil.copy(EXAMPLES / "boiler-manual.md", folder)
    queued = json.loads(run_cli("add", str(folder), "--no-wait", "--json", home=home).stdout)
    assert queued[0]["document"]["status"] == "processing"
    assert run_cli("worker", "--once", home=home).returncode == 0
    listed = json.loads(run_cli("list", "--json", home=home).stdout)
    assert listed[0]["status"] == "ready" and listed[0]["chunk_count"] > 0


def test_include_exclude_globs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    added = json.loads(
        run_cli(
            "add", str(EXAMPLES), "--include", "*.md", "--exclude", "meeting*", "--json", home=home
        ).stdout
    )
    assert [Path(o["source"]).name for o in added] == ["boiler-manual.md"]
