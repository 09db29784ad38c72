"""Rating answers: up or down with a reason, kept on the message — in the store (both
backends), over HTTP (only the conversation's owner, only answers) and with `loci conversations
rate`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest

from loci.errors import InvalidInput, NotFound
from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer

CODE = "The garage door code is 4471."


def _converse(loci: Loci, brain: Brain, question: str, user_id: int | None = None) -> Any:
    """Ask in a new conversation (no model: the extractive answer); the `done` event's data."""
    events = list(loci.answers.converse(brain, question, user_id=user_id))
    return events[-1].data


@pytest.mark.both_backends
def test_rating_replaces_and_is_kept_on_the_answer(loci: Loci, brain: Brain) -> None:
    loci.library.wait_for(brain, [loci.library.add_note(brain, CODE).document.id])
    first = _converse(loci, brain, "What is the garage door code?")
    second = _converse(loci, brain, "Which code opens the garage?")
    talk, answer = first["conversation_id"], first["message_id"]

    up = loci.answers.rate_answer(brain, talk, answer, "up")
    assert up.feedback is not None and (up.feedback.rating, up.feedback.reason) == ("up", None)
    down = loci.answers.rate_answer(brain, talk, answer, "down", "  the  code changed\nlast year ")
    assert down.feedback is not None
    assert (down.feedback.rating, down.feedback.reason) == ("down", "the code changed last year")
    _, messages = loci.answers.conversation(brain, talk)
    assert [m.feedback for m in messages] == [None, down.feedback]  # replaced, not added
    assert messages[1].content == down.content and messages[1].citations == down.citations

    loci.answers.rate_answer(brain, second["conversation_id"], second["message_id"], "up")
    rated = loci.answers.rated_answers(brain)
    assert [(r.question, r.answer.id) for r in rated] == [
        ("What is the garage door code?", answer),
        ("Which code opens the garage?", second["message_id"]),
    ]
    assert [r.answer.id for r in loci.answers.rated_answers(brain, "down")] == [answer]
    assert loci.answers.rated_answers(loci.brain("other"), "down") == []  # scoped to the brain

    question_id = messages[0].id
    with pytest.raises(InvalidInput, match="is a question"):
        loci.answers.rate_answer(brain, talk, question_id, "up")
    with pytest.raises(NotFound):  # an answer of another conversation
        loci.answers.rate_answer(brain, talk, second["message_id"], "down")
    with pytest.raises(NotFound):  # another user's conversation
        loci.answers.rate_answer(
            brain, talk, answer, "up", user_id=loci.store.accounts.create_user("x").id
        )
    with pytest.raises(InvalidInput, match="up or down"):
        loci.answers.rate_answer(brain, talk, answer, "sideways")
    with pytest.raises(InvalidInput, match="longer than"):
        loci.answers.rate_answer(brain, talk, answer, "down", "x" * 1001)
    # Refusals changed nothing; deleting the conversation takes its ratings along.
    assert loci.answers.conversation(brain, talk)[1][1].feedback == down.feedback
    loci.answers.delete_conversation(brain, talk)
    assert [r.answer.id for r in loci.answers.rated_answers(brain)] == [second["message_id"]]


def _answer(api: httpx.Client, brain: str, question: str) -> dict[str, Any]:
    response = api.post(f"/brains/{brain}/answer", json={"question": question})
    assert response.status_code == 200, response.text
    done: dict[str, Any] = response.json()
    return done


def test_rating_over_http_only_answers_and_only_the_owner(server: LiveServer) -> None:
    _, bob = server.accounts.add_user("bob")
    with server.client() as owner:
        owner.post("/brains", json={"name": "shared", "visibility": "workspace"})
        owner.post("/brains/shared/notes", json={"text": CODE})
        done = _answer(owner, "shared", "What is the garage door code?")
        talk = f"/brains/shared/conversations/{done['conversation_id']}"
        rate = f"{talk}/messages/{done['message_id']}/feedback"

        up = owner.post(rate, json={"rating": "up"})
        assert up.status_code == 200, up.text
        assert up.json()["id"] == done["message_id"]
        assert up.json()["feedback"]["rating"] == "up" and up.json()["feedback"]["reason"] is None
        down = owner.post(rate, json={"rating": "down", "reason": "old code"}).json()["feedback"]
        assert (down["rating"], down["reason"]) == ("down", "old code")
        messages = owner.get(talk).json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"]
        assert [m["feedback"] for m in messages] == [None, down]

        question = owner.post(
            f"{talk}/messages/{messages[0]['id']}/feedback", json={"rating": "up"}
        )
        assert question.status_code == 400 and "question" in question.json()["message"]
        assert (
            owner.post(f"{talk}/messages/987654/feedback", json={"rating": "up"}).status_code == 404
        )
        for bad in ({"rating": "meh"}, {"rating": "down", "reason": "x" * 1001}, {}):
            assert owner.post(rate, json=bad).status_code in (400, 422), bad

    with server.client(bob.secret) as other:  # a viewer of the brain, not of the conversation
        refused = other.post(rate, json={"rating": "up"})
        assert refused.status_code == 404 and refused.json()["error"] == "not_found"
        own = _answer(other, "shared", "Which code opens the garage?")
        mine = other.post(
            f"/brains/shared/conversations/{own['conversation_id']}/messages/"
            f"{own['message_id']}/feedback",
            json={"rating": "up", "reason": "spot on"},
        )
        assert mine.status_code == 200 and mine.json()["feedback"]["reason"] == "spot on"
    with server.client() as owner:  # Bob's attempt changed nothing
        assert owner.get(talk).json()["messages"][1]["feedback"] == down


def test_loci_conversations_rate(loci: Loci, brain: Brain, tmp_path: Path) -> None:
    loci.library.wait_for(brain, [loci.library.add_note(brain, CODE).document.id])
    done = _converse(loci, brain, "What is the garage door code?")
    talk, answer = str(done["conversation_id"]), str(done["message_id"])
    home = tmp_path / "home"

    rated = run_cli("conversations", "rate", talk, answer, "down", "--reason", "stale", home=home)
    assert rated.returncode == 0, rated.stderr
    assert f"answer {answer} rated down: stale" in rated.stdout
    again = run_cli("conversations", "rate", talk, answer, "up", "--json", home=home)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["feedback"]["rating"] == "up"
    shown = run_cli("conversations", "show", talk, home=home)
    assert "rated up" in shown.stdout and "stale" not in shown.stdout

    question = str(int(answer) - 1)
    refused = run_cli("conversations", "rate", talk, question, "down", home=home)
    assert refused.returncode == 1 and "is a question" in refused.stderr
    missing = run_cli("conversations", "rate", "999", answer, "down", home=home)
    assert missing.returncode == 3 and "no conversation" in missing.stderr
    _, messages = loci.answers.conversation(brain, int(talk))
    assert messages[1].feedback is not None and messages[1].feedback.rating == "up"
