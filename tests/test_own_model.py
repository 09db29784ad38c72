"""Bring your own key: a user's own chat model, its key sealed at rest and never shown."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from tests.conftest import make_service
from tests.live_server import LiveServer
from tests.scripted_llm import Reply, ScriptedLLM
from tests.test_ask_api import events

KEY = "sk-user-7f3a9c-very-secret"


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    def reply(body: dict[str, object]) -> Reply:
        if body.get("response_format"):  # a JSON step: route it simply
            return Reply(json.dumps({"intent": "simple_lookup"}))
        return Reply("Under the pot [1].")

    server = ScriptedLLM(responder=reply).start()
    yield server
    server.stop()


def serve(tmp_path: Path, embedder: Embedder, **settings: object) -> LiveServer:
    return LiveServer(make_service(tmp_path / "home", embedder, None, **settings)).start()


def test_a_users_own_model_answers_their_questions_with_their_key(
    tmp_path: Path, embedder: Embedder, llm: ScriptedLLM
) -> None:
    server = serve(tmp_path, embedder, fetch_allowed_networks=["127.0.0.1/32"])
    try:
        _, bob = server.accounts.add_user("bob")
        with server.client() as owner:
            owner.post("/brains", json={"name": "home", "visibility": "workspace"})
            note = owner.post("/brains/home/notes", json={"text": "The shed key is under the pot."})
            server.wait_ready(owner, "home", note.json()["document"]["id"])
            saved = owner.put(
                "/me/model",
                json={"base_url": llm.base_url, "model": "mine", "api_key": KEY,
                      "fallback_models": ["mine-small"]},
            )  # fmt: skip
            assert saved.status_code == 200 and KEY not in saved.text
            assert saved.json()["has_api_key"] is True
            assert saved.json()["fallback_models"] == ["mine-small"]
            assert KEY not in owner.get("/me/model").text

            done = events(owner, "home", {"question": "Where is the shed key?"})[-1][1]
            assert done["model"] == "mine" and "pot" in done["answer"]
            assert llm.requests and all(
                r["_authorization"] == f"Bearer {KEY}" for r in llm.requests
            )

            # changing the model without resending the key keeps it
            owner.put("/me/model", json={"base_url": llm.base_url, "model": "other"})
            assert owner.get("/me/model").json()["has_api_key"] is True

        with server.client(bob.secret) as other:  # someone else's questions use the server's
            assert other.get("/me/model").status_code == 404
            asked = len(llm.requests)
            assert (
                events(other, "home", {"question": "Where is the shed key?"})[-1][1]["model"]
                is None
            )
            assert len(llm.requests) == asked

        database = (tmp_path / "home" / "loci.db").read_bytes()
        wal = tmp_path / "home" / "loci.db-wal"
        assert KEY.encode() not in database + (wal.read_bytes() if wal.exists() else b"")
    finally:
        server.stop()


def test_an_endpoint_on_a_private_address_is_refused_and_the_answer_still_comes(
    tmp_path: Path, embedder: Embedder, llm: ScriptedLLM
) -> None:
    server = serve(tmp_path, embedder)  # no network allowed: 127.0.0.1 is off limits
    try:
        with server.client() as owner:
            owner.post("/brains", json={"name": "home"})
            note = owner.post("/brains/home/notes", json={"text": "The shed key is under the pot."})
            server.wait_ready(owner, "home", note.json()["document"]["id"])
            owner.put("/me/model", json={"base_url": llm.base_url, "model": "m", "api_key": KEY})
            stream = events(owner, "home", {"question": "Where is the shed key?"})
            done = stream[-1][1]
            assert "pot" in done["answer"] and {"route", "answer"} <= set(done["fallbacks"])
            assert llm.requests == []  # the server never connected
            assert KEY not in json.dumps([d for _, d in stream])
            assert owner.delete("/me/model").status_code == 204
            assert owner.get("/me/model").status_code == 404
    finally:
        server.stop()


def test_a_read_only_token_cannot_set_a_model(server: LiveServer) -> None:
    user = server.accounts.user("owner")
    reader = server.accounts.issue_token(user, name="r", scope="read")
    with server.client(reader.secret) as api:
        body = {"base_url": "https://models.example/v1", "model": "m"}
        assert api.put("/me/model", json=body).status_code == 403
    with server.client() as api:
        bad = api.put("/me/model", json={"base_url": "ftp://x", "model": "m"})
        assert bad.status_code == 422 and bad.json()["error"] == "invalid_input"
        assert api.get("/me/model").status_code == 404  # nothing was stored
