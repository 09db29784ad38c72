"""Ask over HTTP with filters and across brains: `/ask` (a stream) and `/answer` (JSON)."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from loci.service import Loci
from loci.store.sqlite import SqliteStore
from tests.support.asking import events
from tests.support.live_server import LiveServer

QUESTION = "What is the garage door code?"


def add(api: httpx.Client, brain: str, server: LiveServer, name: str, text: str) -> int:
    upload = api.post(f"/brains/{brain}/files", files={"files": (name, text.encode())})
    doc_id = int(upload.json()["results"][0]["document"]["id"])
    server.wait_ready(api, brain, doc_id)
    return doc_id


def note(api: httpx.Client, brain: str, server: LiveServer, text: str) -> int:
    created = api.post(f"/brains/{brain}/notes", json={"text": text})
    assert created.status_code in (200, 201), created.text
    doc_id = int(created.json()["document"]["id"])
    server.wait_ready(api, brain, doc_id)
    return doc_id


def answer(api: httpx.Client, brain: str, body: dict[str, Any]) -> dict[str, Any]:
    response = api.post(f"/brains/{brain}/answer", json=body)
    assert response.status_code == 200, response.text
    result: dict[str, Any] = response.json()
    return result


def cited(result: dict[str, Any]) -> set[tuple[str, int]]:
    return {(c["brain"], c["document_id"]) for c in result["citations"]}


@pytest.fixture
def garage(server: LiveServer, loci: Loci) -> dict[str, int]:
    with server.client() as api:
        api.post("/brains", json={"name": "home"})
        ids = {
            "note": note(api, "home", server, "The garage door code is 4471, set in spring."),
            "file": add(api, "home", server, "garage.md",
                        "# Garage\n\nThe garage door code was 9902 before the new opener.\n"),
            "old": add(api, "home", server, "lease.md",
                       "# Lease\n\nThe garage door code in the old flat was 1234.\n"),
        }  # fmt: skip
    assert isinstance(loci.store, SqliteStore)
    loci.store.db.execute(
        "UPDATE documents SET created_at = '2021-04-02T09:00:00Z' WHERE id = ?", (ids["old"],)
    )
    return ids


def test_a_note_only_ask_cites_only_notes(server: LiveServer, garage: dict[str, int]) -> None:
    with server.client() as api:
        everything = answer(api, "home", {"question": QUESTION})
        assert {("home", garage["note"]), ("home", garage["file"])} <= cited(everything)
        notes = answer(api, "home", {"question": QUESTION, "filters": {"kinds": ["note"]}})
    assert cited(notes) == {("home", garage["note"])} and "4471" in notes["answer"]
    assert notes["scope"]["filters"]["kinds"] == ["note"]


def test_a_dated_ask_cites_only_documents_in_range(
    server: LiveServer, garage: dict[str, int]
) -> None:
    dated = {"created_after": "2021-01-01", "created_before": "2022-01-01"}
    with server.client() as api:
        result = answer(api, "home", {"question": QUESTION, "filters": dated})
        assert cited(result) == {("home", garage["old"])} and "1234" in result["answer"]
        recent = answer(api, "home", {"question": "What garage door code did I note recently?"})
        assert recent["scope"]["from_question"] == "recently"
        assert ("home", garage["old"]) not in cited(recent) and cited(recent)
        before = {"created_after": "2019-01-01", "created_before": "2020-01-01"}
        empty = answer(api, "home", {"question": QUESTION, "filters": before})
    assert empty["citations"] == [] and empty["decision"] == "no_relevant_sources"
    assert "I found nothing in this brain" in empty["answer"]


def test_the_stream_carries_the_scope_and_the_filtered_sources(
    server: LiveServer, garage: dict[str, int]
) -> None:
    body = {"question": QUESTION, "filters": {"kinds": ["file"], "name": "garage.md"}}
    with server.client() as api:
        received = events(api, "home", body)
    scope = next(d for k, d in received if k == "scope")
    assert scope["filters"]["name"] == "garage.md" and scope["brains"] == ["home"]
    sources = next(d["sources"] for k, d in received if k == "sources")
    assert {s["document_id"] for s in sources} == {garage["file"]}
    assert received[-1][0] == "done"


def test_across_brains_cites_both_and_never_an_unreadable_one(server: LiveServer) -> None:
    _, bob = server.accounts.add_user("bob")
    with server.client() as owner:
        owner.post("/brains", json={"name": "home"})
        owner.post("/brains", json={"name": "family", "visibility": "workspace"})
        owner.post("/brains", json={"name": "vault"})  # restricted: only the owner
        garage = add(owner, "home", server, "garage.md", "# Garage\n\nThe garage code is 4471.\n")
        shed = add(owner, "family", server, "shed.md", "# Shed\n\nThe shed padlock code is 8080.\n")
        add(owner, "vault", server, "safe.md", "# Safe\n\nThe shed padlock spare code is 5555.\n")
        both = answer(owner, "home", {
            "question": "What are the garage code and the shed padlock code?",
            "brains": ["family"],
        })  # fmt: skip
        assert {("home", garage), ("family", shed)} <= cited(both)
        assert both["scope"]["brains"] == ["home", "family"]
    with server.client(bob.secret) as other:
        asked = {"question": "What is the shed padlock code?", "brains": ["vault"]}
        refused = other.post("/brains/family/answer", json=asked)
        assert refused.status_code == 404 and "vault" in refused.json()["message"]
        streamed = other.post("/brains/family/ask", json=asked)
        assert streamed.status_code == 404
        # The same 404 for a brain that does not exist: nothing tells them apart.
        missing = other.post("/brains/family/answer", json={**asked, "brains": ["nowhere"]})
        assert missing.status_code == 404
        own = answer(other, "family", {"question": "What is the shed padlock code?"})
        assert {b for b, _ in cited(own)} == {"family"} and "5555" not in own["answer"]


@pytest.mark.parametrize(
    ("body", "status", "says"),
    [
        ({"filters": {"kinds": ["memo"]}}, 422, "kinds"),
        ({"filters": {"created_after": "last tuesday"}}, 422, "created_after"),
        ({"filters": {"created_after": 1700000000}}, 422, "created_after"),
        ({"filters": {"created_after": "2025-02-01", "created_before": "2025-01-01"}}, 400,
         "must come before"),
        ({"filters": {"tags": [" "]}}, 400, "a tag is empty"),
        ({"brains": ["../etc"]}, 422, "brains"),
        ({"brains": [f"b{i}" for i in range(21)]}, 422, "brains"),
    ],
)  # fmt: skip
def test_bad_ask_input_is_a_clear_4xx(
    server: LiveServer, body: dict[str, Any], status: int, says: str
) -> None:
    with server.client() as api:
        api.post("/brains", json={"name": "home"})
        for route in ("answer", "ask"):
            response = api.post(f"/brains/home/{route}", json={"question": QUESTION, **body})
            assert response.status_code == status, response.text
            assert says in response.text
        assert api.get("/brains/home/conversations").json() == []  # nothing was kept
