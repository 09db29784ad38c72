"""`ask` narrowed by filters (kinds, tags, file, dates — or a time phrase in the question) and
widened to several brains, without a model and with the scripted one."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loci.answer.events import AskEvent
from loci.answer.scope import scope_for
from loci.answer.timeframe import time_range
from loci.errors import InvalidInput
from loci.llm.client import ChatSettings, OpenAICompatibleChat
from loci.models import Brain, SearchFilters
from loci.service import Loci
from loci.store.sqlite import SqliteStore
from tests.support.cli import run_cli
from tests.support.scripted_llm import Reply, ScriptedLLM

WEDNESDAY = dt.date(2025, 6, 18)
NOTE = "The garage door code is 4471, set by Mia in spring."
FILE = "# Garage\n\nThe garage door code was 9902 before the new opener was fitted.\n"
OLD = "# Old lease\n\nThe garage door code in the old flat was 1234, kept in the drawer.\n"


# time phrases ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("question", "after", "before"),
    [
        ("what did I add today?", "2025-06-18", "2025-06-19"),
        ("notes from yesterday", "2025-06-17", "2025-06-18"),
        ("what did I save this week about tax?", "2025-06-16", "2025-06-23"),
        ("last week's meeting notes", "2025-06-09", "2025-06-16"),
        ("anything this month on the boiler", "2025-06-01", "2025-07-01"),
        ("what did I learn last month", "2025-05-01", "2025-06-01"),
        ("this year's invoices", "2025-01-01", "2026-01-01"),
        ("documents from last year", "2024-01-01", "2025-01-01"),
        ("what have I read recently", "2025-05-19", None),
        ("anything in the last 10 days", "2025-06-08", None),
    ],
)
def test_time_phrases_become_date_ranges(question: str, after: str, before: str | None) -> None:
    found = time_range(question, WEDNESDAY)
    assert found is not None
    assert (found.after, found.before) == (after, before)
    assert found.phrase.lower() in question.lower()


def test_last_month_in_january_is_december_of_the_year_before() -> None:
    found = time_range("what did I add last month?", dt.date(2026, 1, 10))
    assert found is not None and (found.after, found.before) == ("2025-12-01", "2026-01-01")


@pytest.mark.parametrize(
    "question",
    [
        "What is the 2025 budget?",
        "How does the week planner work?",
        "Who lasted a month?",
        # A named year or month is about when things happened, not when they were kept.
        "what happened in 2023?",
        "what did we decide in March 2024",
        "papers during december 2024",
    ],
)
def test_questions_without_a_relative_time_phrase_have_no_range(question: str) -> None:
    assert time_range(question, WEDNESDAY) is None


def test_explicit_dates_win_over_the_question() -> None:
    given = SearchFilters(created_after="2020-01-01")
    scope = scope_for("what did I add last month?", given, WEDNESDAY)
    assert scope.filters == given and scope.from_question is None
    inferred = scope_for("what did I add last month?", SearchFilters(kinds=("note",)), WEDNESDAY)
    assert inferred.filters.created_after == "2025-05-01"
    assert inferred.filters.kinds == ("note",) and inferred.from_question == "last month"
    assert "notes added from 2025-05-01 to 2025-05-31" in inferred.describe()


@pytest.mark.parametrize(
    ("filters", "message"),
    [
        (SearchFilters(kinds=("memo",)), "unknown document kind 'memo'"),  # type: ignore[arg-type]
        (SearchFilters(created_after="last tuesday"), "not a date"),
        (SearchFilters(created_before="2025-13-01"), "not a date"),
        (SearchFilters(created_after="2025-02-01", created_before="2025-01-01"), "must come"),
        (SearchFilters(tags=(" ",)), "a tag is empty"),
    ],
)
def test_bad_filters_are_refused_with_their_reason(filters: SearchFilters, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        scope_for("where is the key?", filters)


# over a real brain, without a model --------------------------------------------------------
def backdate(loci: Loci, document_id: int, when: str) -> None:
    assert isinstance(loci.store, SqliteStore)
    loci.store.db.execute(
        "UPDATE documents SET created_at = ? WHERE id = ?", (f"{when}T09:00:00Z", document_id)
    )


@pytest.fixture
def garage(loci: Loci) -> tuple[Brain, dict[str, int]]:
    brain = loci.brain("home")
    ids = {
        "note": loci.library.add_note(brain, NOTE, title="Garage code", tags=["house"]).document.id,
        "file": loci.library.add_bytes(brain, "garage.md", FILE.encode()).document.id,
        "old": loci.library.add_bytes(brain, "old-lease.md", OLD.encode()).document.id,
    }
    assert all(d.status == "ready" for d in loci.library.wait_for(brain, list(ids.values())))
    backdate(loci, ids["old"], "2021-04-02")
    return brain, ids


def done(events: list[AskEvent]) -> dict[str, Any]:
    assert events[-1].type == "done", events[-1]
    return events[-1].data


QUESTION = "What is the garage door code?"


def test_unfiltered_ask_cites_every_kind(loci: Loci, garage: tuple[Brain, dict[str, int]]) -> None:
    brain, ids = garage
    result = done(list(loci.answers.ask(brain, QUESTION)))
    cited = {c["document_id"] for c in result["citations"]}
    assert {ids["note"], ids["file"]} <= cited
    assert result["scope"] is None  # nothing narrowed it


def test_a_note_only_ask_cites_only_notes(loci: Loci, garage: tuple[Brain, dict[str, int]]) -> None:
    brain, ids = garage
    events = list(loci.answers.ask(brain, QUESTION, filters=SearchFilters(kinds=("note",))))
    result = done(events)
    assert "4471" in result["answer"]
    assert {c["document_id"] for c in result["citations"]} == {ids["note"]}
    scope = next(e.data for e in events if e.type == "scope")
    assert scope["filters"]["kinds"] == ["note"] and scope["brains"] == ["home"]


def test_a_dated_ask_cites_only_documents_in_range(
    loci: Loci, garage: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = garage
    dated = SearchFilters(created_after="2021-01-01", created_before="2022-01-01")
    result = done(list(loci.answers.ask(brain, QUESTION, filters=dated)))
    assert "1234" in result["answer"]
    assert {c["document_id"] for c in result["citations"]} == {ids["old"]}


def test_a_time_phrase_narrows_only_when_something_was_added_then(
    loci: Loci, garage: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = garage
    last_month = time_range("last month", dt.date.today())
    assert last_month is not None and last_month.after is not None
    backdate(loci, ids["old"], last_month.after)
    phrased = done(list(loci.answers.ask(brain, "What was the garage door code last month?")))
    assert {c["document_id"] for c in phrased["citations"]} == {ids["old"]}
    assert phrased["scope"]["from_question"] == "last month"
    # Nothing was added yesterday: the guessed dates step aside and the answer is not "nothing".
    anyway = done(list(loci.answers.ask(brain, "What was the garage door code yesterday?")))
    assert {ids["note"], ids["file"]} <= {c["document_id"] for c in anyway["citations"]}
    assert anyway["scope"] is None


def test_an_empty_filtered_search_says_so(loci: Loci, garage: tuple[Brain, dict[str, int]]) -> None:
    brain, _ = garage
    dated = SearchFilters(created_after="2019-01-01", created_before="2020-01-01")
    result = done(list(loci.answers.ask(brain, QUESTION, filters=dated)))
    assert result["citations"] == [] and result["decision"] == "no_relevant_sources"
    assert result["answer"].startswith(
        "I found nothing in this brain among documents added from 2019-01-01 to 2019-12-31"
    )
    tagged = done(list(loci.answers.ask(brain, QUESTION, filters=SearchFilters(tags=("car",)))))
    assert tagged["citations"] == [] and "tagged car" in tagged["answer"]


def test_a_file_filter_reaches_document_level_intents(
    loci: Loci, garage: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = garage
    listing = done(
        list(loci.answers.ask(brain, "list documents about the garage door", filters=SearchFilters(
            name="garage.md")))
    )  # fmt: skip
    assert listing["intent"] == "list_documents"
    assert {c["document_id"] for c in listing["citations"]} == {ids["file"]}
    summary = done(
        list(
            loci.answers.ask(
                brain, "summarize old-lease.md", filters=SearchFilters(kinds=("note",))
            )
        )
    )
    # The named file is not a note: the summary falls back to a search among notes.
    assert summary["intent"] == "summarization" and "1234" not in summary["answer"]
    assert all(c["document_id"] == ids["note"] for c in summary["citations"])


def test_asking_across_brains_cites_both_and_names_each(
    loci: Loci, garage: tuple[Brain, dict[str, int]]
) -> None:
    home, ids = garage
    work = loci.brain("work")
    shed = loci.library.add_bytes(work, "shed.md", b"# Shed\n\nThe shed padlock code is 8080.\n")
    loci.library.wait_for(work, [shed.document.id])
    loci.brain("private")  # exists, not asked
    events = list(loci.answers.ask(home, "What are the garage door code and the shed padlock code?",
                           brains=[work]))  # fmt: skip
    result = done(events)
    by_brain = {(c["brain"], c["document_id"]) for c in result["citations"]}
    assert ("work", shed.document.id) in by_brain
    assert any(b == "home" and d in ids.values() for b, d in by_brain)
    assert {b for b, _ in by_brain} == {"home", "work"}
    assert next(e.data for e in events if e.type == "scope")["brains"] == ["home", "work"]
    alone = done(list(loci.answers.ask(home, "What is the shed padlock code?")))
    assert all(c["brain"] == "home" for c in alone["citations"])


def test_conversations_keep_the_filters_choice_per_question(
    loci: Loci, garage: tuple[Brain, dict[str, int]]
) -> None:
    brain, ids = garage
    first = done(
        list(loci.answers.converse(brain, QUESTION, filters=SearchFilters(kinds=("note",))))
    )
    assert {c["document_id"] for c in first["citations"]} == {ids["note"]}
    _, messages = loci.answers.conversation(brain, first["conversation_id"])
    assert messages[-1].citations[0]["document_id"] == ids["note"]
    with pytest.raises(InvalidInput):
        list(loci.answers.converse(brain, QUESTION, filters=SearchFilters(created_after="soon")))
    assert len(loci.answers.conversation(brain, first["conversation_id"])[1]) == 2  # nothing kept


# with the scripted model: every search is filtered ------------------------------------------
@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


def test_every_query_the_model_writes_is_searched_within_the_filters(
    loci: Loci, garage: tuple[Brain, dict[str, int]], llm: ScriptedLLM
) -> None:
    brain, ids = garage

    def reply(request: dict[str, Any]) -> Reply:
        system = request["messages"][0]["content"]
        user = request["messages"][-1]["content"]
        if "You classify a question" in system:
            return Reply(json.dumps({"intent": "simple_lookup", "confidence": 0.9}))
        if "different search queries" in system:  # phrasings that find the file and old lease
            return Reply(json.dumps({"queries": ["new opener garage 9902", "old flat drawer"]}))
        if "You judge whether passages" in system:
            numbers = [int(n) for n in re.findall(r'number="(\d+)"', user)]
            grades = [{"source": n, "relevance": "relevant", "score": 0.9, "reasoning": "x"}
                      for n in numbers]  # fmt: skip
            return Reply(json.dumps({"grades": grades}))
        if "You answer the user's question" in system:
            return Reply("The code is 4471 [1].")
        return Reply("ok")

    llm.responder = reply
    chat = OpenAICompatibleChat(
        ChatSettings(base_url=llm.base_url, model="scripted", timeout_s=5, backoff_base_s=0.01)
    )
    events = list(
        loci.answers.ask(brain, QUESTION, chat=chat, filters=SearchFilters(kinds=("note",)))
    )
    result = done(events)
    queries = next(e.data["queries"] for e in events if e.type == "queries")
    assert "old flat drawer" in queries
    sources = next(e.data["sources"] for e in events if e.type == "sources")
    assert {s["document_id"] for s in sources} == {ids["note"]}
    prompts = "\n".join(json.dumps(r["messages"]) for r in llm.requests)
    assert "9902" not in prompts and "1234" not in prompts  # no other kind reached the model
    assert {c["document_id"] for c in result["citations"]} == {ids["note"]}


# the CLI ----------------------------------------------------------------------------------------
def test_loci_ask_takes_filters_and_several_brains(
    loci: Loci, garage: tuple[Brain, dict[str, int]], tmp_path: Path
) -> None:
    _, ids = garage
    work = loci.brain("work")
    shed = loci.library.add_bytes(work, "shed.md", b"# Shed\n\nThe shed padlock code is 8080.\n")
    loci.library.wait_for(work, [shed.document.id])
    home = tmp_path / "home"
    notes = run_cli("ask", QUESTION, "-b", "home", "--kind", "note", "--json", home=home)
    assert notes.returncode == 0, notes.stderr
    result = json.loads(notes.stdout)
    assert {c["document_id"] for c in result["citations"]} == {ids["note"]}
    both = run_cli(
        "ask", "What are the garage door code and the shed padlock code?",
        "-b", "home", "-b", "work", "--after", "2025-01-01", home=home,
    )  # fmt: skip
    assert both.returncode == 0, both.stderr
    assert "8080" in both.stdout and "searching home, work: documents added since" in both.stderr
    bad = run_cli("ask", QUESTION, "-b", "home", "--before", "someday", home=home)
    assert bad.returncode != 0 and "not a date" in bad.stderr
    missing = run_cli("ask", QUESTION, "-b", "home", "-b", "nowhere", home=home)
    assert missing.returncode == 3 and "no brain 'nowhere'" in missing.stderr
    assert loci.find_brain("nowhere") is None  # a typo creates nothing
