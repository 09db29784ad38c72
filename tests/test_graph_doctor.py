"""`doctor`: every kind of problem a brain's graph can have is found, a clean brain has none,
and the scratch-brain round trip proves the index works."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from loci.graph import writer
from loci.graph.doctor import Doctor
from loci.graph.service import BrainGraph
from loci.graph.transfer import GraphTransfer
from loci.mcp.stdio import local_server
from loci.models import Brain, OnDelete
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.graph_pages import ACME, ANA, KICKOFF
from tests.support.live_server import LiveServer
from tests.support.mcp_results import ok

ERRORS = {
    "broken-relation", "broken-link", "broken-citation", "alias-collision", "invalid", "index",
    "missing-source",
}  # fmt: skip
WARNINGS = {"orphan", "weak-provenance", "nonstandard-source"}


@pytest.fixture
def doctor(loci: Loci, graph: BrainGraph) -> Doctor:
    def settle(target: Brain) -> None:
        loci.library.wait_for(
            target, [d.id for d in loci.library.documents(target, status="processing")]
        )

    return Doctor(graph, settle)


def seed_problems(
    loci: Loci, graph: BrainGraph, brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    def page(title: str, truth: str = "", **fields: str) -> None:
        graph.create(brain, actor="test", doc_type="person", title=title, text=truth, **fields)

    graph.create(brain, actor="test", text=KICKOFF)
    # ana relates to acme, which does not exist, links a missing page and cites missing evidence
    graph.create(brain, actor="test", text=ANA.replace(
        "Ana leads the garden",
        "Ana leads [[page:nowhere|a lost page]] and [[evidence:ev-gone|a lost record]]; the garden",
    ))  # fmt: skip
    page("Bob", "Bob helps.")
    graph.set_fields(brain, "bob", ["aliases=Ana López,Robert"], actor="test")
    page("Rob", "Rob digs.")
    graph.set_fields(brain, "rob", ["aliases=Robert"], actor="test")
    page("Lonely", "Nobody links here.")
    graph.create(brain, actor="test", doc_type="source", title="Temp", folder="evidence")
    page("Weak", "Backed by [[evidence:ev-temp|a record]].", status="active")
    graph.delete(brain, "ev-temp", actor="test", confirm=True)
    page("Web", "Read online.")
    graph.set_fields(brain, "web", ["sources=https://example.com/post"], actor="test")
    # Documents written before a rule existed (or by hand into the database) break it: let one
    # past validation, as an older version of Loci might have.
    monkeypatch.setattr(writer, "check", lambda doc: None)
    graph.create(brain, actor="test", doc_type="robot", title="Robo", folder="people")
    monkeypatch.undo()
    lonely = graph.get(brain, "lonely").summary.document_id
    assert lonely is not None
    loci.store.fail_document(lonely, "the parser crashed")


def test_a_brain_with_every_kind_of_problem_gets_every_kind_of_finding(
    loci: Loci,
    graph: BrainGraph,
    brain: Brain,
    doctor: Doctor,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    seed_problems(loci, graph, brain, monkeypatch)
    checkup = doctor.check_brain(brain, roundtrip=False)
    found = {(f.kind, f.document) for f in checkup.findings}
    assert {kind for kind, _ in found} == ERRORS | WARNINGS
    assert {
        ("broken-relation", "ana-lopez"), ("broken-link", "ana-lopez"),
        ("broken-citation", "ana-lopez"), ("alias-collision", "bob"), ("alias-collision", "rob"),
        ("orphan", "lonely"), ("weak-provenance", "weak"), ("broken-citation", "weak"),
        ("nonstandard-source", "web"), ("invalid", "robo"), ("index", "lonely"),
    } <= found  # fmt: skip
    assert ("orphan", "ana-lopez") not in found and ("weak-provenance", "ana-lopez") not in found
    messages: dict[tuple[str, str], str] = {}
    for f in checkup.findings:
        messages[(f.kind, f.document)] = messages.get((f.kind, f.document), "") + f.message
    assert "no such document" in messages[("broken-relation", "ana-lopez")]
    assert "the title of ana-lopez" in messages[("alias-collision", "bob")]
    assert "an alias of rob" in messages[("alias-collision", "bob")]
    assert "is a URL" in messages[("nonstandard-source", "web")]
    assert "type: 'robot' must be one of" in messages[("invalid", "robo")]
    assert "loci reprocess" in messages[("index", "lonely")]
    assert not checkup.ok and checkup.errors and checkup.warnings
    assert {f.severity for f in checkup.findings if f.kind in WARNINGS} == {"warning"}

    # the same brain as files, plus two files claiming one id and one that is not a document
    work = tmp_path / "work"
    GraphTransfer(graph).materialize(brain, work)
    shutil.copy(work / "people/bob.md", work / "people/bob-copy.md")
    (work / "people/scribble.md").write_text("no frontmatter at all\n")
    files = doctor.check_directory(work, roundtrip=False)
    kinds = {f.kind for f in files.findings}
    # the index and the brain's other documents are not in a directory: nothing to check
    stored_only = {"index", "missing-source"}
    assert kinds == (ERRORS - stored_only) | WARNINGS | {"duplicate-id", "parse-error"}
    duplicates = {f.document for f in files.findings if f.kind == "duplicate-id"}
    assert duplicates == {"people/bob.md", "people/bob-copy.md"}
    parse_errors = [f for f in files.findings if f.kind == "parse-error"]
    assert [f.document for f in parse_errors] == ["people/scribble.md"]
    assert "no YAML frontmatter" in parse_errors[0].message


def test_a_clean_brain_has_no_findings_and_the_round_trip_works(
    loci: Loci, graph: BrainGraph, brain: Brain, doctor: Doctor
) -> None:
    # the pages' `file:12` pointers name a document this brain really has
    cited = loci.library.add_note(brain, "The kickoff minutes.").document.id
    for text in (KICKOFF, ANA, ACME):
        graph.create(brain, actor="test", text=text.replace("file:12", f"file:{cited}"))
    checkup = doctor.check_brain(brain)
    assert checkup.findings == () and checkup.ok and checkup.documents == 3
    trip = checkup.roundtrip
    assert trip is not None and trip.ok
    assert [name for name, _ in trip.steps] == [
        "create scratch brain", "write page", "index", "search", "delete scratch brain",
    ]  # fmt: skip
    assert [b.name for b in loci.brains()] == ["default"]  # the scratch brain is gone

    # a round trip that never indexes cannot find its page: an error
    broken = Doctor(graph, lambda target: None).check_brain(brain)
    assert not broken.ok and [f.kind for f in broken.findings] == ["roundtrip"]
    assert "not found by search" in broken.findings[0].message
    assert [b.name for b in loci.brains()] == ["default"]


def test_the_cli_exits_non_zero_on_errors(
    loci: Loci,
    graph: BrainGraph,
    brain: Brain,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    seed_problems(loci, graph, brain, monkeypatch)
    done = run_cli("brain", "doctor", "--json", "--no-roundtrip", home=tmp_path / "home")
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] is False and report["roundtrip"] is None
    assert {f["kind"] for f in report["findings"]} == ERRORS | WARNINGS


def test_agents_and_http_clients_get_a_bounded_read_only_checkup(
    loci: Loci, graph: BrainGraph, brain: Brain, server: LiveServer
) -> None:
    graph.create(brain, actor="test", doc_type="person", title="Ana",
                 text="Ana leads [[page:nowhere|a lost page]].")  # fmt: skip
    graph.create(brain, actor="test", doc_type="person", title="Bob", text="Bob digs.")
    graph.create(brain, actor="test", doc_type="person", title="Cy", text="Cy waters.")
    brains_before = [b.name for b in loci.brains()]

    with server.client() as api:
        answer = api.get("/brains/default/graph/doctor", params={"limit": 1})
        assert answer.status_code == 200, answer.text
        report = answer.json()
        everything = api.get("/brains/default/graph/doctor").json()
    assert report["ok"] is False and report["documents"] == 3
    assert report["by_kind"] == {"broken-link": 1, "orphan": 2}  # Ana links out: not an orphan
    assert (report["errors"], report["warnings"], report["omitted"]) == (1, 2, 2)
    [first] = report["findings"]  # the error comes before the warnings
    assert (first["kind"], first["severity"], first["document"]) == ("broken-link", "error", "ana")
    assert "nowhere" in first["message"]
    assert {f["document"] for f in everything["findings"]} == {"ana", "bob", "cy"}

    async def ask_agent() -> dict[str, Any]:
        async with Client(local_server(loci)) as client:
            return ok(await client.call_tool("brain_doctor", {"limit": 2}))

    checked = anyio.run(ask_agent)
    assert checked["by_kind"] == report["by_kind"] and checked["omitted"] == 1
    assert checked["findings"][0]["kind"] == "broken-link"
    assert [b.name for b in loci.brains()] == brains_before  # no scratch brain: nothing written


PLAN = "# Plan\n\nPlant the beans in May.\n"


def _page_citing_a_folder(
    loci: Loci, graph: BrainGraph, brain: Brain, folder: Path, on_delete: OnDelete
) -> dict[str, int]:
    """A followed folder of two notes, and a page "beans" citing both; the notes' ids."""
    folder.mkdir()
    (folder / "plan.md").write_text(PLAN)
    (folder / "keep.md").write_text("# Keep\n\nWater them twice a week.\n")
    loci.sources.add(brain, folder, on_delete=on_delete)
    loci.sources.sync(brain)
    ids = {d.name: d.id for d in loci.library.documents(brain)}
    plan, keep = f"file:{ids['plan.md']}", f"file:{ids['keep.md']}"
    graph.create(brain, actor="test", doc_type="project", title="Beans", text="Beans in May.")
    graph.set_fields(brain, "beans", [f"sources={plan},{keep}"], actor="test")
    graph.append_timeline(brain, "beans", "Planted.", actor="test", at="2026-05-02", source=plan)
    return ids


