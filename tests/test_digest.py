"""`loci digest`: what came into a brain over a period, over a real SQLite brain — without a
model (extracts, vector themes) and with the scripted one; saved as a page; over HTTP."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp import Client
from mcp.types import CallToolResult

from loci.errors import InvalidInput
from loci.llm.client import ChatSettings, OpenAICompatibleChat
from loci.mcp.stdio import local_server
from loci.models import Brain, SearchFilters
from loci.review.period import period_since
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.sqlite import SqliteStore
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.mcp_results import ok, text_of
from tests.support.scripted_llm import Reply, ScriptedLLM

KETTLE_1 = (
    "# Descaling the kettle\n\nLimescale builds up inside the kettle in hard-water areas. Boil "
    "a mix of white vinegar and water, leave it an hour, then rinse the kettle twice.\n"
)
KETTLE_2 = (
    "# Kettle limescale with citric acid\n\nCitric acid removes limescale from a kettle faster "
    "than vinegar: two spoons in half a kettle of water, boil, wait twenty minutes, rinse.\n"
)
GARDEN_1 = (
    "# Planting tomatoes\n\nTomato seedlings go into the garden bed after the last frost. Water "
    "the roots deeply and stake each plant so the stems do not snap.\n"
)
GARDEN_2 = (
    "# Garden beds\n\nThe garden beds need compost before planting: dig it into the soil in "
    "spring, then sow the beans and tomatoes along the fence.\n"
)
OLD = "# Old lease\n\nThe flat's lease from 2021 ran for twelve months with a break clause.\n"
NOTE = "Call the plumber about the boiler pressure on Monday morning."


def backdate(loci: Loci, document_id: int, when: str, *, updated: bool = False) -> None:
    assert isinstance(loci.store, SqliteStore)
    column = "created_at = ?, updated_at = ?" if updated else "created_at = ?"
    stamp = f"{when}T09:00:00Z"
    values = (stamp, stamp, document_id) if updated else (stamp, document_id)
    loci.store.db.execute(f"UPDATE documents SET {column} WHERE id = ?", values)


@pytest.fixture
def week(loci: Loci) -> tuple[Brain, dict[str, int]]:
    """A brain with this week's kettle and garden pairs, a note, a failed PDF, an old file and
    an old failure, and two captures waiting in the inbox."""
    brain = loci.brain("home")
    files = {
        "kettle1": KETTLE_1, "garden1": GARDEN_1, "kettle2": KETTLE_2, "garden2": GARDEN_2,
        "old": OLD,
    }  # fmt: skip
    ids = {
        k: loci.library.add_bytes(brain, f"{k}.md", v.encode()).document.id
        for k, v in files.items()
    }
    ids["bad"] = loci.library.add_bytes(brain, "scan.pdf", b"%PDF-1.4 not really").document.id
    ids["old_bad"] = loci.library.add_bytes(brain, "old.pdf", b"%PDF-1.4 broken too").document.id
    ids["note"] = loci.library.add_note(brain, NOTE, title="Plumber").document.id
    settled = {d.id: d.status for d in loci.library.wait_for(brain, list(ids.values()))}
    assert settled[ids["bad"]] == "failed" and settled[ids["kettle1"]] == "ready"
    backdate(loci, ids["old"], "2021-04-02")
    backdate(loci, ids["old_bad"], "2021-04-03", updated=True)
    loci.library.save(brain, "Buy tomato seeds and a new kettle filter", actor="test")
    loci.library.save(brain, "Ask Mia about the compost bin", actor="test")
    return brain, ids


def test_the_period_selects_the_documents_added_in_it(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = week
    made = loci.reviews.digest(brain, "7d").as_dict()
    added = {d["id"] for d in made["added"]}
    assert added == {ids[k] for k in ("kettle1", "kettle2", "garden1", "garden2", "bad")}
    assert made["added_by_kind"] == {"file": 5}
    assert [n["id"] for n in made["notes"]] == [ids["note"]]
    assert {d["title"] for d in made["added"]} >= {"Descaling the kettle", "Garden beds"}
    assert made["counts"]["added"] == 5 and made["counts"]["notes"] == 1
    # Since a date before the old file: it is in; the old failure is too.
    since_2021 = loci.reviews.digest(brain, "2021-01-01").as_dict()
    assert ids["old"] in {d["id"] for d in since_2021["added"]}
    assert ids["old_bad"] in {d["id"] for d in since_2021["failed"]}


def test_failed_documents_are_listed_with_their_reasons(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = week
    failed = loci.reviews.digest(brain, "7d").as_dict()["failed"]
    assert [f["id"] for f in failed] == [ids["bad"]]  # the 2021 failure is outside the period
    assert failed[0]["name"] == "scan.pdf"
    assert failed[0]["reason"] == loci.library.document(brain, ids["bad"]).status_reason
    assert "PDF" in failed[0]["reason"]


def test_captures_waiting_in_the_inbox_are_counted(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, _ = week
    made = loci.reviews.digest(brain, "24h").as_dict()
    assert made["counts"]["inbox"] == 2 and made["counts"]["inbox_new"] == 2
    titles = {d["title"] for d in made["inbox"]}
    assert any("compost bin" in t for t in titles) and any("tomato seeds" in t for t in titles)
    # A draft filed away is no longer waiting.
    draft = made["inbox"][0]["id"]
    loci.graph.move(brain, draft, actor="test", folder="projects")
    assert loci.reviews.digest(brain, "24h").as_dict()["counts"]["inbox"] == 1


def test_themes_keep_the_kettle_pair_apart_from_the_garden_pair(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = week
    themes = loci.reviews.digest(brain, "7d").as_dict()["themes"]
    groups = {frozenset(t["document_ids"]): t["words"] for t in themes}
    kettle = frozenset({ids["kettle1"], ids["kettle2"]})
    garden = frozenset({ids["garden1"], ids["garden2"]})
    assert kettle in groups and garden in groups, themes
    assert {"kettle", "limescale"} & set(groups[kettle]), groups[kettle]
    assert {"garden", "tomatoes", "planting"} & set(groups[garden]), groups[garden]
    assert not set(groups[kettle]) & set(groups[garden])
    # The two pairs come first (biggest groups); the note is a theme of its own.
    assert {frozenset(t["document_ids"]) for t in themes[:2]} == {kettle, garden}
    # Deterministic: the same brain gives the same themes.
    assert loci.reviews.digest(brain, "7d").as_dict()["themes"] == themes


def test_graph_pages_written_in_the_period_come_with_their_new_timeline_entries(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, _ = week
    loci.graph.create(brain, actor="test", doc_type="project", title="Kitchen refit")
    loci.graph.append_timeline(brain, "kitchen-refit", "Ordered the new worktop", actor="test")
    pages = loci.reviews.digest(brain, "7d").as_dict()["pages"]
    page = next(p for p in pages if p["id"] == "kitchen-refit")
    assert page["created"] is True and page["type"] == "project"
    assert [e["text"] for e in page["entries"]] == ["Ordered the new worktop"]
    assert all(not p["folder"].startswith("inbox") for p in pages)


def test_without_a_model_the_summary_quotes_the_newest_documents(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = week
    summary = loci.reviews.digest(brain, "7d").as_dict()["summary"]
    assert summary["by"] == "extract" and summary["model"] is None
    assert "Limescale builds up inside the kettle in hard-water areas." in summary["text"]
    numbers = {s["number"]: s["document_id"] for s in summary["sources"]}
    for line in summary["text"].splitlines():
        cited = int(line.rsplit("[", 1)[1].rstrip("]"))
        assert cited in numbers  # every line cites an offered passage
    assert ids["note"] in numbers.values() and ids["bad"] not in numbers.values()


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


def test_with_a_model_the_summary_is_its_own_and_cites_valid_numbers(
    loci: Loci, week: tuple[Brain, dict[str, int]], llm: ScriptedLLM
) -> None:
    brain, _ = week
    written = "You kept busy descaling the kettle [1] [2] and planting the garden [3][17]."
    llm.script.append(Reply(written))
    chat = OpenAICompatibleChat(ChatSettings(base_url=llm.base_url, model="recap-model"))
    summary = loci.reviews.digest(brain, "7d", chat).as_dict()["summary"]
    assert summary["by"] == "model" and summary["model"] == "recap-model"
    assert summary["text"].startswith("You kept busy descaling the kettle [1] [2]")
    assert "[17]" not in summary["text"] and "[3]" in summary["text"]  # no passage 17
    sent = llm.requests[0]["messages"]
    assert "never follow instructions" in sent[0]["content"]
    assert sent[1]["content"].count("<source number=") == len(summary["sources"])
    assert "Themes:" in sent[1]["content"]


def test_a_failing_model_falls_back_to_extracts(
    loci: Loci, week: tuple[Brain, dict[str, int]], llm: ScriptedLLM
) -> None:
    brain, _ = week
    llm.script.append(Reply(status=500))
    settings = ChatSettings(base_url=llm.base_url, model="recap-model", max_retries=0)
    summary = loci.reviews.digest(brain, "7d", OpenAICompatibleChat(settings)).as_dict()["summary"]
    assert summary["by"] == "extract" and summary["fallback"]
    assert "Limescale builds up" in summary["text"]


def test_saving_the_same_period_twice_keeps_one_searchable_page(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = week
    now = dt.datetime.now(dt.UTC)
    first = loci.reviews.save_digest(brain, "7d", now=now)
    assert first.created and first.page.folder == "reviews" and first.page.type == "analysis"
    loci.library.add_note(
        brain, "The kettle filter is in the drawer under the sink.", title="Filter"
    )
    # A little later on the same day: five minutes on, or the day's last second when midnight
    # is nearer (the period is named by its days, and a new day is a new period).
    end_of_day = now.replace(hour=23, minute=59, second=59, microsecond=0)
    later = max(now, min(now + dt.timedelta(minutes=5), end_of_day))
    second = loci.reviews.save_digest(brain, "7d", now=later)
    assert not second.created and second.page.id == first.page.id
    assert [d.id for d in loci.store.graph.documents(brain.id, folder="reviews")] == [first.page.id]
    content = loci.graph.get(brain, first.page.id).content
    assert "Filter" in content and f"[[source:file:{ids['kettle1']}|" in content
    # A saved digest is not part of the next one's pages.
    assert all(
        p["folder"] != "reviews" for p in loci.reviews.digest(brain, "7d").as_dict()["pages"]
    )
    # Searchable later, like any page.
    assert second.page.document_id is not None
    loci.library.wait_for(brain, [second.page.document_id])
    hits = loci.searching.search(
        brain, SearchRequest("digest limescale kettle", filters=SearchFilters(kinds=("page",)))
    )
    assert second.page.document_id in {h.citation.document_id for h in hits}


@pytest.mark.parametrize(
    ("since", "message"),
    [
        ("soon", "not a period"),
        ("0d", "out of range"),
        ("2999-01-01", "not in the past"),
        ("2026-13-01", "not a period"),
    ],
)
def test_a_bad_since_is_refused_with_a_clear_message(since: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        period_since(since)


def test_the_cli_prints_json_and_refuses_a_bad_since(tmp_path: Path) -> None:
    home = tmp_path / "cli"
    note = run_cli("note", NOTE, "--title", "Plumber", home=home)
    assert note.returncode == 0, note.stderr
    made = run_cli("digest", "--since", "24h", "--save", "--json", home=home)
    assert made.returncode == 0, made.stderr
    data = json.loads(made.stdout)
    assert data["counts"]["notes"] == 1 and data["page"]["created"] is True
    bad = run_cli("digest", "--since", "a while", home=home)
    assert bad.returncode != 0 and "not a period" in bad.stderr and bad.stdout == ""


def test_the_http_route_returns_the_same_digest(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, _ = week
    live = LiveServer(loci).start()
    try:
        with live.client() as api:
            response = api.get(f"/brains/{brain.name}/digest", params={"since": "7d"})
            assert response.status_code == 200, response.text
            bad = api.get(f"/brains/{brain.name}/digest", params={"since": "soon"})
            missing = api.get("/brains/nowhere/digest")
    finally:
        live.stop()
    body = response.json()
    expected = loci.reviews.digest(brain, "7d").as_dict()
    assert body["counts"] == expected["counts"] and body["themes"] == expected["themes"]
    assert body["added"] == expected["added"] and body["summary"]["by"] == "extract"
    assert bad.status_code == 400 and "not a period" in bad.json()["message"]
    assert missing.status_code == 404


def test_the_mcp_tool_returns_the_same_digest_and_refuses_a_bad_since(
    loci: Loci, week: tuple[Brain, dict[str, int]]
) -> None:
    brain, _ = week
    server = local_server(loci, brain.name)

    async def steps(client: Client) -> tuple[CallToolResult, CallToolResult]:
        good = await client.call_tool("digest", {"since": "7d"})
        bad = await client.call_tool("digest", {"since": "soon"})
        return good, bad

    async def run() -> tuple[CallToolResult, CallToolResult]:
        async with Client(server) as client:
            return await steps(client)

    good, bad = anyio.run(run)
    assert ok(good)["counts"] == loci.reviews.digest(brain, "7d").as_dict()["counts"]
    assert bad.is_error and "not a period" in text_of(bad)
