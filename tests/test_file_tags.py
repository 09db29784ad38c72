"""A Markdown file's frontmatter `tags:` are the document's tags: `loci list --tag house` and a
search filtered by tag find a note tagged `house` in its own frontmatter. Its `aliases:` are the
names it also goes by: a search for one finds the note, cited at the frontmatter lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.models import Brain, Hit, SearchFilters
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support.cli import run_cli

pytestmark = pytest.mark.both_backends

BOILER = b"""---
title: Boiler service
tags: [house, "#boiler", "  ", house]
---

The boiler is serviced every October by Marsh Heating; the pressure should sit at 1.5 bar.
"""


def test_frontmatter_tags_join_the_tags_given_and_follow_the_file(loci: Loci, brain: Brain) -> None:
    added = loci.library.add_bytes(brain, "boiler.md", BOILER, tags=("manual",))
    loci.library.wait_for(brain, [added.document.id])

    doc = loci.library.document(brain, added.document.id)
    assert doc.tags == ("manual", "house", "boiler")  # `#boiler` is Obsidian's way to say boiler
    assert doc.title == "Boiler service"
    assert [d.id for d in loci.library.documents(brain, tag="house")] == [doc.id]
    found = loci.searching.search(
        brain, SearchRequest("boiler pressure", filters=SearchFilters(tags=("boiler",)))
    )
    assert found and found[0].citation.document_id == doc.id

    # The next version of the file names other tags: the ones it dropped leave, those given
    # when it was added stay.
    loci.store.set_extracted({doc.id: ({"parser": "markdown"}, ["house", "heating"])})
    assert loci.library.document(brain, doc.id).tags == ("manual", "house", "heating")


def test_loci_list_by_a_frontmatter_tag(tmp_path: Path, database_url: str | None) -> None:
    home = tmp_path / "cli"
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "boiler.md").write_bytes(BOILER)
    (tmp_path / "notes" / "car.md").write_text("The car goes in for its MOT in May.\n")
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    assert run_cli("add", str(tmp_path / "notes"), home=home, env=env).returncode == 0
    listed = run_cli("list", "--tag", "house", "--json", home=home, env=env)
    assert listed.returncode == 0, listed.stderr
    assert [d["name"] for d in json.loads(listed.stdout)] == ["boiler.md"]


def _search_beside_another(
    loci: Loci, brain: Brain, name: str, note: bytes, question: str
) -> tuple[int, list[Hit]]:
    """Add the note and an unrelated one, index both, and search the words: the note's id and
    the hits."""
    added = loci.library.add_bytes(brain, name, note)
    other = loci.library.add_bytes(brain, "car.md", b"The car's MOT is due in May.\n")
    loci.library.wait_for(brain, [added.document.id, other.document.id])
    hits = loci.searching.search(brain, SearchRequest(question, mode="text"))
    return added.document.id, hits


def test_a_note_is_found_by_a_name_its_frontmatter_gives_it(loci: Loci, brain: Brain) -> None:
    note = b"""---
title: Boiler service
aliases:
  - Worcester Greenstar
  - combi
---

Serviced every October; the pressure should sit at 1.5 bar.
"""
    note_id, hits = _search_beside_another(loci, brain, "boiler.md", note, "greenstar")
    assert [h.citation.document_id for h in hits] == [note_id]
    assert "Worcester Greenstar" in hits[0].snippet
    assert hits[0].citation.location.line_start == 3  # where `aliases:` is written


def test_a_note_is_found_by_the_description_its_frontmatter_gives(loci: Loci, brain: Brain) -> None:
    # A published page's frontmatter often says what the page is about in words its body
    # never uses; the description is searchable text, cited where it is written.
    note = b"""---
title: Embeds
description: >-
  Inline embedding of one page's content
  inside another.
tags: glossary
---

The syntax is `![[page name]]`; `![[page name#header]]` takes one section.
"""
    question = "embedding content inside"
    note_id, hits = _search_beside_another(loci, brain, "embeds.md", note, question)
    assert [h.citation.document_id for h in hits] == [note_id]
    assert "Inline embedding of one page's content inside another." in hits[0].snippet
    assert hits[0].citation.location.line_start == 3  # where `description:` is written
    assert loci.library.document(brain, note_id).tags == ("glossary",)
