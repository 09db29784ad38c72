"""A file added from a path is that path's document: adding the path again after an edit
updates it (the same id, so citations hold; the old text is no longer found) instead of keeping
both versions; the same bytes under another name still dedupe; tags given again apply to files
already here."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support.cli import run_cli

pytestmark = pytest.mark.both_backends

JOURNAL = "# Journal\n\nThe piano lesson is on Tuesday at 5pm with Mrs Okafor.\n"
EDITED = JOURNAL.replace("Tuesday at 5pm", "Thursday at 6pm") + "\nBring the new scales book.\n"


def _texts(loci: Loci, brain: Brain, query: str) -> list[str]:
    hits = loci.searching.search(brain, SearchRequest(query, mode="text", limit=10))
    return [h.text for h in hits]


def test_an_edited_file_added_again_is_the_same_document_with_its_new_text(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    journal = tmp_path / "notes" / "journal.md"
    journal.parent.mkdir()
    journal.write_text(JOURNAL)
    first = loci.library.add_file(brain, journal)
    loci.library.wait_for(brain, [first.document.id])

    journal.write_text(EDITED)
    # the dry run says what the add will do: update this document, not add a second
    planned = loci.library.preflight(brain, paths=[journal]).items[0]
    assert planned.outcome == "add" and planned.replaces is not None
    assert planned.replaces.id == first.document.id
    again = loci.library.add_file(brain, journal)
    assert again.refreshed and not again.deduped
    assert again.document.id == first.document.id
    loci.library.wait_for(brain, [again.document.id])

    assert [d.id for d in loci.library.documents(brain)] == [first.document.id]
    assert any("Thursday at 6pm" in t for t in _texts(loci, brain, "piano lesson Thursday"))
    assert not any("5pm" in t for t in _texts(loci, brain, "piano lesson 5pm"))
    assert any("scales book" in t for t in _texts(loci, brain, "scales book"))

    # unchanged: nothing happens; the same bytes under another name are the same document
    assert loci.library.preflight(brain, paths=[journal]).items[0].outcome == "duplicate"
    assert loci.library.add_file(brain, journal).deduped
    copy = tmp_path / "copy-of-journal.md"
    copy.write_text(EDITED)
    assert loci.library.add_file(brain, copy).document.id == first.document.id


def test_tags_given_again_apply_to_a_file_already_here(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    bill = tmp_path / "bill.txt"
    bill.write_text("Water bill: 42.10 GBP, due on 3 March.")
    added = loci.library.add_file(brain, bill)
    again = loci.library.add_file(brain, bill, tags=("house",))
    assert again.deduped and again.document.id == added.document.id
    assert again.document.tags == ("house",)
    assert [d.id for d in loci.library.documents(brain, tag="house")] == [added.document.id]


def test_loci_add_of_a_folder_again_after_an_edit_keeps_one_document(
    tmp_path: Path, database_url: str | None
) -> None:
    home = tmp_path / "cli"
    folder = tmp_path / "vault"
    folder.mkdir()
    (folder / "journal.md").write_text(JOURNAL)
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    assert run_cli("add", str(folder), home=home, env=env).returncode == 0
    (folder / "journal.md").write_text(EDITED)
    again = run_cli("add", str(folder), "--json", home=home, env=env)
    assert again.returncode == 0, again.stderr
    assert [o["refreshed"] for o in json.loads(again.stdout)] == [True]
    listed = json.loads(run_cli("list", "--json", home=home, env=env).stdout)
    assert [d["name"] for d in listed] == ["journal.md"]
    found = json.loads(run_cli("search", "piano lesson", "--json", home=home, env=env).stdout)
    assert all("5pm" not in h["text"] for h in found["hits"])
