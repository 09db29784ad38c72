"""`loci brains` and `--brain NAME` as a person runs them: real subprocesses on a temporary data
directory. A read names an existing brain (or the default one); only adding starts a new one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli import run_cli


def brains(home: Path) -> list[dict[str, Any]]:
    done = run_cli("brains", "--json", home=home)
    assert done.returncode == 0, done.stderr
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def index_files(home: Path) -> dict[str, int]:
    """The saved BM25 index and vector matrix files, by name, with their modification times."""
    return {p.name: p.stat().st_mtime_ns for p in (home / "index").iterdir()}


def test_create_add_rename_search_and_remove_a_brain(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert brains(home) == []
    made = run_cli("brains", "create", "work", "--json", home=home)
    assert made.returncode == 0, made.stderr
    work = json.loads(made.stdout)
    assert (work["name"], work["documents"], work["visibility"]) == ("work", 0, "restricted")

    # Adding to a brain that does not exist yet starts it.
    boat = tmp_path / "boat.txt"
    boat.write_text("The boathouse key hangs behind the blue door in the shed.\n")
    added = run_cli("add", str(boat), "--brain", "notes", "--json", home=home)
    assert added.returncode == 0, added.stderr
    found = run_cli("search", "where is the boathouse key", "-b", "notes", "--json", home=home)
    assert found.returncode == 0, found.stderr
    assert json.loads(found.stdout)["hits"][0]["name"] == "boat.txt"
    saved = index_files(home)  # the search saved the brain's BM25 index and vector matrix
    assert any(n.startswith("bm25-brain-") for n in saved), saved
    assert any(n.startswith("vectors-brain-") for n in saved), saved

    listed = {b["name"]: b for b in brains(home)}
    assert sorted(listed) == ["notes", "work"]
    notes = listed["notes"]
    assert notes["documents"] == 1 and notes["chunks"] >= 1
    assert notes["embedder_model"] and notes["embedder_dims"] == 384
    assert listed["work"]["embedder_model"] is None
    human = run_cli("brains", "list", home=home)
    assert human.returncode == 0, human.stderr
    header, *lines = human.stdout.splitlines()
    assert header.split() == ["name", "documents", "chunks", "embedder", "visibility", "created"]
    assert [line.split()[0] for line in lines] == ["notes", "work"]

    renamed = run_cli("brains", "rename", "notes", "journal", "--json", home=home)
    assert renamed.returncode == 0, renamed.stderr
    after = json.loads(renamed.stdout)
    assert after["renamed_from"] == "notes"
    assert (after["brain"]["name"], after["brain"]["id"]) == ("journal", notes["id"])
    again = run_cli("search", "where is the boathouse key", "-b", "journal", "--json", home=home)
    assert again.returncode == 0, again.stderr
    hit = json.loads(again.stdout)["hits"][0]
    assert hit["name"] == "boat.txt" and hit["matched_by"] == "both"
    # The saved files are keyed by the brain's id: reused as they were, not rebuilt.
    assert index_files(home) == saved
    old = run_cli("list", "--brain", "notes", home=home)
    assert old.returncode == 3

    dry = run_cli("brains", "rm", "journal", home=home)
    assert dry.returncode == 0, dry.stderr
    assert "would delete brain journal: 1 document," in dry.stdout
    assert "Nothing was deleted" in dry.stdout
    assert [b["documents"] for b in brains(home) if b["name"] == "journal"] == [1]
    kept = run_cli("list", "-b", "journal", "--json", home=home)
    assert [d["name"] for d in json.loads(kept.stdout)] == ["boat.txt"]

    gone = run_cli("brains", "rm", "journal", "--yes", "--json", home=home)
    assert gone.returncode == 0, gone.stderr
    report = json.loads(gone.stdout)
    assert report["deleted"] is True and report["brain"]["documents"] == 1
    assert [b["name"] for b in brains(home)] == ["work"]
    assert not any(p.is_file() for p in (home / "blobs").rglob("*"))  # its original went too


def test_bad_duplicate_and_unknown_names_are_refused_with_one_line(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for args in (
        ("brains", "create", "bad name"),
        ("brains", "create", "x" * 65),
        ("note", "a note", "--brain", "no/slashes"),
    ):
        done = run_cli(*args, home=home)
        assert done.returncode == 1, args
        assert done.stderr.count("\n") == 1 and "must be 1–64 letters" in done.stderr, args
    assert brains(home) == []  # the refused note made no brain (not even the default)

    assert run_cli("brains", "create", "work", home=home).returncode == 0
    assert run_cli("brains", "create", "play", home=home).returncode == 0
    twice = run_cli("brains", "create", "work", home=home)
    assert twice.returncode == 1 and "a brain named 'work' already exists" in twice.stderr
    taken = run_cli("brains", "rename", "play", "work", home=home)
    assert taken.returncode == 1 and "already exists" in taken.stderr
    bad = run_cli("brains", "rename", "play", "two words", home=home)
    assert bad.returncode == 1 and "must be 1–64 letters" in bad.stderr
    for args in (("rename", "missing", "other"), ("rm", "missing", "--yes")):
        done = run_cli("brains", *args, home=home)
        assert done.returncode == 3, args
        assert done.stderr.strip() == "error: no brain 'missing' (`loci brains` lists them)"
    assert sorted(b["name"] for b in brains(home)) == ["play", "work"]


READS = (
    ("list",),
    ("search", "anything"),
    ("status",),
    ("ask", "what is here?"),
    ("conversations", "list"),
    ("reindex",),
    ("brain", "list"),
    ("brain", "sync", "."),
)


def test_a_read_in_an_unknown_brain_fails_and_creates_nothing(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for command in READS:
        done = run_cli(*command, "--brain", "typo", home=home)
        assert done.returncode == 3, command
        assert done.stdout == "", command
        assert done.stderr.splitlines() == [
            "error: no brain 'typo' (create it with `loci brains create typo`; "
            "`loci brains` lists them)"
        ], command
    assert brains(home) == []


def test_the_default_brain_is_still_made_on_first_use_and_kept_unless_yes(tmp_path: Path) -> None:
    home = tmp_path / "home"
    listed = run_cli("list", "--json", home=home)
    assert listed.returncode == 0 and json.loads(listed.stdout) == []
    assert [(b["name"], b["default"]) for b in brains(home)] == [("default", True)]

    dry = run_cli("brains", "rm", "default", home=home)
    assert dry.returncode == 0
    assert "is the default brain" in dry.stdout and "needs --yes" in dry.stdout
    assert [b["name"] for b in brains(home)] == ["default"]
    gone = run_cli("brains", "rm", "default", "--yes", home=home)
    assert gone.returncode == 0 and "deleted brain default" in gone.stdout
    assert brains(home) == []


def test_graph_pages_can_start_a_brain_and_are_counted(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = run_cli(
        "brain", "create", "--type", "person", "--title", "Ana Lopez", "--text",
        "Ana runs the boathouse.", "--brain", "people", "--no-wait", "--json", home=home,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    row = next(b for b in brains(home) if b["name"] == "people")
    assert row["graph_pages"] == 1 and row["documents"] == 1
    dry = run_cli("brains", "rm", "people", "--json", home=home)
    assert json.loads(dry.stdout) == {"deleted": False, "brain": row}


def test_json_goes_after_the_subcommand(tmp_path: Path) -> None:
    done = run_cli("brains", "--json", "create", "work", home=tmp_path / "home")
    assert done.returncode == 2 and "put --json after the subcommand" in done.stderr
    assert brains(tmp_path / "home") == []
