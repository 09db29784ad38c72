"""`POST /api/v1/brains/{brain}/ask` as Server-Sent Events, and conversations over HTTP."""

from __future__ import annotations

import pytest

from tests.support.asking import events
from tests.support.live_server import LiveServer

NONCE = "ZEPHYR-5519-ORCHID"
PLANTED = f"# Trip notes\n\nThe locker combination at the ferry terminal is {NONCE}.\n"

pytestmark = pytest.mark.both_backends


def test_planted_fact_end_to_end_through_the_api(server: LiveServer) -> None:
    with server.client() as api:
        api.post("/brains", json={"name": "trips"})
        upload = api.post("/brains/trips/files", files={"files": ("trip.md", PLANTED.encode())})
        doc = upload.json()["results"][0]["document"]
        server.wait_ready(api, "trips", doc["id"])

        stream = events(api, "trips", {"question": "What is the locker combination at the ferry?"})
        kinds = [k for k, _ in stream]
        assert kinds[0] == "status" and kinds[-1] == "done"
        assert kinds.index("sources") < kinds.index("token") < kinds.index("done")
        done = stream[-1][1]
        assert NONCE in done["answer"]
        assert [(c["document_id"], c["name"]) for c in done["citations"]] == [
            (doc["id"], "trip.md")
        ]
        assert "".join(d["text"] for k, d in stream if k == "token").strip() == done["answer"]

        conversation = done["conversation_id"]
        follow = events(
            api, "trips", {"question": "And where is it?", "conversation_id": conversation}
        )
        assert follow[-1][1]["conversation_id"] == conversation
        detail = api.get(f"/brains/trips/conversations/{conversation}").json()
        assert [m["role"] for m in detail["messages"]] == ["user", "assistant"] * 2
        assert detail["messages"][1]["citations"][0]["name"] == "trip.md"

        renamed = api.patch(f"/brains/trips/conversations/{conversation}", json={"title": "Ferry"})
        assert renamed.json()["title"] == "Ferry"
        assert [c["title"] for c in api.get("/brains/trips/conversations").json()] == ["Ferry"]
        assert api.delete(f"/brains/trips/conversations/{conversation}").status_code == 204
        assert api.get(f"/brains/trips/conversations/{conversation}").status_code == 404


def test_conversations_are_private_to_their_user(server: LiveServer) -> None:
    _, bob = server.accounts.add_user("bob")
    with server.client() as owner:
        owner.post("/brains", json={"name": "shared", "visibility": "workspace"})
        owner.post("/brains/shared/notes", json={"text": "The shed key is under the pot."})
        mine = events(owner, "shared", {"question": "where is the shed key?"})[-1][1]
    with server.client(bob.secret) as other:
        assert other.get("/brains/shared/conversations").json() == []
        path = f"/brains/shared/conversations/{mine['conversation_id']}"
        assert other.get(path).status_code == 404
        assert other.delete(path).status_code == 404
        refused = other.post(
            "/brains/shared/ask",
            json={"question": "and the gate?", "conversation_id": mine["conversation_id"]},
        )
        assert refused.status_code == 404 and refused.json()["error"] == "not_found"
        # a viewer may ask: asking reads, and the conversation is their own
        assert events(other, "shared", {"question": "where is the shed key?"})[-1][0] == "done"


def test_asking_a_brain_you_cannot_read_is_404(server: LiveServer) -> None:
    _, bob = server.accounts.add_user("bob")
    with server.client() as owner:
        owner.post("/brains", json={"name": "private"})
    with server.client(bob.secret) as other:
        response = other.post("/brains/private/ask", json={"question": "anything?"})
        assert response.status_code == 404
