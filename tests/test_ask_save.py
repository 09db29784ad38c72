"""Keeping an answer as an analysis page in research/, and the chat's `save` intent."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from loci.answer.intents import save_request
from loci.graph.validate import validate
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer

QUESTION = "What is the garage door code?"


@pytest.mark.parametrize(
    ("message", "wanted"),
    [
        ("save this", ""),
        ("Please save that answer to my brain.", ""),
        ("remember this!", ""),
        ("remember that the gate code is 4471", "the gate code is 4471"),
        ("Note: Mia's birthday is 3 May", "Mia's birthday is 3 May"),
        ("do you remember that trip to Porto?", None),
        ("what did I save about taxes?", None),
        ("remember that?", None),
        ("How do I save this file?", None),
    ],
)
def test_the_save_intent_is_recognised_by_rules(message: str, wanted: str | None) -> None:
    assert save_request(message) == wanted


def setup(server: LiveServer, api: httpx.Client) -> dict[str, int]:
    api.post("/brains", json={"name": "home"})
    note = api.post("/brains/home/notes", json={"text": "The garage door code is 4471."})
    doc = api.post("/brains/home/files", files={"files": ("garage.md", b"# Garage\n\nThe "
                   b"garage door code was 9902 before the new opener.\n")})  # fmt: skip
    ids = {
        "note": note.json()["document"]["id"],
        "file": doc.json()["results"][0]["document"]["id"],
    }
    for doc_id in ids.values():
        server.wait_ready(api, "home", doc_id)
    return ids


def answer(api: httpx.Client, body: dict[str, Any]) -> dict[str, Any]:
    response = api.post("/brains/home/answer", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def test_a_saved_answer_is_a_valid_linked_page_and_saving_twice_is_one(
    server: LiveServer, loci: Loci
) -> None:
    with server.client() as api:
        ids = setup(server, api)
        result = answer(api, {"question": QUESTION})
        cited = {c["document_id"] for c in result["citations"]}
        assert cited == set(ids.values())
        path = (f"/brains/home/conversations/{result['conversation_id']}/messages/"
                f"{result['message_id']}/save")  # fmt: skip
        first = api.post(path)
        assert first.status_code == 200, first.text
        page = first.json()
        assert page["created"] is True
        doc = page["document"]
        assert (doc["type"], doc["folder"], doc["status"]) == ("analysis", "research", "draft")
        assert doc["title"] == "What is the garage door code"
        again = api.post(path).json()
        assert again["created"] is False and again["document"]["id"] == doc["id"]
        listed = api.get("/brains/home/graph/documents", params={"folder": "research"}).json()
        assert [d["id"] for d in listed] == [doc["id"]]
        full = api.get(f"/brains/home/graph/documents/{doc['id']}").json()
    brain = loci.brain("home")
    pointers = loci.graph.sources(brain, doc["id"])
    resolved = {p.document.id for p in pointers if p.document is not None}
    assert resolved == set(ids.values())  # each citation is a pointer the graph resolves
    kept = loci.graph.get(brain, doc["id"])
    assert validate(kept.doc) == []
    assert "4471" in kept.doc.truth and f"[[source:note:{ids['note']}|" in kept.doc.truth
    assert set(kept.doc.sources) == {f"note:{ids['note']}", f"file:{ids['file']}"}
    assert [e.text for e in kept.doc.timeline] == ["answered in chat"]
    assert (kept.doc.timeline[0].source or "").startswith("loci-chat:")
    assert full["document"]["id"] == doc["id"]
    # The page is searchable like any other once indexed.
    assert any(d.kind == "page" for d in loci.library.documents(brain))


def test_saving_needs_write_access_and_your_own_answer(server: LiveServer) -> None:
    _, bob = server.accounts.add_user("bob")
    with server.client() as api:
        setup(server, api)
        api.patch("/brains/home", json={"visibility": "workspace"})  # bob may read
        mine = answer(api, {"question": QUESTION})
        question_id = mine["message_id"] - 1
        base = f"/brains/home/conversations/{mine['conversation_id']}/messages"
        refused = api.post(f"{base}/{question_id}/save")
        assert refused.status_code == 400 and "save an answer" in refused.json()["message"]
        assert api.post(f"{base}/987654/save").status_code == 404
    with server.client(bob.secret) as other:
        theirs = other.post(f"{base}/{mine['message_id']}/save")
        assert theirs.status_code in (403, 404)  # a viewer writes nothing
        asked = other.post("/brains/home/answer", json={"question": "remember that bob was here"})
        assert asked.status_code == 200 and asked.json()["intent"] == "save"
        assert "nothing was saved" in asked.json()["answer"]
    with server.client() as api:
        assert api.get("/brains/home/graph/documents", params={"folder": "research"}).json() == []
        inbox = api.get("/brains/home/graph/documents", params={"folder": "inbox"}).json()
        assert inbox == []


def test_remember_that_saves_through_capture_instead_of_answering(
    server: LiveServer, loci: Loci
) -> None:
    with server.client() as api:
        setup(server, api)
        kept = answer(api, {"question": "remember that the bike lock code is 3141"})
        assert kept["intent"] == "save" and kept["citations"] == []
        assert kept["answer"].startswith("Saved to inbox/")
        first = answer(api, {"question": QUESTION})
        saved = answer(api, {"question": "save this", "conversation_id": first["conversation_id"]})
        assert saved["intent"] == "save" and "Saved to inbox/" in saved["answer"]
        inbox = api.get("/brains/home/graph/documents", params={"folder": "inbox"}).json()
    texts = [loci.graph.get(loci.brain("home"), d["id"]).content for d in inbox]
    assert any("3141" in t for t in texts)
    assert any("4471" in t for t in texts)  # "save this" kept the previous answer


def test_loci_ask_save_prints_the_page(loci: Loci, tmp_path: Any) -> None:
    brain = loci.brain("home")
    added = loci.library.add_note(brain, "The garage door code is 4471.")
    loci.library.wait_for(brain, [added.document.id])
    done = run_cli("ask", QUESTION, "-b", "home", "--save", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    assert "saved as research/answer-what-is-the-garage-door-code-" in done.stdout
    pages = loci.graph.list_documents(brain)
    assert [p.folder for p in pages] == ["research"]
