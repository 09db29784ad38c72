"""A model's answer is held against the passages it cites, sentence by sentence: a sentence that
says what they do not (a number, a name the model made up) is named with its reason, the model
answers once more told which, and what is still unsupported is marked so — in the stream, in the
answer's JSON and in its text. Against a scripted OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loci.answer.events import Checked, Done, Revise, Token, final_answer
from loci.answer.quoting import Reader
from loci.answer.sources import number
from loci.answer.support import check
from loci.embed.base import Embedder
from loci.llm.client import ChatSettings, OpenAICompatibleChat
from loci.models import Brain, Citation, Hit, Location
from loci.service import Loci
from tests.support.asking import events
from tests.support.live_server import LiveServer
from tests.support.scripted_llm import Reply, ScriptedLLM, step_of
from tests.support.services import make_service

BOILER = (
    "# Boiler\n\nMarsh Heating services the boiler every October; the last visit was on "
    "12 October 2026. The pressure should read 1.5 bar when the boiler is cold."
)
TRUE = "Marsh Heating services the boiler every October [1]."
INVENTED = "The yearly service costs 240 GBP and is done by Kwik Garage [1]."
REVISE_MARK = "not supported by the sources they cite"


def _hit(text: str) -> Hit:
    citation = Citation(
        document_id=1, name="boiler.md", title=None, chunk_index=0, location=Location(),
        heading_path=("Boiler",), source_url=None,
    )  # fmt: skip
    return Hit(1, citation, text, text, 1.0, 1, 1, 1.0, 0.5)


def test_a_claim_is_supported_by_what_its_passage_says_not_by_what_it_does_not() -> None:
    sources = number([_hit(BOILER)], "home")
    claims = check(f"{TRUE} {INVENTED}\nThe pressure should be 1.5 bar when cold [1].", sources,
                   Reader())  # fmt: skip
    assert [(c.supported, c.sources) for c in claims] == [(True, (1,)), (False, (1,)), (True, (1,))]
    assert claims[1].reason == "“240” is not in [1]"
    # A paraphrase keeps the passage's words and its numbers: supported.
    (paraphrase,) = check("The last visit by Marsh Heating was on 12 October 2026 [1].", sources,
                          Reader())  # fmt: skip
    assert paraphrase.supported


class _Answers:
    """Routes and grades as a model would, answers with `first`, and, told which sentences its
    sources do not support, with `second`."""

    def __init__(self, first: str, second: str) -> None:
        self.first, self.second = first, second
        self.revisions: list[str] = []

    def __call__(self, request: dict[str, Any]) -> Reply:
        step = step_of(request)
        user = request["messages"][-1]["content"]
        if step == "route":
            return Reply(json.dumps({"intent": "simple_lookup", "confidence": 0.9}))
        if step == "expand":
            return Reply(json.dumps({"queries": ["boiler service"]}))
        if step == "grade":
            grades = [{"source": 1, "reasoning": "states it", "relevance": "relevant",
                       "score": 0.9}]  # fmt: skip
            return Reply(json.dumps({"grades": grades}))
        if REVISE_MARK in user:
            self.revisions.append(user)
            return Reply(self.second)
        return Reply(self.first)


@pytest.fixture
def boiler(loci: Loci, brain: Brain) -> Brain:
    added = loci.library.add_bytes(brain, "boiler.md", BOILER.encode())
    loci.library.wait_for(brain, [added.document.id])
    return brain


def _scripted(first: str, second: str) -> Iterator[tuple[_Answers, OpenAICompatibleChat]]:
    script = _Answers(first, second)
    llm = ScriptedLLM(responder=script).start()
    try:
        settings = ChatSettings(base_url=llm.base_url, model="scripted", timeout_s=5.0,
                                backoff_base_s=0.01)  # fmt: skip
        yield script, OpenAICompatibleChat(settings)
    finally:
        llm.stop()


def test_an_invented_claim_is_named_and_the_model_answers_again(loci: Loci, boiler: Brain) -> None:
    for script, chat in _scripted(f"{TRUE} {INVENTED}", TRUE):
        events = list(loci.answers.ask(boiler, "Who services the boiler, and what does it cost?",
                                       chat=chat))  # fmt: skip
        assert len(script.revisions) == 1
        assert "240" in script.revisions[0] and "is not in [1]" in script.revisions[0]
    kinds = [type(e) for e in events]
    assert Revise in kinds and kinds.index(Revise) < kinds.index(Checked)
    after = "".join(e.text for e in events[kinds.index(Revise) :] if isinstance(e, Token))
    assert after.strip() == TRUE  # what a reader shows once it cleared the first answer
    done: Done = final_answer(iter(events))
    assert "240" not in done.answer and "Not supported" not in done.answer
    assert done.claims is not None and all(c.supported for c in done.claims)


def test_a_claim_still_unsupported_is_marked_in_the_answer_and_its_json(
    loci: Loci, boiler: Brain
) -> None:
    for _, chat in _scripted(f"{TRUE} {INVENTED}", f"{TRUE} {INVENTED}"):
        done = final_answer(loci.answers.ask(boiler, "Who services the boiler?", chat=chat))
    assert "Not supported by the passages it cites:" in done.answer
    assert "240 GBP" in done.answer.split("Not supported by the passages it cites:")[1]
    wire = done.to_json()["claims"]
    assert [c["supported"] for c in wire] == [True, False]
    assert wire[1]["reason"] == "“240” is not in [1]" and wire[1]["sources"] == [1]


def test_the_stream_over_http_carries_the_revision_and_the_check(
    tmp_path: Path, embedder: Embedder
) -> None:
    script = _Answers(f"{TRUE} {INVENTED}", TRUE)
    llm = ScriptedLLM(responder=script).start()
    loci = make_service(tmp_path / "home", embedder, None, fetch_allowed_networks=["127.0.0.1/32"])
    server = LiveServer(loci).start()
    try:
        with server.client() as api:
            api.post("/brains", json={"name": "home"})
            note = api.post("/brains/home/notes", json={"text": BOILER})
            server.wait_ready(api, "home", note.json()["document"]["id"])
            saved = api.put("/me/model", json={"base_url": llm.base_url, "model": "scripted"})
            assert saved.status_code == 200, saved.text
            received = events(api, "home", {"question": "Who services the boiler?"})
    finally:
        server.stop()
        llm.stop()
        loci.store.close()
    kinds = [kind for kind, _ in received]
    assert "revise" in kinds and "check" in kinds
    check_event = next(data for kind, data in received if kind == "check")
    assert check_event["unsupported"] == 0  # the second answer, checked
    done = received[-1][1]
    assert "240" not in done["answer"] and all(c["supported"] for c in done["claims"])
