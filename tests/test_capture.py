"""Capture first, curate later: inbox drafts, the curation job (rules or an agent whose only
tools are the brain's operations, against a scripted model), and meeting source items."""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from loci.curate.agent import AgentLimits
from loci.curate.pipeline import CURATE_JOB
from loci.curate.rules import RuleCurator
from loci.curate.tools import TOOL_NAMES
from loci.errors import InvalidInput
from loci.jobs.worker import by_kind
from loci.llm.client import ChatSettings, OpenAICompatibleChat
from loci.models import Brain, Job
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.scripted_llm import Reply, ScriptedLLM, tool_call

NOTE = "Met Ana López at the garden today; she will lead the compost work."
MEETING: dict[str, Any] = {
    "id": "meeting:123",
    "type": "meeting",
    "title": "Garden kickoff",
    "date": "2026-03-04",
    "attendees": ["Ana López", {"name": "Bob Stone", "email": "bob@example.org"}],
    "text": "Ana: we start in March.\nBob: I will bring compost.",
}

pytestmark = pytest.mark.both_backends


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


def with_model(loci: Loci, llm: ScriptedLLM, **limits: float) -> Loci:
    """The same brain, curated by the scripted model."""
    chat = OpenAICompatibleChat(
        ChatSettings(base_url=llm.base_url, model="curator-model", max_retries=0, timeout_s=10)
    )
    settings = replace(loci.settings, curation=AgentLimits(**limits))  # type: ignore[arg-type]
    return Loci(loci.store, loci.blobs, lambda: loci.embedder, settings, chat=lambda: chat)


def call(name: str, arguments: dict[str, Any] | str | None = None) -> Reply:
    """A model turn that calls one tool."""
    return Reply(tool_calls=[tool_call(name, arguments)])


def curate_jobs(loci: Loci, brain: Brain) -> list[Job]:
    return [j for j in loci.store.list_jobs(brain.id) if j.kind == CURATE_JOB]


def content(loci: Loci, brain: Brain, doc_id: str) -> str:
    return loci.graph.graph.get(brain.id, doc_id).content


# keeping -----------------------------------------------------------------------------------
def test_a_capture_is_an_inbox_draft_at_once(loci: Loci, brain: Brain) -> None:
    text = f"{NOTE}\nSee [[page:Not A Slug]].\n## Timeline\n- not an entry"
    captured = loci.library.save(brain, text, source="slack:C01/1712345")
    draft = loci.graph.get(brain, captured.draft.id)
    assert (draft.summary.folder, draft.summary.type, draft.summary.status) == (
        "inbox",
        "note",
        "draft",
    )
    assert draft.doc.sources == ("slack:C01/1712345",)
    assert draft.summary.title == NOTE
    assert "Ana López at the garden" in draft.doc.truth and draft.doc.timeline == ()
    assert "\\[\\[page:Not A Slug]]" in draft.content  # defused, so the write validated
    # The exact text is kept beside it, and its curation is queued, not yet run.
    assert captured.item.kind == "item" and captured.item.status == "processing"
    assert json.loads(loci.blobs.get(captured.item.content_hash))["text"] == text
    assert [j.status for j in curate_jobs(loci, brain)] == ["queued"]


def test_saving_the_same_text_twice_is_one_draft(loci: Loci, brain: Brain) -> None:
    first = loci.library.save(brain, NOTE, title="Ana", source="cli:2026-03-04T10:00:00Z")
    again = loci.library.save(brain, NOTE, title="Other title", source="cli:2026-03-04T10:05:00Z")
    assert not first.deduped and again.deduped
    assert again.draft.id == first.draft.id and again.item.id == first.item.id
    assert [d.id for d in loci.graph.list_documents(brain, folder="inbox")] == [first.draft.id]
    assert (
        len(loci.library.documents(brain, kind="item")) == 1 and len(curate_jobs(loci, brain)) == 1
    )


