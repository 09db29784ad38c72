"""What belongs to a whole account — its model and key, its password, its tokens, the people of
the workspace — takes a credential of the whole account: a token the person made that reaches
every brain, or a web session. A token limited to one brain, and any token an application got by
OAuth, are refused (403) and change nothing; a stored key never follows a changed address.
Over real HTTP, on SQLite and on PostgreSQL (docs/security.md, "Who may do what").
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from loci.embed.base import Embedder
from tests.support.asking import events
from tests.support.live_server import LiveServer
from tests.support.oauth_flow import App, Browser
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.services import make_service

pytestmark = [pytest.mark.attack, pytest.mark.both_backends]

KEY = "sk-owner-4b1d-never-leaves"


def _answers(body: dict[str, object]) -> Reply:
    if body.get("response_format"):  # a JSON step of the pipeline: route it simply
        return Reply(json.dumps({"intent": "simple_lookup"}))
    return Reply("It is under the pot [1].")


@pytest.fixture
def llms() -> Iterator[tuple[ScriptedLLM, ScriptedLLM]]:
    """The owner's own model, and an attacker's server that records what reaches it."""
    own, attacker = ScriptedLLM(responder=_answers).start(), ScriptedLLM(responder=_answers)
    attacker.start()
    yield own, attacker
    own.stop()
    attacker.stop()


@dataclass
class Account:
    server: LiveServer
    limited: str  # a write token the owner made, limited to brain "a"
    limited_id: int
    app_limited: str  # an application's write grant, limited to brain "a"
    app_whole: str  # an application's write grant over every brain

    def client(self, token: str) -> httpx.Client:
        return self.server.client(token)


@pytest.fixture
def account(tmp_path: Path, embedder: Embedder, database_url: str | None) -> Iterator[Account]:
    loci = make_service(
        tmp_path / "home", embedder, database_url, fetch_allowed_networks=["127.0.0.1/32"]
    )
    server = LiveServer(loci).start()
    try:
        with server.client() as owner:
            for name in ("a", "b"):
                assert owner.post("/brains", json={"name": name}).status_code == 201
            note = owner.post("/brains/b/notes", json={"text": "The shed key is under the pot."})
            server.wait_ready(owner, "b", note.json()["document"]["id"])
        user = server.accounts.user("owner")
        limited = server.accounts.issue_token(
            user,
            name="ci for secret-project-merger",
            brain_ids=[loci.store.get_brain("a").id],
        )
        browser = Browser(server, "owner")
        app = App(server)
        whole_url = app.authorize_url(resource=server.url)
        app_whole = app.connect(browser, url=whole_url, access="write")["access_token"]
        limited_url = app.authorize_url(resource=server.url)
        app_limited = app.connect(browser, url=limited_url, access="write", brains=["a"])
        browser.close()
        yield Account(
            server, limited.secret, limited.token.id, app_limited["access_token"], app_whole
        )
    finally:
        server.stop()
        loci.store.close()


def _narrow(account: Account) -> dict[str, str]:
    return {
        "a token limited to one brain": account.limited,
        "an application's grant for one brain": account.app_limited,
        "an application's grant for every brain": account.app_whole,
    }


def test_a_narrower_credential_cannot_point_the_owners_model_and_key_elsewhere(
    account: Account, llms: tuple[ScriptedLLM, ScriptedLLM]
) -> None:
    own, attacker = llms
    server = account.server
    with server.client() as owner:
        saved = owner.put(
            "/me/model", json={"base_url": own.base_url, "model": "mine", "api_key": KEY}
        )
        assert saved.status_code == 200, saved.text

    redirect = {"base_url": attacker.base_url, "model": "x", "keep_api_key": True}
    for what, token in _narrow(account).items():
        with account.client(token) as api:
            for method, body in (("PUT", redirect), ("DELETE", None)):
                changed = api.request(method, "/me/model", json=body)
                assert changed.status_code == 403, f"{what}: {method} {changed.status_code}"
            assert api.get("/me/model").status_code == 403, what  # nor read the settings

    with server.client() as owner:
        assert owner.get("/me/model").json()["base_url"] == own.base_url
        done = events(owner, "b", {"question": "Where is the shed key?"})[-1][1]
        assert done["model"] == "mine"
    assert own.requests and all(r["_authorization"] == f"Bearer {KEY}" for r in own.requests)
    assert attacker.requests == []


def test_a_saved_key_never_follows_a_changed_address(
    account: Account, llms: tuple[ScriptedLLM, ScriptedLLM]
) -> None:
    own, elsewhere = llms
    with account.server.client() as owner:
        owner.put("/me/model", json={"base_url": own.base_url, "model": "mine", "api_key": KEY})
        moved = owner.put(
            "/me/model",
            json={"base_url": elsewhere.base_url, "model": "mine", "keep_api_key": True},
        )
        assert moved.status_code == 400
        assert "never sent to another address" in moved.json()["message"]
        kept = owner.get("/me/model").json()
        assert kept["base_url"] == own.base_url and kept["has_api_key"] is True

        # The same address keeps the key; a new address is saved without one, or with its own.
        same = owner.put("/me/model", json={"base_url": own.base_url + "/", "model": "other"})
        assert same.status_code == 200 and same.json()["has_api_key"] is True
        keyless = {"base_url": elsewhere.base_url, "model": "x", "keep_api_key": False}
        assert owner.put("/me/model", json=keyless).json()["has_api_key"] is False
        events(owner, "b", {"question": "Where is the shed key?"})
    assert elsewhere.requests and all(r["_authorization"] is None for r in elsewhere.requests)


def test_an_application_cannot_mint_a_token_that_outlives_its_grant(account: Account) -> None:
    server = account.server
    with server.client() as owner:
        before = owner.get("/tokens").json()
    for what, token in _narrow(account).items():
        with account.client(token) as api:
            minted = api.post("/tokens", json={"name": "backdoor", "scope": "write"})
            assert minted.status_code == 403, f"{what}: {minted.status_code} {minted.text}"
    with server.client() as owner:
        assert [t["id"] for t in owner.get("/tokens").json()] == [t["id"] for t in before]
        made = owner.post("/tokens", json={"name": "laptop", "brains": ["a"]})
        assert made.status_code == 201  # the whole account still makes tokens


def test_a_narrower_credential_sees_and_revokes_only_itself(account: Account) -> None:
    server = account.server
    with server.client() as owner:
        everyone = owner.get("/tokens").json()
        sign_in = next(t for t in everyone if t["name"] == "sign-in")
    assert any(t["name"] == "ci for secret-project-merger" for t in everyone)

    with account.client(account.app_limited) as api:
        listed = api.get("/tokens").json()
        assert len(listed) == 1 and "secret-project" not in json.dumps(listed)
        assert api.delete(f"/tokens/{sign_in['id']}").status_code == 403
    with account.client(account.limited) as api:
        assert [t["id"] for t in api.get("/tokens").json()] == [account.limited_id]
        assert api.delete(f"/tokens/{sign_in['id']}").status_code == 403
    with server.client() as owner:
        assert owner.get("/me").status_code == 200  # the sign-in token still works

    with account.client(account.limited) as api:
        assert api.delete(f"/tokens/{account.limited_id}").status_code == 204
        assert api.get("/me").status_code == 401  # it revoked itself


def test_an_application_token_opens_no_web_session_and_so_approves_nothing(
    account: Account,
) -> None:
    server = account.server
    with httpx.Client(base_url=server.url) as browser:
        opened = browser.post("/api/v1/session", json={"token": account.app_whole})
        assert opened.status_code == 403, opened.text
        assert "loci_session" not in browser.cookies
        # A second application asks; nothing signed in can approve it.
        second = App(server, name="Second")
        url = second.authorize_url(resource=server.url)
        body = {**dict(httpx.URL(url).params), "approve": True, "access": "write"}
        approved = browser.post("/api/v1/oauth/consent", json=body)
        assert approved.status_code == 401


def test_account_settings_and_people_need_the_whole_account(account: Account) -> None:
    """The owner is an admin: through a narrower credential they may neither set a password
    (which would then open a full session) nor manage people."""
    for what, token in _narrow(account).items():
        with account.client(token) as api:
            attempts = {
                "password": api.put("/me/password", json={"new_password": "a long passphrase 42"}),
                "user": api.post("/users", json={"name": "mallory", "is_admin": True}),
                "invite": api.post("/invites", json={"name": "dave"}),
                "people": api.get("/people"),
            }
            assert {k: r.status_code for k, r in attempts.items()} == dict.fromkeys(
                attempts, 403
            ), what
    with account.server.client() as owner:
        assert "mallory" not in [u["name"] for u in owner.get("/users").json()]
