"""Bring your own key: a user's own chat model, its key sealed at rest and never shown."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.app import build_chat, service_settings
from loci.auth.records import UserModel
from loci.config import Settings
from loci.embed.base import Embedder
from loci.service import Loci
from loci.store.blobs import BlobStore
from tests.support.asking import events
from tests.support.live_server import LiveServer
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.services import make_service, open_store

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


def serve_with_server_model(tmp_path: Path, embedder: Embedder, llm: ScriptedLLM) -> LiveServer:
    """The administrator's own model (LOCI_LLM_*) on loopback, and no network allowed to fetches."""
    settings = Settings(
        home=tmp_path / "home",
        llm_base_url=llm.base_url,
        llm_model="servers-own",
        job_retry_base_s=0.01,
    )
    settings.home.mkdir(parents=True)
    loci = Loci(
        store=open_store(settings.home, None),
        blobs=BlobStore(settings.blob_dir),
        embedder=lambda: embedder,
        settings=service_settings(settings),
        chat=lambda: build_chat(settings),
    )
    return LiveServer(loci).start()


def test_an_endpoint_on_a_private_address_is_refused_when_saved(
    tmp_path: Path, embedder: Embedder, llm: ScriptedLLM
) -> None:
    server = serve(tmp_path, embedder)  # no network allowed: 127.0.0.1 is off limits
    port = llm.base_url.rsplit(":", 1)[1].split("/", 1)[0]
    refused = {
        llm.base_url: "127.0.0.1: loopback address",
        f"http://localhost:{port}/v1": "loopback address",
        f"http://[::1]:{port}/v1": "::1: loopback address",
        f"http://2130706433:{port}/v1": "(127.0.0.1): loopback address",
        f"http://[::ffff:127.0.0.1]:{port}/v1": "loopback (inside IPv4-mapped IPv6)",
        f"http://[fe80::1%25eth0]:{port}/v1": "zone id (eth0)",
        "http://10.0.0.5/v1": "10.0.0.5: private address",
        "http://169.254.169.254/latest": "169.254.169.254: link-local address",
    }
    try:
        with server.client() as owner:
            for base_url, reason in refused.items():
                body = {"base_url": base_url, "model": "m", "api_key": KEY}
                answer = owner.put("/me/model", json=body)
                assert answer.status_code == 400, base_url
                error = answer.json()
                assert error["error"] == "blocked_address"
                assert error["message"].startswith("base_url: refusing")
                assert (
                    reason in error["message"]
                    and "LOCI_FETCH_ALLOWED_NETWORKS" in (error["message"])
                )
                assert KEY not in answer.text
                assert owner.get("/me/model").status_code == 404  # nothing was stored
        assert llm.requests == []  # nor was the endpoint contacted
    finally:
        server.stop()


def test_the_servers_own_model_may_be_on_loopback_where_a_users_may_not(
    tmp_path: Path, embedder: Embedder, llm: ScriptedLLM
) -> None:
    server = serve_with_server_model(tmp_path, embedder, llm)
    try:
        with server.client() as owner:
            owner.post("/brains", json={"name": "home"})
            note = owner.post("/brains/home/notes", json={"text": "The shed key is under the pot."})
            server.wait_ready(owner, "home", note.json()["document"]["id"])
            mine = owner.put("/me/model", json={"base_url": llm.base_url, "model": "mine"})
            assert mine.status_code == 400 and "base_url" in mine.json()["message"]
            done = events(owner, "home", {"question": "Where is the shed key?"})[-1][1]
            assert done["model"] == "servers-own" and "pot" in done["answer"]
            assert llm.requests and {r["model"] for r in llm.requests} == {"servers-own"}
    finally:
        server.stop()


def test_a_model_stored_before_the_check_is_still_refused_when_asked(
    tmp_path: Path, embedder: Embedder, llm: ScriptedLLM
) -> None:
    """An endpoint saved by an older release (or whose name now resolves to a private address)
    is caught when connecting: the answer comes without it and nothing reaches it."""
    server = serve(tmp_path, embedder)
    try:
        owner_user = server.accounts.user("owner")
        sealed = server.user_models.box.seal(KEY)
        server.loci.store.accounts.set_user_model(
            owner_user.id, UserModel(llm.base_url, "m", (), sealed)
        )
        with server.client() as owner:
            owner.post("/brains", json={"name": "home"})
            note = owner.post("/brains/home/notes", json={"text": "The shed key is under the pot."})
            server.wait_ready(owner, "home", note.json()["document"]["id"])
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