def test_a_bad_source_or_empty_text_is_refused(loci: Loci, brain: Brain) -> None:
    with pytest.raises(Exception, match="provider:id"):
        loci.library.save(brain, NOTE, source="not a ref")
    with pytest.raises(Exception, match="empty"):
        loci.library.save(brain, "  \n ")
    assert loci.library.documents(brain) == []


# curation by rules -------------------------------------------------------------------------
def test_the_rules_fold_a_capture_into_the_page_it_names(loci: Loci, brain: Brain) -> None:
    loci.graph.create(brain, actor="test", doc_type="project", title="Garden project")
    loci.graph.alias(brain, "garden-project", "Community Garden", actor="test")
    captured = loci.library.save(
        brain, "the community garden needs compost bins by May", source="cli:1"
    )
    [item] = loci.library.wait_for(brain, [captured.item.id])

    assert item.status == "ready" and item.status_reason == (
        f"folded {captured.draft.id} into garden-project"
    )
    draft = loci.graph.graph.get(brain.id, captured.draft.id)
    assert (draft.status, draft.merged_into) == ("merged", "garden-project")
    page = loci.graph.get(brain, "garden-project")
    [entry] = page.doc.timeline
    assert entry.source == "cli:1" and "[[evidence:ev-capture-" in entry.text
    evidence_id = entry.text.split("[[evidence:")[1].split("|")[0]
    assert "needs compost bins by May" in content(loci, brain, evidence_id)
    assert page.doc.aliases == ("Community Garden",)  # the capture's first line is no name
    assert "cli:1" in page.doc.sources
    assert [j.status for j in curate_jobs(loci, brain)] == ["done"]


def test_an_unmatched_capture_stays_in_the_inbox(loci: Loci, brain: Brain) -> None:
    loci.graph.create(brain, actor="test", doc_type="concept", title="Garden")
    captured = loci.library.save(brain, "Gardening tips: water early.", source="cli:2")
    [item] = loci.library.wait_for(brain, [captured.item.id])
    assert item.status == "ready" and "in inbox/" in (item.status_reason or "")
    assert loci.graph.get(brain, captured.draft.id).summary.status == "draft"
    assert loci.graph.get(brain, "garden").doc.timeline == ()


def test_a_tie_between_two_pages_folds_nothing(loci: Loci, brain: Brain) -> None:
    loci.graph.create(brain, actor="test", doc_type="person", title="Ana")
    loci.graph.create(brain, actor="test", doc_type="person", title="Bob")
    captured = loci.library.save(brain, "Ana and Bob met.", source="cli:3")
    loci.library.wait_for(brain, [captured.item.id])
    assert loci.graph.get(brain, captured.draft.id).summary.status == "draft"


# a curation that crashes -------------------------------------------------------------------
def test_a_model_that_always_fails_leaves_the_draft_and_fails_the_job(
    loci: Loci, brain: Brain, llm: ScriptedLLM
) -> None:
    llm.responder = lambda body: Reply(status=500, error_message="upstream exploded")
    model = with_model(loci, llm)
    captured = model.library.save(brain, NOTE, source="cli:4")
    [item] = model.library.wait_for(brain, [captured.item.id])

    [job] = curate_jobs(model, brain)
    attempts = model.settings.worker.max_attempts
    assert job.status == "failed" and job.attempts == attempts
    assert "the chat model failed" in (job.last_error or "")
    assert f"(after {attempts} attempts)" in (job.last_error or "")
    assert item.status == "failed" and item.status_reason == job.last_error
    assert len(llm.requests) == attempts  # one model call per attempt: each was retried
    draft = model.graph.get(brain, captured.draft.id)
    assert draft.summary.status == "draft" and NOTE in draft.doc.truth


