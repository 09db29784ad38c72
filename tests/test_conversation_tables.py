"""Conversations in the store, through the one definition both backends share
(`loci.store.conversation_tables`): the same answers, the same errors, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest

from loci.errors import NotFound
from loci.store.base import Store

pytestmark = pytest.mark.both_backends


def test_a_conversation_belongs_to_its_brain_and_user(store: Store) -> None:
    brain = store.ensure_brain("home")
    other = store.ensure_brain("work")
    alice = store.accounts.create_user("alice").id
    talks = store.conversations
    mine = talks.create(brain.id, alice, "rent")
    cli = talks.create(brain.id, None, "boiler")  # the local CLI's: no user

    assert talks.get(brain.id, alice, mine.id) == mine
    assert talks.get(brain.id, None, cli.id) == cli
    for brain_id, user_id, talk in ((brain.id, None, mine), (other.id, alice, mine)):
        with pytest.raises(NotFound):
            talks.get(brain_id, user_id, talk.id)
    with pytest.raises(NotFound):
        talks.rename(brain.id, alice, cli.id, "taken")
    with pytest.raises(NotFound):
        talks.delete(brain.id, None, mine.id)

    assert talks.rename(brain.id, alice, mine.id, "the rent").title == "the rent"
    talks.add_message(mine.id, "user", "When is rent due?")
    answer = talks.add_message(mine.id, "assistant", "On the 1st.", [{"document_id": 7}], "qa")
    assert answer.citations == ({"document_id": 7},) and answer.intent == "qa"
    assert talks.latest(brain.id, alice) == talks.get(brain.id, alice, mine.id)
    assert [c.id for c in talks.recent(brain.id, None)] == [cli.id]
    rated = talks.rate(mine.id, answer.id, "down", "late")
    assert rated.feedback is not None and rated.feedback.rating == "down"
    assert [(r.question, r.answer) for r in talks.rated(brain.id, "down")] == [
        ("When is rent due?", rated)
    ]
    assert talks.rated(brain.id, "up") == [] and talks.rated(other.id) == []

    talks.delete(brain.id, alice, mine.id)
    assert talks.messages(mine.id) == []
    with pytest.raises(NotFound):
        talks.get(brain.id, alice, mine.id)


def test_a_message_for_a_conversation_that_is_gone_is_not_found(store: Store) -> None:
    brain = store.ensure_brain("home")
    talk = store.conversations.create(brain.id, None, "gone soon")
    store.conversations.delete(brain.id, None, talk.id)
    with pytest.raises(NotFound, match=f"no conversation with id {talk.id}"):
        store.conversations.add_message(talk.id, "user", "still there?")
