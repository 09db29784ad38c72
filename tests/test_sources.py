"""Registered folders and `loci sync`: a folder's files become documents and stay in step with
it — an edit updates the document in place, a rename keeps it (same id) under its new name, a
deleted file's document goes (or stays, if the person chose so), a bad file fails alone with
its reason, and a folder that is not there deletes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from loci.errors import InvalidInput
from loci.mcp.stdio import local_server
from loci.models import Brain, Hit
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.wire.documents import DocumentOut
from tests.support.cli import run_cli, run_cli_process
from tests.support.folders import RECIPE, capped, sync_counts, sync_folders
from tests.support.mcp_results import ok
from tests.support.services import texts

__all__ = ["capped"]  # a fixture (tests/support/folders.py): pytest finds it here

pytestmark = pytest.mark.both_backends

LESSON = "# Piano\n\nThe piano lesson is on Tuesday at 5pm with Mrs Okafor.\n"
BILL = "Water bill: 42.10 GBP, due on the third of March.\n"


def _hits(loci: Loci, brain: Brain, query: str) -> list[Hit]:
    return loci.searching.search(brain, SearchRequest(query, mode="text", limit=10))


@pytest.fixture
def vault(tmp_path: Path) -> Path:
    folder = tmp_path / "vault"
    (folder / "music").mkdir(parents=True)
    (folder / ".obsidian").mkdir()
    (folder / "music" / "lesson.md").write_text(LESSON)
    (folder / "bill.txt").write_text(BILL)
    (folder / "soup.md").write_text(RECIPE)
    (folder / ".obsidian" / "workspace.json").write_text('{"open": "soup.md"}')
    # Links are never followed: not out of the folder, not round in a loop.
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.md").write_text("The safe's code is 0451.\n")
    (folder / "secret.md").symlink_to(outside / "secret.md")
    (folder / "elsewhere").symlink_to(outside, target_is_directory=True)
    (folder / "music" / "loop").symlink_to(folder, target_is_directory=True)
    return folder


def test_a_sync_adds_updates_renames_and_removes_as_the_folder_changed(
    loci: Loci, brain: Brain, vault: Path
) -> None:
    loci.sources.add(brain, vault)
    first = sync_folders(loci, brain)
    assert sync_counts(first)["added"] == 3 and not first.failed
    names = {d.name: d.id for d in loci.library.documents(brain)}
    assert set(names) == {"lesson.md", "bill.txt", "soup.md"}  # no .obsidian, no links
    assert first.files == 3 and not texts(loci, brain, "safe code")

    (vault / "music" / "lesson.md").write_text(LESSON.replace("Tuesday at 5pm", "Friday at 4pm"))
    (vault / "garden.md").write_text("Plant the tulip bulbs before the first frost.\n")
    (vault / "bill.txt").rename(vault / "water-bill.txt")
    (vault / "soup.md").unlink()
    second = sync_folders(loci, brain)
    assert sync_counts(second) == {
        "added": 1, "updated": 1, "renamed": 1, "removed": 1, "gone": 0, "unchanged": 0
    }  # fmt: skip
    documents = {d.name: d for d in loci.library.documents(brain)}
    assert set(documents) == {"lesson.md", "water-bill.txt", "garden.md"}
    assert documents["water-bill.txt"].id == names["bill.txt"]
    assert documents["water-bill.txt"].source_path == str((vault / "water-bill.txt").resolve())
    assert documents["lesson.md"].id == names["lesson.md"]
    assert all(d.status == "ready" for d in documents.values())

    assert any("Friday at 4pm" in t for t in texts(loci, brain, "piano lesson Friday"))
    assert not any("5pm" in t for t in texts(loci, brain, "piano lesson 5pm"))
    assert not texts(loci, brain, "lentil soup cumin")
    assert any("tulip" in t for t in texts(loci, brain, "tulip bulbs"))
    assert any("Water bill" in t for t in texts(loci, brain, "water bill"))

    third = sync_folders(loci, brain)
    assert sync_counts(third)["unchanged"] == 3 and sum(sync_counts(third).values()) == 3
    assert loci.sources.list(brain)[0].last_report == third.as_report()


def test_a_file_that_cannot_be_read_or_is_too_large_fails_alone_with_its_reason(
    capped: Loci, vault: Path
) -> None:
    brain = capped.brain("default")
    (vault / "scan.txt").write_text("x" * 20_000)  # over the 10 KB cap of this service
    locked = vault / "locked.md"
    locked.write_text("A private note.\n")
    locked.chmod(0)
    readable = os.access(locked, os.R_OK)  # root reads it anyway: then only the cap is tested
    try:
        capped.sources.add(brain, vault)
        result = sync_folders(capped, brain)
    finally:
        locked.chmod(0o644)
    reasons = {Path(f.path).name: f.reason for f in result.failed}
    assert "limit is" in reasons.pop("scan.txt")
    if not readable:
        assert "Permission denied" in reasons.pop("locked.md")
    assert not reasons
    assert result.added == (4 if readable else 3)
    assert {d.name for d in capped.library.documents(brain)} >= {"lesson.md", "bill.txt"}


def test_a_folder_that_is_not_there_deletes_nothing(
    loci: Loci, brain: Brain, vault: Path, tmp_path: Path
) -> None:
    loci.sources.add(brain, vault)
    sync_folders(loci, brain)
    kept = [d.id for d in loci.library.documents(brain)]

    away = tmp_path / "elsewhere"
    vault.rename(away)  # the drive unplugged
    gone = sync_folders(loci, brain)
    assert gone.unreachable and "not there" in gone.unreachable
    assert [d.id for d in loci.library.documents(brain)] == kept
    assert loci.sources.list(brain)[0].last_report["unreachable"] == gone.unreachable  # type: ignore[index]

    vault.mkdir()  # an empty mount point left behind
    empty = sync_folders(loci, brain)
    assert empty.unreachable and "empty" in empty.unreachable
    assert [d.id for d in loci.library.documents(brain)] == kept

    vault.rmdir()
    away.rename(vault)  # plugged in again
    back = sync_folders(loci, brain)
    assert back.unreachable is None and sync_counts(back)["unchanged"] == 3


def _mcp_search(loci: Loci, query: str) -> list[dict[str, Any]]:
    async def ask() -> list[dict[str, Any]]:
        async with Client(local_server(loci)) as client:
            return list(ok(await client.call_tool("search", {"query": query}))["hits"])

    return anyio.run(ask)


def test_with_keep_deleted_a_deleted_file_keeps_its_document_marked_gone(
    loci: Loci, brain: Brain, vault: Path
) -> None:
    loci.sources.add(brain, vault, on_delete="keep")
    sync_folders(loci, brain)
    soup = next(d for d in loci.library.documents(brain) if d.name == "soup.md")
    assert soup.gone_at is None
    (vault / "soup.md").unlink()
    result = sync_folders(loci, brain)
    assert result.gone == 1 and result.removed == 0
    kept = loci.library.document(brain, soup.id)
    assert kept.gone_at is not None and kept.source_path == soup.source_path
    # Still found, marked: by search, over MCP and in the API's document.
    hits = loci.searching.search(brain, SearchRequest("lentil soup cumin", mode="text"))
    assert [(h.citation.document_id, h.gone_at) for h in hits] == [(soup.id, kept.gone_at)]
    best, *rest = _mcp_search(loci, "lentil soup cumin")
    assert (best["document_id"], best["gone_at"]) == (soup.id, kept.gone_at)
    assert all(h["gone_at"] is None for h in rest)
    assert DocumentOut.of(kept, brain).gone_at == kept.gone_at
    others = [d for d in loci.library.documents(brain) if d.id != soup.id]
    assert others and all(d.gone_at is None for d in others)

    again = sync_folders(loci, brain)  # marked once: a later sync counts and changes nothing
    assert (again.gone, again.returned) == (0, 0)
    assert loci.library.document(brain, soup.id).gone_at == kept.gone_at

    (vault / "soup.md").write_text(RECIPE)  # the file is back: no longer gone
    back = sync_folders(loci, brain)
    assert (back.returned, back.unchanged, back.added) == (1, 3, 0)
    assert loci.library.document(brain, soup.id).gone_at is None
    assert [h.gone_at for h in _hits(loci, brain, "lentil soup cumin")] == [None]

    # Gone again, then back under another name: the same document, moved, not gone.
    (vault / "soup.md").unlink()
    assert sync_folders(loci, brain).gone == 1
    (vault / "music" / "lentil-soup.md").write_text(RECIPE)
    moved = sync_folders(loci, brain)
    assert moved.renamed == 1 and moved.added == 0
    now = loci.library.document(brain, soup.id)
    assert now.gone_at is None and now.name == "lentil-soup.md"


def test_a_folder_inside_or_around_a_source_is_refused(
    loci: Loci, brain: Brain, vault: Path, tmp_path: Path
) -> None:
    loci.sources.add(brain, vault / "music")
    with pytest.raises(InvalidInput, match="one source only"):
        loci.sources.add(brain, vault)
    with pytest.raises(InvalidInput, match="already source"):
        loci.sources.add(brain, vault / "music")
    with pytest.raises(InvalidInput, match="not a folder"):
        loci.sources.add(brain, vault / "bill.txt")
    # another brain may follow the same folder: each keeps its own documents
    assert loci.sources.add(loci.brain("work"), vault).path == str(vault.resolve())


def test_the_commands_register_sync_list_and_stop_following_folders(
    tmp_path: Path, vault: Path, database_url: str | None
) -> None:
    home = tmp_path / "cli"
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    other = tmp_path / "papers"
    other.mkdir()
    (other / "thesis.md").write_text("The thesis defence is in June.\n")

    def cli(*args: str) -> object:
        done = run_cli(*args, home=home, env=env)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout) if "--json" in args else done.stdout

    added = cli("sources", "add", str(vault), "--exclude", "*.txt", "--json")
    assert isinstance(added, dict) and added["exclude"] == ["*.txt"]
    cli("sources", "add", str(other), "--keep-deleted")
    nested = run_cli("sources", "add", str(vault / "music"), home=home, env=env)
    assert nested.returncode == 1 and "inside source" in nested.stderr

    synced = cli("sync", "--json")
    assert isinstance(synced, dict) and synced["ok"]
    assert [(s["path"], s["added"]) for s in synced["sources"]] == [
        (str(vault.resolve()), 2),
        (str(other.resolve()), 1),
    ]
    listed = cli("sources", "list", "--json")
    assert isinstance(listed, list)
    assert [(s["files"], s["errors"], s["on_delete"]) for s in listed] == [
        (2, [], "remove"),
        (1, [], "keep"),
    ]
    assert all(s["last_sync_at"] for s in listed)
    found = cli("search", "piano lesson", "--json")
    assert isinstance(found, dict) and found["hits"]

    (other / "viva.md").write_text("The viva is on the ninth.\n")  # (an empty folder: unmounted)
    (other / "thesis.md").unlink()  # kept (--keep-deleted), and shown as deleted
    assert "1 added, 1 gone" in str(cli("sync"))
    (thesis,) = [d for d in cli("list", "--json") if d["name"] == "thesis.md"]  # type: ignore[attr-defined]
    assert thesis["gone_at"]
    assert "thesis.md · file deleted" in " ".join(str(cli("list")).split())
    shown = " ".join(str(cli("show", str(thesis["id"]))).split())
    assert f"file {(other / 'thesis.md').resolve()}" in shown
    assert "deleted the file was deleted" in shown
    assert "file deleted" in str(cli("search", "thesis defence"))

    kept = cli("sources", "rm", str(listed[1]["id"]), "--keep-documents")
    assert "stay" in str(kept)
    removed = cli("sources", "rm", str(listed[0]["id"]), "--json")
    assert isinstance(removed, dict) and removed["documents_removed"] == 2
    documents = cli("list", "--json")
    assert isinstance(documents, list)
    assert [d["name"] for d in documents] == ["thesis.md", "viva.md"]
    assert cli("sources", "list", "--json") == []


def test_a_file_that_fails_to_index_is_a_sync_failure_until_fixed(tmp_path: Path) -> None:
    home = tmp_path / "cli"
    folder = tmp_path / "a folder whose name is long enough to be cut at eighty columns"
    folder.mkdir()
    (folder / "plan.md").write_text("Paint the shed in May.\n")
    (folder / "drawing.xyz").write_bytes(b"\x00\x01 not a format Loci reads \x02")
    assert run_cli("sources", "add", str(folder), home=home).returncode == 0

    first = run_cli("sync", home=home)
    assert first.returncode == 4, first.stdout  # partly done: a file needs the person
    said = " ".join(first.stdout.split())
    # both files were taken (stored); one could not be read
    assert "2 added, 1 failed" in said and "drawing.xyz — no parser for this type" in said
    again = run_cli("sync", home=home)  # nothing changed: the file still fails
    assert "1 unchanged, 1 failed" in " ".join(again.stdout.split())
    assert "`loci reprocess" in again.stdout and again.returncode == 4

    (listed,) = json.loads(run_cli("sources", "list", "--json", home=home).stdout)
    assert [Path(e["path"]).name for e in listed["errors"]] == ["drawing.xyz"]
    # as a terminal 80 columns wide shows it (a process of its own reads its width)
    table = run_cli_process("sources", "list", home=home, env={"COLUMNS": "80"}).stdout
    assert all(len(line) <= 80 for line in table.splitlines() if "✗" not in line)
    assert "eighty" in table.replace("\n", " ") and "…" not in table  # the path wraps, whole
    assert "drawing.xyz — no parser for this type" in " ".join(table.split())

    (folder / "drawing.xyz").write_text("Now it is plain text about the shed.\n")
    fixed = run_cli("sync", home=home)
    assert fixed.returncode == 0 and "1 updated" in fixed.stdout


def test_on_postgresql_a_brains_sources_follow_its_row_policy(
    loci: Loci, backend: str, tmp_path: Path
) -> None:
    if backend != "postgres":
        pytest.skip("row-level security is PostgreSQL's")
    import psycopg

    from loci.store.postgres import PostgresStore

    store = loci.store
    assert isinstance(store, PostgresStore)
    a, b = loci.brain("a"), loci.brain("b")
    for brain in (a, b):
        folder = tmp_path / brain.name
        folder.mkdir()
        loci.sources.add(brain, folder)
    # A query that forgets the brain condition, in brain A's transaction: A's sources only.
    assert [r["brain_id"] for r in store.db.rows("SELECT * FROM sources", (), a.id)] == [a.id]
    with pytest.raises(psycopg.errors.InsufficientPrivilege), store.db.tx(a.id) as cur:
        cur.execute("INSERT INTO sources(brain_id, path) VALUES (%s, '/x')", (b.id,))
    loci.delete_brain(b)  # its sources go with it
    assert [s.brain_id for s in loci.sources.list()] == [a.id]


def test_a_file_added_by_hand_that_the_globs_leave_out_is_not_the_sources_to_remove(
    loci: Loci, brain: Brain, vault: Path
) -> None:
    by_hand = loci.library.add_file(brain, vault / "bill.txt").document
    loci.sources.add(brain, vault, exclude=["*.txt"])
    result = sync_folders(loci, brain)
    assert (result.added, result.removed) == (2, 0)
    _, removed = loci.sources.remove(brain, loci.sources.list(brain)[0].id, keep_documents=False)
    assert removed == 2
    assert [d.id for d in loci.library.documents(brain)] == [by_hand.id]