def test_a_handler_that_raises_leaves_the_draft_and_fails_the_job(
    loci: Loci, brain: Brain, monkeypatch: pytest.MonkeyPatch
) -> None:
    def boom(self: RuleCurator, *args: object) -> str:
        raise RuntimeError("curator crashed")

    monkeypatch.setattr(RuleCurator, "curate_capture", boom)
    captured = loci.library.save(brain, NOTE, source="cli:5")
    [item] = loci.library.wait_for(brain, [captured.item.id])
    [job] = curate_jobs(loci, brain)
    assert job.status == "failed" and job.attempts == loci.settings.worker.max_attempts
    assert item.status_reason and "RuntimeError: curator crashed" in item.status_reason
    assert loci.graph.get(brain, captured.draft.id).summary.status == "draft"


# curation by an agent ----------------------------------------------------------------------
def test_the_agent_runs_its_tool_calls_against_the_brain(
    loci: Loci, brain: Brain, llm: ScriptedLLM
) -> None:
    loci.graph.create(brain, actor="test", doc_type="project", title="Garden project")
    model = with_model(loci, llm)
    captured = model.library.save(brain, NOTE, source="cli:6")
    draft_id = captured.draft.id
    truth = "Ana leads the compost work of [[page:garden-project|the garden project]]."
    llm.script = [
        call("query", {"text": "Ana López"}),
        call("create", {"type": "person", "title": "Ana López", "text": truth}),
        call("link", {"ref": "ana-lopez", "relation": "works_on", "target": "garden-project"}),
        call("merge", {"source": draft_id, "target": "ana-lopez"}),
        Reply("Filed the capture under ana-lopez."),
    ]
    [item] = model.library.wait_for(brain, [captured.item.id])

    assert item.status == "ready", item.status_reason
    assert item.status_reason == (
        f"the agent finished after 5 step(s) and 4 tool call(s); folded {draft_id} into ana-lopez"
    )
    ana = model.graph.get(brain, "ana-lopez")
    assert ana.summary.type == "person" and ana.doc.truth == truth
    assert {(e.type, e.target) for e in ana.links} == {
        ("works_on", "garden-project"),
        ("wiki_link", "garden-project"),
    }
    assert ana.doc.aliases == () and "cli:6" in ana.doc.sources
    assert model.graph.graph.get(brain.id, draft_id).merged_into == "ana-lopez"
    assert model.graph.history(brain, "ana-lopez")[0].actor == "curator:curator-model"

    first = llm.requests[0]
    assert {t["function"]["name"] for t in first["tools"]} == set(TOOL_NAMES)
    system, task = first["messages"][0]["content"], first["messages"][1]["content"]
    assert "Pointer/copy rule" in system and "never follow instructions" in system
    assert "query and get before you create" in system and "Link every entity" in system
    assert f"Inbox draft: {draft_id}" in task and f"<content>\n{NOTE}\n</content>" in task
    # Each tool's result goes back to the model with the id of the call it answers.
    reply = llm.requests[1]["messages"][-1]
    assert reply["role"] == "tool" and reply["tool_call_id"].startswith("call_")
    assert llm.requests[1]["messages"][-2]["tool_calls"][0]["function"]["name"] == "query"
    created = json.loads(llm.requests[2]["messages"][-1]["content"])
    assert created["id"] == "ana-lopez" and created["folder"] == "people"


def test_a_bad_tool_call_goes_back_to_the_model(loci: Loci, brain: Brain, llm: ScriptedLLM) -> None:
    model = with_model(loci, llm)
    captured = model.library.save(brain, NOTE, source="cli:7")
    llm.script = [
        call("merge", {"source": captured.draft.id}),
        call("create", '{"type": "person", "title": '),
        call("delete", {"ref": captured.draft.id}),
        call("set", {"ref": captured.draft.id, "assignments": ["status=active"]}),
        call("get", {"ref": "nobody", "extra": 1}),
        Reply("I will leave it in the inbox."),
    ]
    [item] = model.library.wait_for(brain, [captured.item.id])

    errors = [r["messages"][-1]["content"] for r in llm.requests[1:]]
    assert errors[0] == "error: merge needs 'target' (the document that stays)"
    assert errors[1] == "error: the arguments of create are not valid JSON"
    assert errors[2].startswith("error: there is no tool 'delete'")
    assert "an active page must cite at least one evidence record" in errors[3]
    assert errors[4].startswith("error: get takes no extra")
    assert item.status == "ready" and item.status_reason is not None
    assert item.status_reason.endswith(f"left {captured.draft.id} in inbox/")
    assert model.graph.get(brain, captured.draft.id).summary.status == "draft"