def _findings(doctor: Doctor, brain: Brain, kind: str) -> list[Any]:
    """The brain's checkup findings of one kind."""
    return [f for f in doctor.check_brain(brain, roundtrip=False).findings if f.kind == kind]


@pytest.mark.both_backends
def test_a_page_citing_a_file_deleted_from_a_followed_folder_is_reported(
    loci: Loci, graph: BrainGraph, brain: Brain, doctor: Doctor, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    ids = _page_citing_a_folder(loci, graph, brain, folder, "remove")
    plan, keep = f"file:{ids['plan.md']}", f"file:{ids['keep.md']}"
    assert not _findings(doctor, brain, "missing-source")

    (folder / "plan.md").unlink()  # the file goes, and at the next sync its document
    (result,) = loci.sources.sync(brain).sources
    assert result.removed == 1
    missing = _findings(doctor, brain, "missing-source")
    assert [(f.document, f.severity) for f in missing] == [("beans", "error")]
    assert f"'{plan}' points at document {ids['plan.md']}" in missing[0].message
    assert "no longer has" in missing[0].message and keep not in missing[0].message


@pytest.mark.both_backends
def test_a_page_citing_a_file_kept_after_its_deletion_is_warned_of(
    loci: Loci, graph: BrainGraph, brain: Brain, doctor: Doctor, tmp_path: Path
) -> None:
    folder = tmp_path / "folder"
    ids = _page_citing_a_folder(loci, graph, brain, folder, "keep")
    plan = f"file:{ids['plan.md']}"

    def findings(kind: str) -> list[Any]:
        return _findings(doctor, brain, kind)

    assert not findings("gone-source")
    (folder / "plan.md").unlink()
    (result,) = loci.sources.sync(brain).sources
    assert result.gone == 1
    (gone,) = findings("gone-source")
    assert (gone.document, gone.severity) == ("beans", "warning")
    assert f"'{plan}' points at document {ids['plan.md']} (plan.md)" in gone.message
    assert f"{(folder / 'plan.md').resolve()} was deleted" in gone.message
    assert not findings("missing-source")  # the document is there: kept

    (folder / "plan.md").write_text(PLAN)
    loci.sources.sync(brain)
    assert not findings("gone-source")


def test_a_link_to_a_page_whose_vault_file_was_deleted_is_reported(
    loci: Loci, graph: BrainGraph, brain: Brain, doctor: Doctor, tmp_path: Path
) -> None:
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Compost.md").write_text("Worms and leaves.\n")
    (vault / "Beans.md").write_text("Planted in May.\n")  # an empty vault would be unmounted
    loci.sources.add(brain, vault, mode="pages")
    loci.sources.sync(brain)
    graph.create(
        brain, actor="test", doc_type="note", title="Beds", text="Fed by [[page:compost]]."
    )
    (vault / "Compost.md").unlink()
    assert loci.sources.sync(brain).sources[0].removed == 1
    found = {(f.kind, f.document) for f in doctor.check_brain(brain, roundtrip=False).findings}
    assert ("broken-link", "beds") in found
