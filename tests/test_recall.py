"""Recall for agents: the store's newest-first reads (both backends), and `loci recall`, the
session-start brief as a command (what the MCP `session_start` prompt gives)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loci.graph import writer
from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli


@pytest.mark.both_backends
def test_recent_documents_are_newest_first_within_the_limit_and_kinds(
    loci: Loci, brain: Brain
) -> None:
    notes = [
        loci.library.add_note(brain, f"Note number {i} about otters.").document for i in range(5)
    ]
    page = loci.graph.create(brain, actor="test", doc_type="concept", title="Otters")
    other = loci.brain("elsewhere")
    loci.library.add_note(other, "A newer note in another brain.")

    recent = loci.library.recent_documents(brain, 3, ("note",))
    assert [d.id for d in recent] == [n.id for n in reversed(notes)][:3]
    newest_any_kind = loci.library.recent_documents(brain, 1)
    assert newest_any_kind[0].id == page.document_id  # the page's indexed document came last
    assert len(loci.library.recent_documents(brain, 50)) == 6  # the other brain's note is not here


@pytest.mark.both_backends
def test_recently_updated_pages_put_the_last_edit_first(
    loci: Loci, brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    graph = loci.graph
    clock = iter(f"2026-03-0{day}T09:00:00Z" for day in range(1, 10))
    monkeypatch.setattr(writer, "now", lambda: next(clock))  # one write a day
    for title in ("Alpha", "Beta", "Gamma"):
        graph.create(brain, actor="test", doc_type="concept", title=title, text=f"{title} page.")
    graph.append_timeline(brain, "alpha", "Alpha changed.", actor="test")

    assert [s.id for s in graph.recently_updated(brain, 2)] == ["alpha", "gamma"]
    assert [s.id for s in graph.recently_updated(brain, 10)] == ["alpha", "gamma", "beta"]


def test_loci_recall_prints_recent_notes_and_timeline(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    graph = loci.graph
    graph.create(brain, actor="test", doc_type="project", title="Garden", text="The garden.")
    graph.append_timeline(
        brain, "garden", "Compost bins ordered for the garden", actor="test", at="2026-03-04"
    )
    for i in range(3):
        loci.library.add_note(brain, f"Old note {i}: nothing to see.")
    fresh = loci.library.add_note(
        brain, "Kelp grows sixty centimetres a day.", title="Kelp"
    ).document
    loci.library.wait_for(brain, [d.id for d in loci.library.documents(brain, status="processing")])
    home = tmp_path / "home"  # the `loci` fixture's data directory

    shown = run_cli("recall", "--limit", "2", home=home)
    assert shown.returncode == 0, shown.stderr
    text = shown.stdout
    assert text.startswith('# Context from the Loci brain "default"')
    assert "2026-03-04 · garden: Compost bins ordered for the garden" in text
    assert f"[note {fresh.id}] Kelp" in text and "sixty centimetres" in text
    assert "Old note 0" not in text  # three notes are older than the two the limit keeps

    as_json = run_cli("recall", "--json", "--brain", "default", home=home)
    assert as_json.returncode == 0, as_json.stderr
    recalled = json.loads(as_json.stdout)
    assert recalled["brain"] == "default"
    assert recalled["documents"][0]["id"] == fresh.id
    assert recalled["timeline"][0]["text"] == "Compost bins ordered for the garden"

    missing = run_cli("recall", "--brain", "nope", home=home)
    assert missing.returncode == 3 and "no brain 'nope'" in missing.stderr
