"""A question is a follow-up only when it leans on the last turn: "and what is the booking code?"
finds the code in the same passage; an unrelated next question starts afresh, not glued to the
one before."""

from __future__ import annotations

import pytest

from loci.answer.events import Rewritten, final_answer
from loci.answer.intents import depends_on_last_turn
from loci.models import Brain
from loci.service import Loci

NOTES = {
    "Dentist": "Next check-up with Dr. Patel on 3 Feb. 2027 at 10.30 a.m. at the Elm Street "
    "practice. The booking code is DX-4471.",
    "Car": "The last filling cost 58.20 GBP at the Shell station on 12 November.",
    "Boiler": "Marsh Heating services the boiler every October; call 0161 496 0000.",
}


@pytest.mark.parametrize(
    ("question", "leans"),
    [
        ("and what is the booking code?", True),
        ("What about its price?", True),
        ("When do they open?", True),
        ("and Tuesday?", True),
        ("How much did the last filling cost?", False),
        ("Who services the boiler?", False),
    ],
)
def test_what_leans_on_the_last_turn(question: str, leans: bool) -> None:
    assert depends_on_last_turn(question) is leans


def test_a_follow_up_finds_its_answer_and_an_unrelated_question_starts_afresh(
    loci: Loci, brain: Brain
) -> None:
    ids = [loci.library.add_note(brain, t, title=n).document.id for n, t in NOTES.items()]
    loci.library.wait_for(brain, ids)
    first = final_answer(loci.answers.converse(brain, "When is my next dentist appointment?"))
    conversation = first.conversation_id
    assert conversation is not None and "3 Feb. 2027" in first.answer

    follow = list(loci.answers.converse(brain, "and what is the booking code?",
                                        conversation_id=conversation))  # fmt: skip
    assert "DX-4471" in final_answer(iter(follow)).answer

    fresh = list(loci.answers.converse(brain, "How much did the last filling cost?",
                                       conversation_id=conversation))  # fmt: skip
    assert not any(isinstance(e, Rewritten) for e in fresh)  # asked as it was put
    answer = final_answer(iter(fresh))
    assert "58.20 GBP" in answer.answer and "Dr. Patel" not in answer.answer
