"""`quiz` and `flashcards`: cloze items without a model; model items must cite real passages."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from loci.llm.client import ChatSettings, OpenAICompatibleChat
from loci.models import Brain
from loci.service import Loci
from tests.support.live_server import LiveServer
from tests.support.paths import REPO
from tests.support.scripted_llm import Reply, ScriptedLLM


@pytest.fixture
def brain(loci: Loci) -> Brain:
    brain = loci.brain("home")
    ids = [
        loci.library.add_file(brain, p).document.id for p in sorted((REPO / "examples").iterdir())
    ]
    loci.library.wait_for(brain, ids)
    return brain


def test_cloze_quiz_without_a_model(loci: Loci, brain: Brain) -> None:
    questions = loci.answers.quiz(brain, count=4)
    assert questions
    for q in questions:
        assert "_____" in q.question and len(q.choices) == 4 and len(set(q.choices)) == 4
        # the blanked sentence, with the right choice put back, is in the cited passage
        filled = q.question.removeprefix("Fill in the blank: ").replace(
            "_____", q.choices[q.answer]
        )
        assert filled in " ".join(q.source.hit.text.split())


def test_cloze_flashcards_on_a_topic(loci: Loci, brain: Brain) -> None:
    cards = loci.answers.flashcards(brain, "boiler pressure", count=3)
    assert cards and all(c.source.hit.citation.name == "boiler-manual.md" for c in cards)
    assert all("_____" in c.front and c.back for c in cards)


def test_without_a_topic_study_draws_on_what_was_added_not_on_loci_pages(
    loci: Loci, brain: Brain
) -> None:
    # The newest ready document is a graph page (as a saved answer or a digest would be).
    page = loci.graph.create(
        brain, actor="test", doc_type="project", title="Allotment",
        text="The allotment committee meets on the first Monday of every month at seven.",
    )  # fmt: skip
    loci.library.wait_for(brain, [d.id for d in loci.library.documents(brain, status="processing")])
    assert loci.library.document(brain, page.document_id or 0).status == "ready"
    cited = {c.source.hit.citation.name for c in loci.answers.flashcards(brain, count=10)}
    examples = {p.name for p in (REPO / "examples").iterdir()}
    assert cited and cited <= examples


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    server = ScriptedLLM().start()
    yield server
    server.stop()


def test_model_items_that_cite_nothing_are_dropped(
    loci: Loci, brain: Brain, llm: ScriptedLLM
) -> None:
    questions = [
        {"question": "How often is the boiler serviced?", "choices": ["Yearly", "Monthly",
         "Never", "Weekly"], "answer": 0, "explanation": "Every October.", "source": 1},
        {"question": "Invented?", "choices": ["a", "b", "c", "d"], "answer": 1, "source": 99},
        {"question": "Three choices?", "choices": ["a", "b", "c"], "answer": 0, "source": 1},
    ]  # fmt: skip
    llm.script = [Reply(json.dumps({"questions": questions}))]
    chat = OpenAICompatibleChat(ChatSettings(base_url=llm.base_url, model="m"))
    made = loci.answers.quiz(brain, "boiler", count=5, chat=chat)
    assert [q.question for q in made] == ["How often is the boiler serviced?"]
    assert made[0].source.number == 1


def test_a_failing_model_falls_back_to_cloze_cards(
    loci: Loci, brain: Brain, llm: ScriptedLLM
) -> None:
    llm.script = [Reply("no json at all")]
    chat = OpenAICompatibleChat(ChatSettings(base_url=llm.base_url, model="m"))
    cards = loci.answers.flashcards(brain, "sourdough", count=2, chat=chat)
    assert cards and all("_____" in c.front for c in cards)


def test_study_over_the_api(server: LiveServer) -> None:
    with server.client() as api:
        api.post("/brains", json={"name": "s"})
        manual = (REPO / "examples" / "boiler-manual.md").read_bytes()
        doc = api.post("/brains/s/files", files={"files": ("m.md", manual)}).json()
        server.wait_ready(api, "s", doc["results"][0]["document"]["id"])
        cards = api.post("/brains/s/flashcards", json={"count": 2}).json()
        assert len(cards) == 2 and cards[0]["source"]["name"] == "m.md"
        assert api.post("/brains/s/quiz", json={"count": 99}).status_code == 422
