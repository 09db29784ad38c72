"""The brain graph in and out of folders: import (an Obsidian vault too), export, and
materialize/sync with a conflicting edit."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

import pytest

from loci.errors import Conflict, InvalidInput
from loci.graph.document import parse
from loci.graph.service import BrainGraph
from loci.graph.sync_manifest import MANIFEST
from loci.graph.transfer import GraphTransfer
from loci.graph.transfer_results import TransferReport
from loci.models import Brain
from tests.support.cli import run_cli
from tests.support.graph_pages import ACME, ANA, KICKOFF

GARDEN = """# The Garden

Run by [[Ana Lopez]] with [[Seed Swap|the swap]] and [[Nowhere]].

![[beds.png]]
"""
SEED_SWAP = """---
tags: [idea, garden]
aliases: [Swap]
---
Swap seeds each **spring**.
"""


def write(root: Path, files: Mapping[str, str | bytes]) -> None:
    for rel, content in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content.encode() if isinstance(content, str) else content)


def tree(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.name.startswith(".")
    }


def actions(report: TransferReport) -> dict[str, str]:
    return {f.path: f.action for f in report.files}


def test_import_stores_documents_byte_for_byte_and_converts_a_vault(
    graph: BrainGraph, brain: Brain, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    graph_files = {
        "people/ana-lopez.md": ANA,
        "companies/acme.md": ACME,
        "evidence/meetings/ev-kickoff.md": KICKOFF,
    }
    write(vault, graph_files)
    write(
        vault,
        {
            "Garden Project.md": GARDEN,
            "Ideas/Seed Swap.md": SEED_SWAP,
            "broken.md": ACME.replace("id: acme", "id: broken").replace("draft", "bogus"),
            "elsewhere/acme-again.md": ACME,  # a second file claiming acme
            "latin1.md": "caf\xe9".encode("latin-1"),
            ".obsidian/workspace.md": "not a note",
        },
    )
    transfer = GraphTransfer(graph)
    report = transfer.import_folder(brain, vault, actor="test")
    assert actions(report) == {
        "Garden Project.md": "created",
        "Ideas/Seed Swap.md": "created",
        "broken.md": "refused",
        "companies/acme.md": "created",
        "elsewhere/acme-again.md": "refused",
        "evidence/meetings/ev-kickoff.md": "created",
        "latin1.md": "refused",
        "people/ana-lopez.md": "created",
    }
    by_path = {f.path: f for f in report.files}
    assert "status: 'bogus' must be one of" in by_path["broken.md"].problems[0]
    assert "claimed by more than one file" in by_path["elsewhere/acme-again.md"].problems[0]
    assert "UTF-8" in by_path["latin1.md"].problems[0]
    assert report.counts == {"created": 5, "refused": 3} and len(report.failed) == 3

    # brain documents are stored exactly as they were, and their edges derived
    for text in graph_files.values():
        assert graph.get(brain, parse(text).id).content == text
    assert graph.get(brain, "ana-lopez").doc.created == "2026-03-04T10:00:00Z"
    # plain Markdown became draft notes; wikilinks that name a page became page links
    garden = graph.get(brain, "garden-project")
    assert (
        garden.summary.path == "inbox/garden-project.md" and by_path["Garden Project.md"].converted
    )
    assert (garden.doc.type, garden.doc.status, garden.doc.title) == ("note", "draft", "The Garden")
    assert "[[page:ana-lopez|Ana Lopez]]" in garden.doc.truth
    assert "[[page:seed-swap|the swap]]" in garden.doc.truth
    assert "[[Nowhere]]" in garden.doc.truth and "![[beds.png]]" in garden.doc.truth
    assert {(e.type, e.target) for e in garden.links} == {
        ("wiki_link", "ana-lopez"), ("wiki_link", "seed-swap"),
    }  # fmt: skip
    assert "1 wikilink(s) name no page" in by_path["Garden Project.md"].message
    swap = graph.get(brain, "seed-swap")
    assert swap.summary.folder == "ideas" and swap.doc.title == "Seed Swap"
    assert swap.doc.aliases == ("Swap",) and swap.doc.extra["tags"] == ["idea", "garden"]

    # importing again changes nothing; an edited file updates its document, keeping history
    again = transfer.import_folder(brain, vault, actor="test")
    assert again.counts == {"unchanged": 5, "refused": 3}
    edited = ACME.replace("A seed company.", "A seed and tool company.")
    write(vault, {"companies/acme.md": edited})
    assert actions(transfer.import_folder(brain, vault, actor="test"))["companies/acme.md"] == (
        "updated"
    )
    assert graph.get(brain, "acme").content == edited
    assert [v.action for v in graph.history(brain, "acme")] == ["import"]

    # export: every document at folder/id.md; the files that needed no conversion come back
    # byte for byte
    exported = tmp_path / "out"
    out = transfer.export(brain, exported)
    assert out.counts == {"written": 5}
    files = tree(exported)
    assert set(files) == {
        "people/ana-lopez.md", "companies/acme.md", "evidence/meetings/ev-kickoff.md",
        "inbox/garden-project.md", "ideas/seed-swap.md",
    }  # fmt: skip
    original = tree(vault)
    for rel in ("people/ana-lopez.md", "companies/acme.md", "evidence/meetings/ev-kickoff.md"):
        assert files[rel] == original[rel]
    assert transfer.export(brain, exported).counts == {"unchanged": 5}

    # the export imports into another brain unchanged, and exports to the same tree
    second = graph.store.ensure_brain("second")
    assert transfer.import_folder(second, exported, actor="test").counts == {"created": 5}
    transfer.export(second, tmp_path / "out2")
    assert tree(tmp_path / "out2") == files


def test_a_document_without_a_folder_takes_the_folder_it_sits_in(
    graph: BrainGraph, brain: Brain, tmp_path: Path
) -> None:
    # A vault's documents often name id and kind but leave the folder to where the file is.
    page = "---\nid: {id}\nkind: page\ntype: {type}\ntitle: {title}\n---\n\n{text}\n"
    write(tmp_path / "vault", {
        "people/ben.md": page.format(id="ben", type="person", title="Ben", text="Ben bakes."),
        "projects/garden/beds.md": page.format(
            id="beds", type="project", title="Beds", text="Raised beds."),
        "acme.md": page.format(id="acme", type="company", title="Acme", text="Acme sells tools."),
        "Ideas/Half Baked/idea.md": page.format(
            id="idea", type="concept", title="Idea", text="An idea."),
    })  # fmt: skip
    report = GraphTransfer(graph).import_folder(brain, tmp_path / "vault", actor="test")
    assert actions(report) == {
        "people/ben.md": "created",
        "projects/garden/beds.md": "created",
        "acme.md": "created",
        "Ideas/Half Baked/idea.md": "created",
    }
    assert graph.get(brain, "ben").summary.path == "people/ben.md"
    assert graph.get(brain, "beds").summary.path == "projects/garden/beds.md"
    assert graph.get(brain, "acme").summary.path == "companies/acme.md"  # the type's default
    assert graph.get(brain, "idea").summary.path == "ideas/half-baked/idea.md"  # folders as slugs
    # the rest of the file is kept as it was: only the folder line is added
    stored = graph.get(brain, "ben").content
    assert stored == page.format(id="ben", type="person", title="Ben", text="Ben bakes.").replace(
        "title: Ben\n", "title: Ben\nfolder: people\n"
    )


def test_a_plain_note_never_overwrites_a_document_it_did_not_come_from(
    graph: BrainGraph, brain: Brain, tmp_path: Path
) -> None:
    graph.create(brain, actor="test", doc_type="concept", title="Compost", folder="inbox")
    write(tmp_path / "vault", {"Compost.md": "Heaps and worms.\n", "notes/Compost.md": "Bins.\n"})
    report = GraphTransfer(graph).import_folder(brain, tmp_path / "vault", actor="test")
    result = {f.path: f for f in report.files}
    assert result["Compost.md"].action == "refused"
    assert "did not come from this file" in result["Compost.md"].problems[0]
    # the second file of the same name takes its folder's prefix
    assert result["notes/Compost.md"].action == "created"
    assert result["notes/Compost.md"].id == "notes-compost"
    assert graph.get(brain, "compost").doc.type == "concept"


def test_materialize_and_sync_with_a_conflicting_edit(
    graph: BrainGraph, brain: Brain, tmp_path: Path
) -> None:
    for text in (ANA, ACME, KICKOFF):
        graph.create(brain, actor="test", text=text)
    graph.create(brain, actor="test", doc_type="note", title="Loose idea", text="Maybe bees.")
    graph.create(brain, actor="test", doc_type="note", title="Old idea", text="Maybe goats.")
    work = tmp_path / "work"
    transfer = GraphTransfer(graph)
    made = transfer.materialize(brain, work)
    assert made.counts == {"written": 5}
    manifest = json.loads((work / MANIFEST).read_text())
    assert manifest["brain"] == "default"
    assert manifest["documents"]["acme"]["hash"] == graph.get(brain, "acme").summary.content_hash
    assert (work / "companies/acme.md").read_text() == graph.get(brain, "acme").content

    # in the directory: edit ana and acme, add a page, delete two notes
    ana_file = work / "people/ana-lopez.md"
    ana_text = ana_file.read_text().replace("Ana leads the garden", "Ana leads the whole garden")
    ana_file.write_text(ana_text)
    acme_file = work / "companies/acme.md"
    acme_local = acme_file.read_text().replace("A seed company.", "Local edit.")
    acme_file.write_text(acme_local)
    new_page = ACME.replace("id: acme", "id: bees").replace("title: Acme", "title: Bees")
    write(work, {"concepts/bees.md": new_page})
    (work / "inbox/loose-idea.md").unlink()
    (work / "inbox/old-idea.md").unlink()
    # meanwhile, in the brain: acme and the old idea change
    graph.rewrite(brain, "acme", "Brain edit. Employs [[page:ana-lopez|Ana]].", actor="other")
    graph.rewrite(brain, "old-idea", "Definitely goats.", actor="other")

    report = transfer.sync(brain, work, actor="test")
    assert actions(report) == {
        "people/ana-lopez.md": "updated",
        "companies/acme.md": "conflict",
        "concepts/bees.md": "created",
        "evidence/meetings/ev-kickoff.md": "unchanged",
        "inbox/loose-idea.md": "deleted",
        "inbox/old-idea.md": "conflict",
    }
    conflict = {f.path: f for f in report.files}["companies/acme.md"]
    assert "changed in the brain since it was materialized" in conflict.message
    # synced files are in the brain byte for byte; conflicts overwrote nothing, either way
    assert graph.get(brain, "ana-lopez").content == ana_text
    assert graph.get(brain, "bees").content == new_page
    assert "Brain edit." in graph.get(brain, "acme").content
    assert acme_file.read_text() == acme_local
    assert "Definitely goats." in graph.get(brain, "old-idea").content
    assert [d.id for d in graph.list_documents(brain, folder="inbox")] == ["old-idea"]
    assert graph.history(brain, "ana-lopez")[0].actor == "test"

    # the manifest follows what synced: a second sync only repeats the conflicts
    assert transfer.sync(brain, work, actor="test").counts == {"unchanged": 3, "conflict": 2}
    # an edit that fails validation is refused with what to fix; a duplicate id fails alone
    write(work, {"concepts/bees.md": new_page.replace("type: company", "type: robot")})
    write(work, {"concepts/ana-copy.md": ana_text})
    again = {f.path: f for f in transfer.sync(brain, work, actor="test").files}
    assert again["concepts/bees.md"].action == "refused"
    assert "type: 'robot' must be one of" in again["concepts/bees.md"].problems[0]
    assert again["concepts/ana-copy.md"].action == again["people/ana-lopez.md"].action == "refused"
    assert graph.get(brain, "ana-lopez").content == ana_text  # not deleted, not changed
    (work / "concepts/ana-copy.md").unlink()

    # materializing again would lose unsynced edits: refused unless forced
    with pytest.raises(Conflict, match="not synced back"):
        transfer.materialize(brain, work)
    transfer.materialize(brain, work, force=True)
    assert acme_file.read_text() == graph.get(brain, "acme").content
    assert (work / "inbox/old-idea.md").exists()
    assert transfer.sync(brain, work, actor="test").counts == {"unchanged": 5}
    with pytest.raises(InvalidInput, match="holds no materialized brain"):
        transfer.materialize(brain, tmp_path)  # not empty, no manifest
    with pytest.raises(InvalidInput, match="was not materialized"):
        transfer.sync(brain, tmp_path / "work" / "people", actor="test")


def test_the_cli_imports_materializes_and_syncs(tmp_path: Path) -> None:
    home = tmp_path / "home"
    vault = tmp_path / "vault"
    write(vault, {"people/ana-lopez.md": ANA, "Garden.md": "Run by [[Ana López]].\n"})
    done = run_cli("brain", "import", str(vault), "--json", "--no-wait", home=home)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["counts"] == {"created": 2}
    work = tmp_path / "work"
    done = run_cli("brain", "materialize", str(work), home=home)
    assert done.returncode == 0 and "2 written" in done.stdout, done.stderr
    (work / "inbox/garden.md").write_text("not a brain document\n")
    done = run_cli("brain", "sync", str(work), "--no-wait", home=home)
    assert done.returncode == 4  # some files failed
    assert "refused inbox/garden.md" in done.stdout and "1 refused" in done.stdout
