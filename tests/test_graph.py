"""The brain graph's storage, service and CLI: writes, versions, conflicts, links, search."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from loci.errors import Conflict, InvalidInput, NotFound
from loci.graph.document import parse
from loci.graph.records import GraphEdge
from loci.graph.service import BrainGraph
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.services import reopen

ANA = """---
id: ana-lopez
kind: page
type: person
folder: people
status: draft
title: Ana López
aliases:
- Ana
relations:
- type: works_at
  target: acme
---

Ana leads [[page:garden-project|the garden project]] since March.

## Timeline

- **2026-03-04** Kickoff held; Ana leads. — [[source:file:12]] `ev-6799a5c58a`
"""

pytestmark = pytest.mark.both_backends


def index_all(loci: Loci, brain: Brain) -> None:
    waiting = [d.id for d in loci.library.documents(brain, status="processing")]
    loci.library.wait_for(brain, waiting)


def edges(graph: BrainGraph, brain: Brain, source: str) -> set[tuple[str, str]]:
    return {(e.type, e.target) for e in graph.graph.edges(brain.id, source=source)}


def test_create_then_get_round_trips_the_markdown(graph: BrainGraph, brain: Brain) -> None:
    made = graph.create(brain, actor="ana", text=ANA)
    assert (made.id, made.path, made.status) == ("ana-lopez", "people/ana-lopez.md", "draft")
    page = graph.get(brain, "ana-lopez")
    assert page.doc.title == "Ana López" and page.doc.aliases == ("Ana",)
    assert page.doc.truth == parse(ANA).truth and page.doc.timeline == parse(ANA).timeline
    assert page.doc.created and page.doc.updated  # stamped by the write
    assert page.content == page.doc.render()  # stored exactly as rendered
    assert graph.get(brain, "Ana").summary.id == "ana-lopez"  # by alias
    assert graph.get(brain, "ana lópez").summary.id == "ana-lopez"  # by title, any case
    # fields alone: folder and id from the type and title
    note = graph.create(brain, actor="ana", doc_type="note", title="Seed swap idea")
    assert note.path == "inbox/seed-swap-idea.md"
    evidence = graph.create(brain, actor="ana", doc_type="source", title="Call", folder="evidence")
    assert (evidence.id, evidence.kind) == ("ev-call", "evidence")
    with pytest.raises(Conflict, match="already exists"):
        graph.create(brain, actor="ana", doc_type="note", title="Seed swap idea")


def test_writes_that_fail_validation_are_refused_with_every_problem(
    graph: BrainGraph, brain: Brain
) -> None:
    with pytest.raises(InvalidInput) as refused:
        graph.create(brain, actor="t", doc_type="robot", title="X", doc_id="Bad Id")
    message = refused.value.message
    assert "id: 'Bad Id' must be a lowercase slug" in message
    assert "type: 'robot' must be one of person, company" in message
    misplaced = ANA.replace("folder: people", "folder: evidence/people")
    with pytest.raises(InvalidInput, match="pages live outside evidence/; use kind: evidence"):
        graph.create(brain, actor="t", text=misplaced)
    assert graph.list_documents(brain) == []

    graph.create(brain, actor="t", text=ANA)
    before = graph.get(brain, "ana-lopez").content
    with pytest.raises(InvalidInput, match="an active page must cite at least one evidence"):
        graph.set_fields(brain, "ana-lopez", ["status=active"], actor="t")
    with pytest.raises(InvalidInput, match="page link 'Not A Slug' must name a lowercase slug"):
        graph.rewrite(brain, "ana-lopez", "See [[page:Not A Slug]].", actor="t")
    with pytest.raises(InvalidInput, match="sources: 'nope' must be provider:id"):
        graph.set_fields(brain, "ana-lopez", ["sources=nope"], actor="t")
    with pytest.raises(InvalidInput, match="key=value"):
        graph.set_fields(brain, "ana-lopez", ["colour=green"], actor="t")
    assert graph.get(brain, "ana-lopez").content == before
    assert graph.history(brain, "ana-lopez") == []


def test_edges_are_stored_and_replaced_on_every_write(graph: BrainGraph, brain: Brain) -> None:
    graph.create(brain, actor="t", text=ANA)
    assert edges(graph, brain, "ana-lopez") == {
        ("works_at", "acme"), ("wiki_link", "garden-project"),
    }  # fmt: skip
    graph.rewrite(
        brain, "ana-lopez", "Ana now runs [[page:seed-library|the seed library]].", actor="t"
    )
    assert edges(graph, brain, "ana-lopez") == {
        ("works_at", "acme"), ("wiki_link", "seed-library"),
    }  # fmt: skip
    graph.set_fields(brain, "ana-lopez", ["relations=member_of:garden-club"], actor="t")
    assert edges(graph, brain, "ana-lopez") == {
        ("member_of", "garden-club"), ("wiki_link", "seed-library"),
    }  # fmt: skip
    # the compiled truth was rewritten in place; frontmatter and timeline stayed
    doc = graph.get(brain, "ana-lopez").doc
    assert doc.aliases == ("Ana",) and len(doc.timeline) == 1
    assert [e.source for e in graph.graph.edges(brain.id, target="seed-library")] == ["ana-lopez"]


def test_timeline_is_idempotent_and_queryable(graph: BrainGraph, brain: Brain) -> None:
    graph.create(brain, actor="t", text=ANA)
    graph.create(brain, actor="t", doc_type="project", title="Garden project")
    first = graph.append_timeline(
        brain, "ana-lopez", "Planted the beds.", actor="t", at="2026-04-02", source="file:12"
    )
    again = graph.append_timeline(
        brain, "ana-lopez", "Planted  the beds.", actor="t", at="2026-04-02", source="file:12"
    )
    assert first.changed and not again.changed
    assert again.document.content_hash == first.document.content_hash  # no write at all
    graph.append_timeline(brain, "garden-project", "Beds built.", actor="t", at="2026-03-20")
    mine = graph.timeline(brain, "ana-lopez")
    assert [(e.at, e.text) for e in mine] == [
        ("2026-04-02", "Planted the beds."), ("2026-03-04", "Kickoff held; Ana leads."),
    ]  # fmt: skip
    assert mine[0].source == "file:12" and mine[0].entry_id.startswith("ev-")
    everything = graph.timeline(brain)
    assert [e.doc_id for e in everything] == ["ana-lopez", "garden-project", "ana-lopez"]
    march = graph.timeline(brain, since="2026-03-10", until="2026-04-01")
    assert [e.text for e in march] == ["Beds built."]
    # entries live in the document too, in date order
    assert [e.at for e in graph.get(brain, "ana-lopez").doc.timeline] == [
        "2026-03-04", "2026-04-02",
    ]  # fmt: skip


def test_versions_keep_what_overwrites_and_deletes_replaced(
    graph: BrainGraph, brain: Brain
) -> None:
    graph.create(brain, actor="ana", text=ANA)
    original = graph.get(brain, "ana-lopez").content
    graph.rewrite(brain, "ana-lopez", "Ana moved to the seed library.", actor="ben")
    rewritten = graph.get(brain, "ana-lopez").content
    plan = graph.delete(brain, "ana-lopez", actor="cli", confirm=True)
    assert plan.deleted
    with pytest.raises(NotFound):
        graph.get(brain, "ana-lopez")
    history = graph.history(brain, "ana-lopez")
    assert [(v.action, v.actor) for v in history] == [("delete", "cli"), ("rewrite", "ben")]
    assert [v.content for v in history] == [rewritten, original]
    assert history[0].created_at
    with pytest.raises(NotFound):
        graph.history(brain, "never-existed")


def test_two_writers_on_one_version_one_wins_and_nothing_is_lost(
    graph: BrainGraph, brain: Brain
) -> None:
    graph.create(brain, actor="t", text=ANA)
    seen = graph.get(brain, "ana-lopez").summary.content_hash
    graph.rewrite(brain, "ana-lopez", "Writer one's truth.", actor="one", expected_hash=seen)
    with pytest.raises(Conflict, match="changed since you read it"):
        graph.rewrite(brain, "ana-lopez", "Writer two's truth.", actor="two", expected_hash=seen)
    assert graph.get(brain, "ana-lopez").doc.truth == "Writer one's truth."
    assert [v.actor for v in graph.history(brain, "ana-lopez")] == ["one"]


def test_concurrent_writers_in_two_processes_views_never_both_win(
    loci: Loci, graph: BrainGraph, brain: Brain
) -> None:
    """Two stores on one database (as two processes would be), racing the same edit:
    both pass their own read, the database's check lets exactly one through."""
    graph.create(brain, actor="t", text=ANA)
    other = reopen(loci.store)
    try:
        writers = [graph, BrainGraph(other, loci.blobs, loci.searching.search)]
        seen = graph.get(brain, "ana-lopez").summary.content_hash
        barrier = threading.Barrier(2)
        outcomes: list[str] = []

        def write(number: int) -> None:
            barrier.wait()
            try:
                writers[number].rewrite(
                    brain, "ana-lopez", f"Truth {number}.", actor=f"w{number}", expected_hash=seen
                )
                outcomes.append("won")
            except Conflict:
                outcomes.append("conflict")

        threads = [threading.Thread(target=write, args=(n,)) for n in (0, 1)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        other.close()
    assert sorted(outcomes) == ["conflict", "won"]
    winner = graph.history(brain, "ana-lopez")[0].actor
    assert graph.get(brain, "ana-lopez").doc.truth == f"Truth {winner[1]}."


def test_merge_leaves_a_tombstone_hidden_unless_asked(
    loci: Loci, graph: BrainGraph, brain: Brain
) -> None:
    graph.create(brain, actor="t", doc_type="person", title="Ana", text="Ana grows tomatoes.")
    graph.create(brain, actor="t", text=ANA)
    graph.append_timeline(brain, "ana", "Joined the tomato club.", actor="t", at="2026-02-01")
    survivor = graph.merge(brain, "ana", "ana-lopez", actor="t")
    assert survivor.id == "ana-lopez"
    merged = graph.get(brain, "ana-lopez").doc
    assert "Joined the tomato club." in [e.text for e in merged.timeline]
    assert merged.aliases == ("Ana",)
    tombstone = graph.graph.get(brain.id, "ana")
    assert (tombstone.status, tombstone.merged_into) == ("merged", "ana-lopez")
    assert graph.get(brain, "Ana").summary.id == "ana-lopez"  # the alias finds the survivor
    assert [d.id for d in graph.list_documents(brain)] == ["ana-lopez"]
    assert {d.id for d in graph.list_documents(brain, include_merged=True)} == {
        "ana", "ana-lopez",
    }  # fmt: skip
    index_all(loci, brain)
    assert "ana" not in [h.document.id for h in graph.query(brain, "tomatoes")]
    assert "ana" in [h.document.id for h in graph.query(brain, "tomatoes", include_merged=True)]


def test_move_and_rename_keep_links_from_other_pages(
    loci: Loci, graph: BrainGraph, brain: Brain
) -> None:
    graph.create(brain, actor="t", doc_type="project", title="Garden project")
    graph.create(brain, actor="t", text=ANA)  # links to garden-project
    graph.create(brain, actor="t", doc_type="company", title="Acme")
    graph.link(brain, "acme", "sponsors", "garden-project", actor="t")
    graph.append_timeline(
        brain, "acme", "Funded [[page:garden-project|the garden]].", actor="t", at="2026-03-01"
    )
    graph.move(brain, "garden-project", folder="projects/home", actor="t")
    assert graph.get(brain, "garden-project").summary.path == "projects/home/garden-project.md"
    assert edges(graph, brain, "ana-lopez") >= {("wiki_link", "garden-project")}

    moved = graph.move(brain, "garden-project", new_id="community-garden", actor="mover")
    assert moved.path == "projects/home/community-garden.md"
    with pytest.raises(NotFound):
        graph.graph.get(brain.id, "garden-project")
    ana = graph.get(brain, "ana-lopez").doc
    assert "[[page:community-garden|the garden project]]" in ana.truth
    acme = graph.get(brain, "acme").doc
    assert acme.relations[0].target == "community-garden"
    assert "[[page:community-garden|the garden]]" in acme.timeline[0].text
    assert graph.graph.edges(brain.id, target="garden-project") == []
    assert {e.source for e in graph.graph.edges(brain.id, target="community-garden")} == {
        "ana-lopez", "acme",
    }  # fmt: skip
    assert [(v.action, v.actor) for v in graph.history(brain, "ana-lopez")][0] == (
        "relink", "mover",
    )  # fmt: skip
    assert [v.action for v in graph.history(brain, "community-garden")][:2] == ["move", "move"]
    document = loci.library.document(brain, moved.document_id or 0)
    assert document.name == "projects/home/community-garden.md"
    with pytest.raises(Conflict, match="already exists"):
        graph.move(brain, "acme", new_id="ana-lopez", actor="t")


def test_delete_is_a_dry_run_until_confirmed_and_reports_backlinks(
    loci: Loci, graph: BrainGraph, brain: Brain
) -> None:
    graph.create(brain, actor="t", doc_type="project", title="Garden project")
    graph.create(brain, actor="t", text=ANA)
    target = graph.get(brain, "garden-project")
    plan = graph.delete(brain, "garden-project", actor="t")
    assert not plan.deleted
    assert plan.backlinks == (GraphEdge("ana-lopez", "garden-project", "wiki_link"),)
    assert graph.get(brain, "garden-project").content == target.content
    assert graph.history(brain, "garden-project") == []
    document_id = target.summary.document_id
    assert document_id is not None
    graph.delete(brain, "garden-project", actor="t", confirm=True)
    with pytest.raises(NotFound):
        loci.library.document(brain, document_id)  # the indexed document went with it


def test_a_page_is_found_by_search_with_a_citation(
    loci: Loci, graph: BrainGraph, brain: Brain
) -> None:
    page = graph.create(
        brain, actor="t", doc_type="concept", title="Hugelkultur",
        text="Hugelkultur buries rotting logs under soil so beds hold water for years.",
    )  # fmt: skip
    index_all(loci, brain)
    hits = loci.searching.search(brain, SearchRequest("beds built on buried logs"))
    top = hits[0].citation
    assert (top.document_id, top.name, top.title) == (
        page.document_id, "concepts/hugelkultur.md", "Hugelkultur",
    )  # fmt: skip
    assert top.location.line_start is not None  # a line span in the Markdown, frontmatter counted
    found = graph.query(brain, "beds built on buried logs")
    assert (
        found[0].document.id == "hugelkultur" and found[0].citation.document_id == page.document_id
    )
    # a rewrite is re-indexed: the old words go, the new ones are found
    graph.rewrite(brain, "hugelkultur", "Mound beds of wood that act like sponges.", actor="t")
    index_all(loci, brain)
    assert graph.query(brain, "sponges")[0].document.id == "hugelkultur"
    assert loci.library.document(brain, page.document_id or 0).status == "ready"


def test_a_page_cites_an_ingested_file(loci: Loci, graph: BrainGraph, brain: Brain) -> None:
    added = loci.library.add_bytes(
        brain, "lease.txt", b"The deposit is 2,300 euros, due on signing."
    )
    loci.library.wait_for(brain, [added.document.id])
    file_id = added.document.id
    graph.create(
        brain, actor="t", doc_type="analysis", title="Flat costs",
        text=f"The deposit is 2,300 euros [[source:file:{file_id}|the lease]].",
    )  # fmt: skip
    graph.append_timeline(
        brain, "flat-costs", "Lease signed.", actor="t", at="2026-01-05", source=f"file:{file_id}"
    )
    pointers = graph.sources(brain, "flat-costs")
    assert [p.ref for p in pointers] == [f"file:{file_id}"]
    assert pointers[0].document is not None and pointers[0].document.name == "lease.txt"
    graph.set_fields(brain, "flat-costs", ["sources=slack:C01/99"], actor="t")
    assert {p.ref: p.document for p in graph.sources(brain, "flat-costs")}["slack:C01/99"] is None


def test_append_evidence_snapshots_and_cites(graph: BrainGraph, brain: Brain) -> None:
    graph.create(brain, actor="t", text=ANA)
    evidence, page = graph.append_evidence(
        brain, "ana-lopez", "Ana: I'll lead the beds.", title="Kickoff call", actor="t",
        source="jamie:meeting:1",
    )  # fmt: skip
    assert evidence.folder == "evidence" and evidence.kind == "evidence"
    assert evidence.id.startswith("ev-kickoff-call-")
    assert ("cites", evidence.id) in edges(graph, brain, "ana-lopez")
    again, _ = graph.append_evidence(
        brain, "ana-lopez", "Ana: I'll lead the beds.", title="Kickoff call", actor="t"
    )
    assert again.id == evidence.id and len(graph.list_documents(brain, folder="evidence")) == 1
    # now the page can be curated to active, citing the evidence in its truth
    graph.rewrite(brain, "ana-lopez", f"Ana leads the beds [[evidence:{evidence.id}|call]].",
                  actor="t")  # fmt: skip
    assert graph.set_fields(brain, "ana-lopez", ["status=active"], actor="t").status == "active"


def test_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"

    def cli(*args: str, stdin: str | None = None) -> dict[str, object] | list[object]:
        done = run_cli("brain", *args, "--json", home=home, stdin=stdin)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    made = cli("create", "--type", "person", "--title", "Ana López", "--text", "-",
               stdin="Ana leads the community garden and its raised beds.")  # fmt: skip
    assert made["document"]["id"] == "ana-lopez"  # type: ignore[call-overload,index]
    cli("create", "--type", "project", "--title", "Garden", "--no-wait")
    cli("link", "garden", "led_by", "Ana López")
    cli("append-timeline", "garden", "Beds built.", "--at", "2026-03-20", "--source", "file:1")
    page = cli("get", "garden")
    assert page["links"] == [  # type: ignore[call-overload]
        {"source": "garden", "target": "ana-lopez", "type": "led_by"}
    ]
    assert page["timeline"][0]["text"] == "Beds built."  # type: ignore[call-overload,index]
    moved = cli("move", "ana-lopez", "--id", "ana")
    assert moved["document"]["path"] == "people/ana.md"  # type: ignore[call-overload,index]
    assert "ana" in str(cli("get", "garden")["content"])  # type: ignore[call-overload]
    hits = cli("query", "who leads the raised beds")
    assert hits["hits"][0]["document"]["id"] == "ana"  # type: ignore[call-overload,index]
    history = cli("history", "ana")
    assert [v["action"] for v in history] == ["move"]  # type: ignore[index]
    assert history[0]["actor"] == "cli"  # type: ignore[index]

    missing = run_cli("brain", "get", "nobody", home=home)
    assert missing.returncode == 3 and "no brain document 'nobody'" in missing.stderr
    refused = run_cli("brain", "set", "ana", "status=active", home=home)
    assert refused.returncode == 1
    assert refused.stderr.count("\n") == 1 and "must cite at least one evidence" in refused.stderr
    human = run_cli("brain", "delete", "ana", home=home)
    assert human.returncode == 0 and "would delete people/ana.md" in human.stdout
    assert "garden links to it" in human.stdout


def compost_drive_pages(graph: BrainGraph, brain: Brain) -> None:
    """A project page linking to its lead, Ana (whose page never says "compost"), and to a
    former lead whose page is archived."""
    graph.create(
        brain, actor="t", doc_type="project", title="Compost drive",
        text="The compost drive collects kitchen scraps for the allotment bins every Saturday. "
             "It is led by [[page:ana-lopez|Ana]]; before her, [[page:old-lead|Sam]].",
    )  # fmt: skip
    graph.create(
        brain, actor="t", doc_type="person", title="Ana Lopez",
        text="Ana coordinates the volunteers and keeps the shed keys.",
    )  # fmt: skip
    graph.create(brain, actor="t", doc_type="person", title="Old lead", text="Sam moved away.")
    graph.set_fields(brain, "old-lead", ["status=archived"], actor="t")


def test_query_follows_links_to_the_page_that_answers(
    loci: Loci, graph: BrainGraph, brain: Brain
) -> None:
    compost_drive_pages(graph, brain)
    graph.create(
        brain, actor="t", doc_type="concept", title="Sourdough",
        text="A starter of flour and water ferments for days before the bread is baked.",
    )  # fmt: skip
    index_all(loci, brain)

    hits = graph.query(brain, "who runs the compost drive")
    ids = [h.document.id for h in hits]
    assert ids[0] == "compost-drive"
    ana = hits[ids.index("ana-lopez")]
    # Ana's page says nothing about compost: the link from the project carries her up
    assert "graph" in ana.matched_by and ana.path == ("compost-drive", "ana-lopez")
    assert ids.index("ana-lopez") < ids.index("sourdough")
    assert "old-lead" not in ids  # archived pages stay out, linked or not


def test_hybrid_search_follows_page_links_and_leaves_plain_brains_alone(
    loci: Loci, graph: BrainGraph, brain: Brain, tmp_path: Path, database_url: str | None
) -> None:
    compost_drive_pages(graph, brain)
    loci.library.add_note(brain, "Bread needs a starter of flour and water.", title="Baking")
    loci.library.add_note(brain, "The allotment committee meets on Mondays.", title="Committee")
    index_all(loci, brain)

    hits = loci.searching.search(brain, SearchRequest("who runs the compost drive", limit=5))
    names = [h.citation.name for h in hits]
    assert names[0] == "projects/compost-drive.md"
    ana = hits[names.index("people/ana-lopez.md")]
    # Ana's page never says "compost": only the project's link to her brings her in
    assert ana.matched_by in ("graph", "text+graph", "vector+graph", "both+graph")
    assert ana.graph_path == ("compost-drive", "ana-lopez")
    assert "people/old-lead.md" not in names  # archived pages are not reached by links
    # a single leg is a diagnostic view: no link followed
    text_only = loci.searching.search(brain, SearchRequest("compost drive", mode="text", limit=5))
    assert all(not h.graph_path for h in text_only)

    # the CLI shows how a hit was reached
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    shown = run_cli(
        "search", "who runs the compost drive", "--json", home=tmp_path / "home", env=env
    )
    listed = json.loads(shown.stdout)["hits"]
    assert any(h["graph_path"] == ["compost-drive", "ana-lopez"] for h in listed)

    # a brain without pages ranks exactly as the passage search alone
    plain = loci.brain("plain")
    for text in ("Kettles boil water.", "Ovens bake bread at high heat.", "Bread rises slowly."):
        loci.library.add_note(plain, text)
    index_all(loci, plain)
    request = SearchRequest("baking bread", limit=3)
    assert loci.searching.search(plain, request) == loci.searching.passages(plain, request)


def test_pages_that_only_link_to_each_other_stay_under_the_page_that_says_it(
    loci: Loci, graph: BrainGraph, brain: Brain
) -> None:
    graph.create(
        brain, actor="t", doc_type="concept", title="Tax return 2025",
        text="The tax return for 2025 is filed in January with the bookkeeping, invoices and "
             "[[page:receipts|receipts]].",
    )  # fmt: skip
    graph.create(
        brain, actor="t", doc_type="concept", title="Receipts",
        text="Receipts for the tax return and bookkeeping are kept in the blue folder; see "
             "[[page:tax-return-2025]].",
    )  # fmt: skip
    graph.create(
        brain, actor="t", doc_type="person", title="Priya Shah",
        text="Priya Shah is our accountant at Ledger and Co.",
    )  # fmt: skip
    index_all(loci, brain)

    hits = graph.query(brain, "accountant")
    assert hits[0].document.id == "priya-shah"  # the one page that says it
    lifted = [h for h in hits if h.matched_by.endswith("+graph") or h.matched_by == "graph"]
    assert lifted and all(h.score < hits[0].score for h in lifted)


def test_links_lift_a_page_past_meaning_only_matches_never_past_word_matches() -> None:
    from loci.graph.expansion import Placed, keep_matches_first

    says_it = Placed(before=0.6, after=0.6, matched_by="text")
    near = Placed(before=0.5, after=0.5, matched_by="vector")
    lifted = Placed(before=0.45, after=0.9, matched_by="vector+graph")  # was under both
    linked_only = Placed(before=0.0, after=0.8, matched_by="graph")
    weaker_words = Placed(before=0.2, after=0.2, matched_by="both")
    scores = keep_matches_first([says_it, near, lifted, linked_only, weaker_words])
    assert scores[0] == 0.6 and scores[1] == 0.5
    assert 0.5 < scores[2] < 0.6  # above the meaning-only match, under the page that says it
    assert scores[3] < 0.2  # a link alone: under every page that matches the words


def test_a_snippet_shows_a_pages_links_as_their_labels(
    loci: Loci, graph: BrainGraph, brain: Brain
) -> None:
    graph.create(
        brain, actor="t", doc_type="project", title="Allotment",
        text="The allotment rota is kept by [[page:marta-kowalski|Marta]] and "
             "[[page:ben-okafor]] every spring.",
    )  # fmt: skip
    index_all(loci, brain)
    hits = loci.searching.search(brain, SearchRequest("allotment rota", limit=3))
    snippet = hits[0].snippet
    assert "kept by Marta and ben-okafor" in snippet
    assert "[[" not in snippet and "page:" not in snippet
