"""The typed ask events: `final_answer` turns a stream into its answer or its error, and the
JSON every surface emits keeps the field names clients read."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.answer.events import AskEvent, Done, Failed, Status, Token, final_answer
from loci.errors import LociError, NotFound
from loci.service import Loci
from tests.support.cli import run_cli

QUESTION = "What is the garage door code?"
WIRE = {
    "answer", "citations", "intent", "decision", "model", "fallbacks", "timings", "scope", "claims",
}  # fmt: skip


def test_a_stream_that_ends_without_its_answer_is_a_clear_error() -> None:
    broken = [Status("Writing the answer…"), Token("The garage door code is")]
    with pytest.raises(LociError, match="stopped before it was complete; ask again"):
        final_answer(broken)


def test_a_stream_that_failed_raises_its_error_and_reads_no_further() -> None:
    error = NotFound("no brain named attic")
    read: list[AskEvent] = []

    def stream() -> Iterator[AskEvent]:
        for event in (Status("Analyzing the question…"), Failed(error), Done("late", "lookup")):
            read.append(event)
            yield event

    with pytest.raises(NotFound) as raised:
        final_answer(stream())
    assert raised.value is error
    assert [e.type for e in read] == ["status", "error"]
    assert Failed(error).to_json() == {"error": "not_found", "message": "no brain named attic"}


def test_final_answer_is_the_done_of_a_real_ask(loci: Loci) -> None:
    brain = loci.brain("home")
    loci.library.wait_for(
        brain, [loci.library.add_note(brain, "The garage door code is 4471.").document.id]
    )
    events = list(loci.answers.ask(brain, QUESTION))
    done = final_answer(events)
    assert done is events[-1] and "4471" in done.answer and "[1]" in done.answer
    assert done.citations[0].number == 1 and done.model is None
    assert set(done.to_json()) == WIRE  # `ask` alone names no conversation

    kept = final_answer(loci.answers.converse(brain, QUESTION))
    _, messages = loci.answers.conversation(brain, kept.kept()[0])
    assert set(kept.to_json()) == WIRE | {"conversation_id", "message_id"}
    assert (messages[-1].id, messages[-1].content) == (kept.message_id, kept.answer)


def test_loci_ask_json_prints_the_answer_with_the_page_it_saved(loci: Loci, tmp_path: Path) -> None:
    brain = loci.brain("home")
    loci.library.wait_for(
        brain, [loci.library.add_note(brain, "The garage door code is 4471.").document.id]
    )
    done = run_cli("ask", QUESTION, "-b", "home", "--save", "--json", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert set(printed) == WIRE | {"conversation_id", "message_id", "saved"}
    assert "4471" in printed["answer"] and printed["citations"][0]["number"] == 1
    assert printed["saved"].startswith("research/answer-what-is-the-garage-door-code-")
