"""`loci import chatgpt` and `loci import claude`: each conversation a document, each turn a
section headed by who spoke and when, so a search cites the turn and tells the person's
words from the assistant's; only the branch the person last saw is kept; a malformed export
imports nothing, a broken conversation fails alone."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from loci.imports.items import ExportRefused, Limits
from loci.models import Brain, Hit
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.importing import Importing, ImportReport
from tests.support.chat_exports import (
    chat_export,
    chatgpt_message,
    chatgpt_sample,
    claude_message,
    claude_sample,
)
from tests.support.exports import zip_of

SOURDOUGH = "6f1c2a9e-0b7d-4c53-9a51-1d2f3e4a5b6c"
LEASE = "c0ffee00-1234-4abc-9def-0123456789ab"
JAR = b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 32


def _import(loci: Loci, brain: Brain, kind: str, path: Path, **options: object) -> ImportReport:
    report = loci.importing.run(brain, kind, path, **options)  # type: ignore[arg-type]
    ids = [o.document_id for o in report.outcomes if o.document_id is not None]
    loci.library.wait_for(brain, ids)
    return report


def _hit(loci: Loci, brain: Brain, words: str) -> Hit:
    hits = loci.searching.search(brain, SearchRequest(words, mode="text", limit=5))
    assert hits, f"nothing found for {words!r}"
    return hits[0]


@pytest.mark.both_backends
def test_a_chatgpt_conversation_is_a_document_each_turn_cited_as_who_said_it(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    path = chat_export(tmp_path / "x.zip", chatgpt_sample(), files={"file-Zq8Jr2-jar.jpg": JAR})
    report = _import(loci, brain, "chatgpt", path)
    assert (report.counts["add"], report.counts["skip"], report.counts["fail"]) == (1, 1, 0)
    skipped = next(o for o in report.outcomes if o.action == "skip")
    assert (skipped.name, skipped.reason) == ("New chat", "no messages to show")
    documents = {d.origin: d for d in loci.library.documents(brain)}
    document = documents[f"chatgpt:{SOURDOUGH}"]
    assert document.title == "Sourdough starter rescue"
    assert len(documents) == 2  # the conversation and the photo sent in it
    facts = document.metadata["import"]
    assert facts["created"].startswith("2024-03-01T10:00:00")
    assert facts["updated"].startswith("2024-03-01T10:30:00")
    assert facts["turns"] == 4 and facts["model"] == "gpt-4o"

    asked = _hit(loci, brain, "nail polish remover")
    assert asked.citation.document_id == document.id
    assert asked.citation.heading_path[-1] == "You — 2024-03-01 10:02"
    answered = _hit(loci, brain, "acetone smell yeast")
    assert answered.citation.heading_path[-1] == "ChatGPT — 2024-03-01 10:02"
    # A heading inside the answer stays under its turn.
    fed = _hit(loci, brain, "discard half rye flour")
    assert fed.citation.heading_path[1:] == ("ChatGPT — 2024-03-01 10:02", "Feeding schedule")

    text = loci.library.document_text(brain, document.id) or ""
    assert "Here is the jar after one day." in text and "[image]" in text
    # The photo the person sent is in the export: kept, linked to the conversation.
    [photo] = document.metadata["attachments"]
    assert photo["name"] == "file-Zq8Jr2-jar.jpg"
    assert loci.library.original(brain, photo["id"]) == JAR
    assert loci.library.document(brain, photo["id"]).metadata["attached_to"] == document.id
    # The edited-away branch, the tool call and its output were never shown: left out.
    assert "spelt" not in text.lower()
    assert "hydration" not in text


@pytest.mark.both_backends
def test_a_second_run_adds_nothing_and_a_continued_conversation_updates_its_document(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    conversations = chatgpt_sample()
    first = _import(loci, brain, "chatgpt", chat_export(tmp_path / "a.zip", conversations))
    [document_id] = [o.document_id for o in first.outcomes if o.action == "add"]
    again = _import(loci, brain, "chatgpt", chat_export(tmp_path / "a.zip", conversations))
    assert again.counts == {"add": 0, "update": 0, "unchanged": 1, "fail": 0, "skip": 1}

    continued = copy.deepcopy(conversations)
    mapping = continued[0]["mapping"]
    question = chatgpt_message(
        "u9", "user", ["How long can it sit in the fridge unfed?"], "2024-03-02 08:00"
    )
    mapping["u9"] = {"id": "u9", "message": question, "parent": "a3", "children": []}
    mapping["a3"]["children"].append("u9")
    continued[0]["current_node"] = "u9"
    edited = _import(loci, brain, "chatgpt", chat_export(tmp_path / "b.zip", continued))
    assert edited.counts["update"] == 1
    assert [o.document_id for o in edited.outcomes if o.action == "update"] == [document_id]
    assert len(loci.library.documents(brain)) == 1
    hit = _hit(loci, brain, "fridge unfed")
    assert hit.citation.document_id == document_id
    assert hit.citation.heading_path[-1] == "You — 2024-03-02 08:00"


def test_a_dry_run_says_what_it_would_do_and_writes_nothing(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    path = chat_export(tmp_path / "x.zip", claude_sample())
    report = loci.importing.run(brain, "claude", path, dry_run=True)
    assert report.dry_run and (report.counts["add"], report.counts["skip"]) == (1, 1)
    [planned] = [o for o in report.outcomes if o.action == "add"]
    assert (planned.name, planned.attachments) == ("Reading my flat lease", 1)
    assert loci.library.documents(brain) == []


@pytest.mark.parametrize("kind", ["chatgpt", "claude"])
def test_a_malformed_export_is_refused_whole_with_its_reason(
    loci: Loci, brain: Brain, tmp_path: Path, kind: str
) -> None:
    whole = json.dumps(chatgpt_sample() if kind == "chatgpt" else claude_sample()).encode()
    cases = {
        "truncated.zip": (
            chat_export(tmp_path / "t.zip", whole[: len(whole) // 2]),
            "not valid JSON",
        ),
        "utf16.zip": (
            chat_export(tmp_path / "u.zip", whole.decode().encode("utf-16")),
            "not UTF-8",
        ),
        "other.zip": (
            zip_of(tmp_path / "o.zip", {"notes/a.md": b"# A\n"}),
            "no conversations.json",
        ),
        "object.zip": (chat_export(tmp_path / "d.zip", b'{"conversations": []}'), "not a list"),
    }
    for name, (path, reason) in cases.items():
        with pytest.raises(ExportRefused, match=reason):
            loci.importing.run(brain, kind, path)
        assert loci.library.documents(brain) == [], name
    cut = tmp_path / "cut.zip"
    cut.write_bytes(chat_export(tmp_path / "w.zip", whole).read_bytes()[:200])
    with pytest.raises(ExportRefused, match="not a readable zip"):
        loci.importing.run(brain, kind, cut)
    plain = tmp_path / "notes.txt"
    plain.write_text("not an export")
    with pytest.raises(ExportRefused, match="no conversations.json"):
        loci.importing.run(brain, kind, plain)


def test_a_broken_chatgpt_conversation_fails_alone(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    good, _ = chatgpt_sample()
    lost = copy.deepcopy(good) | {"id": "lost", "title": "Lost pointer", "current_node": "nope"}
    looped = copy.deepcopy(good) | {"id": "loop", "title": "Looped"}
    looped["mapping"]["client-created-root"]["parent"] = looped["current_node"]
    report = _import(
        loci, brain, "chatgpt", chat_export(tmp_path / "x.zip", [lost, "junk", looped, good])
    )
    assert report.counts["add"] == 1
    failures = {o.name: o.reason for o in report.outcomes if o.action == "fail"}
    assert failures == {
        "Lost pointer": "its current message 'nope' is not among its messages",
        "conversation 2": "not a conversation (an object with an id and a mapping)",
        "Looped": "its messages' parents go round in a loop",
    }
    assert [d.title for d in loci.library.documents(brain)] == ["Sourdough starter rescue"]


@pytest.mark.both_backends
def test_a_claude_conversation_is_a_document_each_turn_cited_with_its_attachment(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    report = _import(loci, brain, "claude", chat_export(tmp_path / "c.zip", claude_sample()))
    assert (report.counts["add"], report.counts["skip"]) == (1, 1)
    skipped = next(o for o in report.outcomes if o.action == "skip")
    assert (skipped.name, skipped.reason) == ("conversation 2", "no messages")
    lease = next(d for d in loci.library.documents(brain) if d.origin == f"claude:{LEASE}")
    assert lease.title == "Reading my flat lease"
    facts = lease.metadata["import"]
    assert facts["created"] == "2024-05-10T18:40:01.000000Z"
    assert facts["updated"] == "2024-05-10T18:45:30.000000Z"
    asked = _hit(loci, brain, "notice on paper")
    assert asked.citation.document_id == lease.id
    assert asked.citation.heading_path[-1] == "You — 2024-05-10 18:45"
    answered = _hit(loci, brain, "letter electronic notices")
    assert answered.citation.heading_path[-1] == "Claude — 2024-05-10 18:45"
    text = loci.library.document_text(brain, lease.id) or ""
    assert "*attached: lease.pdf, floorplan.png*" in text
    # Claude's thinking and its tool call were not shown to the person.
    assert "break clause first" not in text and "clause 9.2" not in text
    # The text Claude read from the attached file is its own document, linked both ways.
    [attachment] = lease.metadata["attachments"]
    clause = _hit(loci, brain, "either party may end the tenancy")
    assert clause.citation.document_id == attachment["id"] != lease.id
    assert attachment["name"] == "lease.pdf.txt"


def test_a_claude_conversation_edited_updates_and_a_broken_one_fails_alone(
    loci: Loci, brain: Brain, tmp_path: Path
) -> None:
    lease, empty = claude_sample()
    first = _import(loci, brain, "claude", chat_export(tmp_path / "a.zip", [lease, empty]))
    [lease_id] = [o.document_id for o in first.outcomes if o.action == "add"]
    longer = copy.deepcopy(lease)
    longer["chat_messages"].append(
        claude_message(
            "m5", "human", "Thanks, I will send it by recorded post.", "2024-05-11 09:12"
        )
    )
    broken = {"uuid": "b", "name": "Broken", "chat_messages": {"not": "a list"}}
    report = _import(loci, brain, "claude", chat_export(tmp_path / "b.zip", [broken, longer]))
    assert (report.counts["update"], report.counts["fail"]) == (1, 1)
    assert [o.reason for o in report.outcomes if o.action == "fail"] == [
        "its chat_messages are not a list"
    ]
    assert [o.document_id for o in report.outcomes if o.action == "update"] == [lease_id]
    assert _hit(loci, brain, "recorded post").citation.document_id == lease_id


@pytest.mark.parametrize("kind", ["chatgpt", "claude"])
def test_more_conversations_than_the_limit_refuse_the_export_before_anything_is_written(
    loci: Loci, brain: Brain, tmp_path: Path, kind: str
) -> None:
    many = []
    for number in range(3):
        if kind == "chatgpt":
            conversation = copy.deepcopy(chatgpt_sample()[0])
            conversation["id"] = f"c{number}"
        else:
            conversation = copy.deepcopy(claude_sample()[0])
            conversation["uuid"] = f"c{number}"
        many.append(conversation)
    small = Importing(loci.library, Limits(max_items=2))
    with pytest.raises(ExportRefused, match="more than 2 items"):
        small.run(brain, kind, chat_export(tmp_path / "many.zip", many))
    assert loci.library.documents(brain) == []