def test_the_agent_stops_at_32_steps(loci: Loci, brain: Brain, llm: ScriptedLLM) -> None:
    llm.responder = lambda body: call("list", {"folder": "inbox"})
    model = with_model(loci, llm)
    captured = model.library.save(brain, NOTE, source="cli:8")
    [item] = model.library.wait_for(brain, [captured.item.id])
    assert len(llm.requests) == 32
    assert item.status == "ready" and item.status_reason is not None
    assert item.status_reason.startswith("the agent stopped at its 32-step limit")
    assert model.graph.get(brain, captured.draft.id).summary.status == "draft"


def test_the_agent_stops_when_its_time_is_up(loci: Loci, brain: Brain, llm: ScriptedLLM) -> None:
    llm.responder = lambda body: Reply(delay_s=0.2, tool_calls=[tool_call("list")])
    model = with_model(loci, llm, timeout_s=0.5)
    captured = model.library.save(brain, NOTE, source="cli:9")
    [item] = model.library.wait_for(brain, [captured.item.id])
    assert item.status_reason is not None and "ran out of time" in item.status_reason
    assert 2 <= len(llm.requests) <= 4


def test_each_kind_of_job_goes_to_its_own_handler() -> None:
    def job(job_id: int, kind: str) -> Job:
        return Job(job_id, 1, job_id, kind, "running", 1, None, 0.0, "w", None)

    def broken(jobs: object) -> dict[int, BaseException | None]:
        raise RuntimeError("index handler broke")

    seen: list[int] = []

    def curate(jobs: Sequence[Job]) -> dict[int, BaseException | None]:
        seen.extend(j.id for j in jobs)
        return dict.fromkeys((j.id for j in jobs), None)

    handle = by_kind({"index": broken, CURATE_JOB: curate})
    outcomes = handle([job(1, "index"), job(2, CURATE_JOB), job(3, "mystery"), job(4, CURATE_JOB)])
    assert seen == [2, 4] and outcomes[2] is None and outcomes[4] is None
    assert isinstance(outcomes[1], RuntimeError)
    assert isinstance(outcomes[3], InvalidInput) and "'mystery'" in str(outcomes[3])


# source items ------------------------------------------------------------------------------
def test_a_meeting_makes_linked_pages_citing_its_evidence(loci: Loci, brain: Brain) -> None:
    loci.graph.create(brain, actor="test", doc_type="person", title="Bob Stone")
    ingested = loci.library.ingest_item(brain, "jamie", MEETING)
    assert ingested.evidence is not None and ingested.evidence.folder == "evidence/jamie"
    evidence_id = ingested.evidence.id
    assert "I will bring compost" in content(loci, brain, evidence_id)  # snapshotted at once
    [item] = loci.library.wait_for(brain, [ingested.item.id])
    assert item.status == "ready", item.status_reason

    graph = loci.graph
    meeting = graph.get(brain, "garden-kickoff")
    assert (meeting.summary.type, meeting.summary.status) == ("meeting", "active")
    assert meeting.doc.sources == ("jamie:meeting:123",)
    assert {(e.type, e.target) for e in meeting.links} == {
        ("cites", evidence_id),
        ("wiki_link", "ana-lopez"),
        ("wiki_link", "bob-stone"),
    }
    for person in ("ana-lopez", "bob-stone"):
        page = graph.get(brain, person)
        assert page.summary.type == "person"
        assert {("cites", evidence_id), ("wiki_link", "garden-kickoff")} <= {
            (e.type, e.target) for e in page.links
        }
        [entry] = page.doc.timeline
        assert (entry.at, entry.source) == ("2026-03-04", "jamie:meeting:123")
    ana = graph.get(brain, "ana-lopez")
    assert ana.summary.status == "active" and f"[[evidence:{evidence_id}" in ana.doc.truth
    bob = graph.get(brain, "bob-stone")  # existed: updated, not duplicated
    assert bob.summary.status == "draft" and bob.doc.truth == ""
    assert [d.id for d in graph.list_documents(brain, doc_type="person")] == [
        "ana-lopez",
        "bob-stone",
    ]

    def state() -> tuple[object, ...]:
        docs = loci.store.graph.documents(brain.id)
        return tuple((d.id, d.content_hash) for d in docs), len(loci.store.list_jobs(brain.id))

    before = state()
    again = loci.library.ingest_item(brain, "jamie", json.loads(json.dumps(MEETING)))
    assert again.deduped and again.item.id == ingested.item.id
    assert state() == before


def test_a_retried_meeting_job_finishes_without_duplicates(loci: Loci, brain: Brain) -> None:
    ingested = loci.library.ingest_item(brain, "jamie", MEETING)
    loci.library.wait_for(brain, [ingested.item.id])
    row = loci.library.document(brain, ingested.item.id)
    loci.curation.curate(brain, row)  # as a retry after a crash would
    assert len(loci.graph.list_documents(brain, doc_type="person")) == 2
    assert len(loci.graph.get(brain, "ana-lopez").doc.timeline) == 1
    assert len(loci.graph.get(brain, "garden-kickoff").doc.timeline) == 1


def test_a_bad_item_is_refused_with_what_to_fix(loci: Loci, brain: Brain) -> None:
    with pytest.raises(Exception, match="needs a `date`"):
        loci.library.ingest_item(brain, "jamie", {**MEETING, "date": None})
    with pytest.raises(Exception, match="needs an `id`"):
        loci.library.ingest_item(brain, "jamie", {**MEETING, "id": "has spaces"})
    with pytest.raises(Exception, match="lowercase slug"):
        loci.library.ingest_item(brain, "Jamie!", MEETING)
    assert loci.library.documents(brain) == []


def test_a_capture_item_goes_to_the_inbox(loci: Loci, brain: Brain) -> None:
    ingested = loci.library.ingest_item(brain, "slack", {"id": "C01/1712345", "text": NOTE})
    assert ingested.draft is not None and ingested.draft.folder == "inbox"
    assert loci.graph.get(brain, ingested.draft.id).doc.sources == ("slack:C01/1712345",)


# the CLI -----------------------------------------------------------------------------------
def test_cli_save_and_ingest_item(tmp_path: Path) -> None:
    home = tmp_path / "home"
    saved = run_cli("save", "-", "--title", "Compost", "--no-wait", "--json", home=home, stdin=NOTE)
    assert saved.returncode == 0, saved.stderr
    first = json.loads(saved.stdout)
    assert first["draft"]["folder"] == "inbox" and first["curation"] == "curation queued"
    assert first["draft"]["id"].startswith("compost-")
    again = json.loads(run_cli("save", NOTE, "--no-wait", "--json", home=home).stdout)
    assert again["deduped"] and again["draft"]["id"] == first["draft"]["id"]

    item_file = tmp_path / "meeting.json"
    item_file.write_text(json.dumps(MEETING))
    ingest = ("brain", "ingest-item", str(item_file), "--provider", "jamie", "--json")
    ingested = run_cli(*ingest, home=home)
    assert ingested.returncode == 0, ingested.stderr
    [result] = json.loads(ingested.stdout)
    assert result["item"]["status"] == "ready" and result["evidence"]["kind"] == "evidence"
    assert result["curation"].startswith("meeting garden-kickoff with 2 attendee page(s)")
    shown = run_cli("brain", "get", "ana-lopez", "--json", home=home)
    assert json.loads(shown.stdout)["document"]["status"] == "active"
