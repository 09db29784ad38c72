"""Loci as an OAuth 2.1 authorization server (the MCP authorization specification), over real
HTTP on both backends: discovery, registration, consent, code with PKCE, refresh with rotation,
revocation — and every way a request can be wrong, each refused with a clear error.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from authlib.oauth2.rfc8414 import AuthorizationServerMetadata

from loci.auth.oauth.registration_limits import RegistrationLimits
from loci.embed.base import Embedder
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.mcp_http import ACCEPT, INITIALIZE
from tests.support.oauth_flow import App, Browser, query_of
from tests.support.services import BACKENDS, served_world

pytestmark = pytest.mark.attack


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, request: pytest.FixtureRequest
) -> Iterator[LiveServer]:
    with served_world(tmp_path_factory, embedder, request, "oauth") as (loci, live):
        # Every test here registers from 127.0.0.1 within a minute or two; the limits on
        # registering have their own tests (test_oauth_registration.py).
        live.app.state.oauth_server.registration_limits = RegistrationLimits(10_000, 10_000)
        user, _ = live.accounts.add_user("alice")
        loci.store.create_brain("garden", "restricted", user.id)
        loci.store.create_brain("taxes", "restricted", user.id)
        yield live


@pytest.fixture(scope="module")
def alice(server: LiveServer) -> Iterator[Browser]:
    browser = Browser(server, "alice")
    yield browser
    browser.close()


def mcp(server: LiveServer, token: str) -> httpx.Response:
    return httpx.post(
        server.url + "/mcp",
        json=INITIALIZE,
        headers={**ACCEPT, "Authorization": f"Bearer {token}"},
    )


def api(server: LiveServer, token: str, path: str = "/brains") -> httpx.Response:
    return httpx.get(server.url + "/api/v1" + path, headers={"Authorization": f"Bearer {token}"})


# discovery -----------------------------------------------------------------------------------
def test_mcp_without_a_token_names_its_resource_metadata(server: LiveServer) -> None:
    refused = httpx.post(server.url + "/mcp", json=INITIALIZE, headers=ACCEPT)
    assert refused.status_code == 401
    metadata_url = server.url + "/.well-known/oauth-protected-resource/mcp"
    assert refused.headers["WWW-Authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    wrong = mcp(server, "loci_not-a-token")
    assert 'error="invalid_token"' in wrong.headers["WWW-Authenticate"]

    metadata = httpx.get(metadata_url).json()
    assert metadata["resource"] == server.url + "/mcp"
    assert metadata["authorization_servers"] == [server.url]
    assert set(metadata["scopes_supported"]) == {"read", "write"}
    issuer = metadata["authorization_servers"][0]
    found = httpx.get(issuer + "/.well-known/oauth-authorization-server").json()
    AuthorizationServerMetadata(found).validate()  # RFC 8414, as Authlib reads it
    assert found["issuer"] == server.url
    assert found["code_challenge_methods_supported"] == ["S256"]
    assert found["registration_endpoint"] == server.url + "/oauth/register"


def test_the_api_without_a_token_names_the_servers_metadata(server: LiveServer) -> None:
    refused = httpx.get(server.url + "/api/v1/brains")
    assert refused.status_code == 401
    metadata_url = server.url + "/.well-known/oauth-protected-resource"
    assert refused.headers["WWW-Authenticate"] == f'Bearer resource_metadata="{metadata_url}"'
    assert httpx.get(metadata_url).json()["resource"] == server.url


# the flow --------------------------------------------------------------------------------------
def test_an_approved_application_holds_an_ordinary_loci_token(
    server: LiveServer, alice: Browser
) -> None:
    app = App(server, name="Kitchen assistant")
    url = app.authorize_url()
    asked = alice.consent(url).json()
    assert asked["client_name"] == "Kitchen assistant"
    assert asked["redirect_host"] == "127.0.0.1:8976"
    assert asked["scopes"] == ["read", "write"] and asked["user"] == "alice"
    assert {b["name"] for b in asked["brains"]} >= {"garden", "taxes"}

    answer = alice.approve(url, access="read", brains=["garden"])
    assert answer["state"] == query_of(url)["state"]
    tokens = app.exchange(answer["code"]).json()
    assert tokens["token_type"] == "Bearer" and tokens["scope"] == "read"
    assert tokens["access_token"].startswith("loci_") and tokens["expires_in"] == 3600

    assert mcp(server, tokens["access_token"]).status_code == 200
    listed = alice.http.get("/api/v1/tokens").json()
    mine = [t for t in listed if t["oauth_client_id"] == app.client_id]
    assert len(mine) == 1
    assert mine[0]["name"] == "Kitchen assistant" and mine[0]["scope"] == "read"
    garden = server.loci.store.get_brain("garden")
    assert mine[0]["brain_ids"] == [garden.id]
    assert mine[0]["resource"] == server.url + "/mcp"


def test_a_token_for_the_whole_server_reads_only_the_brains_chosen(
    server: LiveServer, alice: Browser
) -> None:
    app = App(server)
    answer = alice.approve(app.authorize_url(resource=server.url), access="read", brains=["garden"])
    tokens = app.exchange(answer["code"]).json()
    brains = api(server, tokens["access_token"]).json()
    assert [b["name"] for b in brains] == ["garden"]
    wrote = httpx.post(
        server.url + "/api/v1/brains/garden/notes",
        json={"text": "planted by a read token"},
        headers={"Authorization": f"Bearer {tokens['access_token']}"},
    )
    assert wrote.status_code == 403


def test_refresh_rotates_and_a_spent_refresh_token_ends_the_grant(
    server: LiveServer, alice: Browser
) -> None:
    app = App(server, auth_method="client_secret_post")
    assert app.client_secret
    first = app.connect(alice)
    second = app.refresh(first["refresh_token"])
    assert second.status_code == 200, second.text
    renewed = second.json()
    assert renewed["refresh_token"] != first["refresh_token"]
    assert renewed["access_token"] != first["access_token"]
    assert mcp(server, first["access_token"]).status_code == 401  # the old secret is gone
    assert mcp(server, renewed["access_token"]).status_code == 200
    listed = [
        t for t in alice.http.get("/api/v1/tokens").json() if t["oauth_client_id"] == app.client_id
    ]
    assert len(listed) == 1  # one connection, however often it refreshes

    replayed = app.refresh(first["refresh_token"])  # a copy of a spent one: stolen
    assert replayed.status_code == 400 and replayed.json()["error"] == "invalid_grant"
    assert mcp(server, renewed["access_token"]).status_code == 401
    assert app.refresh(renewed["refresh_token"]).json()["error"] == "invalid_grant"


def test_revoking_either_token_ends_the_grant(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    tokens = app.connect(alice)
    assert app.revoke(tokens["refresh_token"]).status_code == 200
    assert mcp(server, tokens["access_token"]).status_code == 401
    again = app.connect(alice)
    assert app.revoke(again["access_token"]).status_code == 200
    assert app.refresh(again["refresh_token"]).json()["error"] == "invalid_grant"


def test_revoking_in_loci_ends_the_grant(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    tokens = app.connect(alice)
    listed = alice.http.get("/api/v1/tokens").json()
    token_id = next(t["id"] for t in listed if t["oauth_client_id"] == app.client_id)
    assert alice.http.delete(f"/api/v1/tokens/{token_id}").status_code == 204
    assert mcp(server, tokens["access_token"]).status_code == 401
    assert app.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"


def test_denying_tells_the_application(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    url = app.authorize_url()
    answered = alice.answer(url, approve=False).json()
    denied = query_of(answered["redirect"])
    assert answered["redirect"].startswith(app.redirect_uri)
    assert denied["error"] == "access_denied" and denied["state"] == query_of(url)["state"]


# hostile requests ----------------------------------------------------------------------------
def _refused_at_authorize(alice: Browser, url: str) -> dict[str, str]:
    """A faulty request that goes back to the application: the error it is sent."""
    page = alice.http.get(url)
    assert page.status_code == 302
    return query_of(page.headers["location"])


def test_an_unregistered_redirect_uri_is_never_redirected_to(
    server: LiveServer, alice: Browser
) -> None:
    app = App(server)
    url = app.authorize_url(redirect_uri="https://attacker.example/steal")
    page = alice.http.get(url)
    assert page.status_code == 200 and "location" not in page.headers  # the page, no redirect
    asked = alice.http.get("/api/v1/oauth/consent", params=query_of(url))
    assert asked.status_code == 400
    assert "https://attacker.example/steal" in asked.json()["message"]
    assert alice.answer(url).status_code == 400
    prefix = app.authorize_url(redirect_uri=app.redirect_uri + "/more")  # exact match only
    assert alice.http.get("/api/v1/oauth/consent", params=query_of(prefix)).status_code == 400


def test_an_unknown_client_is_refused(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    url = app.authorize_url(client_id="locic_nobody")
    asked = alice.http.get("/api/v1/oauth/consent", params=query_of(url))
    assert asked.status_code == 400 and "client" in asked.json()["message"]


def test_pkce_is_required_and_only_s256(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    missing = _refused_at_authorize(
        alice, app.authorize_url(code_challenge=None, code_challenge_method=None)
    )
    assert missing["error"] == "invalid_request" and "PKCE" in missing["error_description"]
    plain = _refused_at_authorize(alice, app.authorize_url(code_challenge_method="plain"))
    assert plain["error"] == "invalid_request" and "S256" in plain["error_description"]
    # and the verifier must match the challenge
    answer = alice.approve(app.authorize_url())
    wrong = app.exchange(answer["code"], code_verifier="x" * 64)
    assert wrong.status_code == 400 and wrong.json()["error"] == "invalid_grant"
    absent = app.exchange(alice.approve(app.authorize_url())["code"], code_verifier=None)  # type: ignore[arg-type]
    assert absent.json()["error"] == "invalid_request"


def test_state_is_required(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    refused = _refused_at_authorize(alice, app.authorize_url(state=None))
    assert refused["error"] == "invalid_request" and "state" in refused["error_description"]


def test_a_code_works_once_and_a_second_use_revokes_its_token(
    server: LiveServer, alice: Browser
) -> None:
    app = App(server)
    answer = alice.approve(app.authorize_url())
    first = app.exchange(answer["code"])
    assert first.status_code == 200
    again = app.exchange(answer["code"])
    assert again.status_code == 400 and again.json()["error"] == "invalid_grant"
    assert mcp(server, first.json()["access_token"]).status_code == 401


def test_a_code_is_bound_to_its_client_and_redirect_uri(server: LiveServer, alice: Browser) -> None:
    app, other = App(server), App(server)
    answer = alice.approve(app.authorize_url())
    other.verifier = app.verifier
    assert other.exchange(answer["code"]).json()["error"] == "invalid_grant"
    answer = alice.approve(app.authorize_url())
    moved = app.exchange(answer["code"], redirect_uri="http://127.0.0.1:8976/elsewhere")
    assert moved.json()["error"] == "invalid_grant"


def test_a_code_expires(
    server: LiveServer, alice: Browser, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = App(server)
    answer = alice.approve(app.authorize_url())
    oauth_server = server.app.state.oauth_server
    clock = oauth_server.clock
    monkeypatch.setattr(oauth_server, "clock", lambda: clock() + 121)
    assert app.exchange(answer["code"]).json()["error"] == "invalid_grant"


def test_a_resource_of_another_server_is_refused(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    refused = _refused_at_authorize(
        alice, app.authorize_url(resource="https://elsewhere.example/mcp")
    )
    assert refused["error"] == "invalid_target"
    answer = alice.approve(app.authorize_url())
    swapped = app.exchange(answer["code"], resource=server.url)
    assert swapped.json()["error"] == "invalid_target"


def test_a_token_for_mcp_is_refused_by_the_api(server: LiveServer, alice: Browser) -> None:
    tokens = App(server).connect(alice)  # resource: /mcp
    refused = api(server, tokens["access_token"])
    assert refused.status_code == 401 and "issued for" in refused.json()["message"]
    session = httpx.post(server.url + "/api/v1/session", json={"token": tokens["access_token"]})
    assert session.status_code == 401


def test_only_a_signed_in_person_can_approve(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    url = app.authorize_url()
    _, token = server.accounts.add_user("mallory-agent")
    body = {**query_of(url), "approve": True, "access": "write"}
    by_token = httpx.post(
        server.url + "/api/v1/oauth/consent",
        json=body,
        headers={"Authorization": f"Bearer {token.secret}"},
    )
    assert by_token.status_code == 403
    no_csrf = httpx.post(
        server.url + "/api/v1/oauth/consent", json=body, cookies=alice.http.cookies
    )
    assert no_csrf.status_code in (401, 403)


def test_a_read_only_request_cannot_be_granted_write(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    url = app.authorize_url(scope="read")
    assert alice.consent(url).json()["scopes"] == ["read"]
    assert alice.answer(url, access="write").status_code == 400


def test_a_brain_the_person_cannot_read_cannot_be_granted(
    server: LiveServer, alice: Browser
) -> None:
    bob, _ = server.accounts.add_user("bob-oauth")
    server.loci.store.create_brain("bobs-secrets", "restricted", bob.id)
    app = App(server)
    answered = alice.answer(app.authorize_url(), brains=["bobs-secrets"])
    assert answered.status_code == 404


def test_registration_refuses_unsafe_redirect_uris(server: LiveServer) -> None:
    for uri in ("http://example.org/cb", "https://example.org/cb#frag", "javascript:alert(1)"):
        registered = httpx.post(
            server.url + "/oauth/register",
            json={"client_name": "x", "redirect_uris": [uri], "token_endpoint_auth_method": "none"},
        )
        assert registered.status_code == 400, uri
        assert registered.json()["error"] in ("invalid_redirect_uri", "invalid_client_metadata")
    missing = httpx.post(server.url + "/oauth/register", json={"client_name": "x"})
    assert missing.status_code == 400


def test_disabling_a_person_stops_their_applications(server: LiveServer) -> None:
    user, _ = server.accounts.add_user("carol-oauth")
    browser = Browser(server, "carol-oauth")
    app = App(server)
    tokens = app.connect(browser)
    from loci.auth.people import People

    People(server.accounts).update("carol-oauth", by=None, disabled=True)
    assert mcp(server, tokens["access_token"]).status_code == 401
    assert app.refresh(tokens["refresh_token"]).json()["error"] == "invalid_grant"
    browser.close()


def test_the_cli_lists_and_revokes_an_applications_token(
    server: LiveServer, alice: Browser
) -> None:
    app = App(server, name="Pantry bot")
    tokens = app.connect(alice)
    store: Any = server.loci.store
    env = {"LOCI_DATABASE_URL": store.db.url} if hasattr(store.db, "url") else {}
    home = server._home()
    listed = run_cli("tokens", "list", "--user", "alice", home=home, env=env)
    assert listed.returncode == 0 and "Pantry bot" in listed.stdout and "OAuth app" in listed.stdout
    as_json = json.loads(
        run_cli("tokens", "list", "--user", "alice", "--json", home=home, env=env).stdout
    )
    mine = next(t for t in as_json if t["client_id"] == app.client_id)
    revoked = run_cli("tokens", "revoke", str(mine["id"]), "--user", "alice", home=home, env=env)
    assert revoked.returncode == 0, revoked.stderr
    assert mcp(server, tokens["access_token"]).status_code == 401


def test_oauth_over_plain_http_off_loopback_is_refused(server: LiveServer, alice: Browser) -> None:
    """Codes and tokens must not cross a network in the clear: a server reached over http at a
    non-loopback name (no TLS, no LOCI_PUBLIC_URL) does no OAuth, and says how to fix it."""
    app = App(server)
    lan = {"Host": "nas.local:8765"}
    asked = alice.http.get(
        "/api/v1/oauth/consent", params=query_of(app.authorize_url()), headers=lan
    )
    assert asked.status_code == 400 and "LOCI_PUBLIC_URL" in asked.json()["message"]
    token = httpx.post(
        server.url + "/oauth/token",
        data={"grant_type": "authorization_code", "code": "x", "client_id": app.client_id},
        headers=lan,
    )
    assert token.status_code == 400 and token.json()["error"] == "insecure_transport"


def test_characters_oauth_cannot_echo_are_a_clear_400(server: LiveServer, alice: Browser) -> None:
    app = App(server)
    odd = alice.http.get(
        "/api/v1/oauth/consent", params=query_of(app.authorize_url(response_type="còde"))
    )
    assert odd.status_code == 400 and "characters" in odd.json()["message"]
    token = app.post("/oauth/token", {"grant_type": "àuthorization_code"})
    assert token.status_code == 400 and token.json()["error"] in (
        "invalid_request",
        "unsupported_grant_type",
    )


JUNK_FORMS: list[dict[str, str]] = [
    {},
    {"grant_type": "password", "username": "alice", "password": "x"},
    {"grant_type": "client_credentials"},
    {"grant_type": "authorization_code"},
    {"grant_type": "authorization_code", "code": "é", "client_id": "é", "code_verifier": "é"},
    {"grant_type": "refresh_token", "client_id": "locic_nobody"},
    {"grant_type": "refresh_token", "refresh_token": "\u0000", "client_id": "\u0000"},
    {"grant_type": "authorization_code", "code": "x" * 5000, "client_id": "y" * 5000},
]
JUNK_JSON: list[Any] = [
    [],
    "x",
    None,
    {"redirect_uris": "https://a.example/cb"},
    {"redirect_uris": [1, 2]},
    {"redirect_uris": ["https://a.example/cb"], "grant_types": "authorization_code"},
    {"redirect_uris": ["https://a.example/cb"], "token_endpoint_auth_method": "private_key_jwt"},
    {"redirect_uris": ["https://a.example/cb"], "client_name": "é" * 500},
    {"redirect_uris": ["https://a.example/cb"] * 50},
    {"redirect_uris": ["https://a.example/cb"], "scope": "admin root"},
    {"redirect_uris": ["https://a.example/cb"], "client_name": ["not", "text"]},
    {"redirect_uris": ["https://a.example/cb"], "client_name": "nul\u0000"},
]


def test_junk_at_the_protocol_endpoints_is_refused_not_a_500(server: LiveServer) -> None:
    for form in JUNK_FORMS:
        for path in ("/oauth/token", "/oauth/revoke"):
            got = httpx.post(server.url + path, data=form)
            assert got.status_code in (400, 401), (path, form, got.status_code, got.text)
            assert "error" in got.json()
    for body in JUNK_JSON:
        got = httpx.post(server.url + "/oauth/register", json=body)
        assert got.status_code == 400, (body, got.status_code, got.text)
    for raw in (b"{", b"\xff\xfe", b"[" * 100_000):
        got = httpx.post(server.url + "/oauth/register", content=raw)
        assert got.status_code == 400, (raw[:10], got.status_code, got.text)
    big = httpx.post(server.url + "/oauth/token", content=b"a=" + b"b" * 100_000)
    assert big.status_code == 400


def test_a_browser_based_client_may_call_the_oauth_endpoints_but_not_the_api(
    server: LiveServer,
) -> None:
    origin = {"Origin": "https://inspector.example"}
    metadata = httpx.get(server.url + "/.well-known/oauth-protected-resource/mcp", headers=origin)
    assert metadata.headers["access-control-allow-origin"] == "*"
    preflight = httpx.options(
        server.url + "/oauth/register",
        headers={**origin, "Access-Control-Request-Method": "POST",
                 "Access-Control-Request-Headers": "content-type"},
    )  # fmt: skip
    assert preflight.status_code == 200
    assert preflight.headers["access-control-allow-origin"] == "*"
    refused = httpx.post(server.url + "/mcp", json=INITIALIZE, headers={**ACCEPT, **origin})
    assert refused.status_code == 401
    assert "www-authenticate" in refused.headers["access-control-expose-headers"].lower()
    api = httpx.get(server.url + "/api/v1/brains", headers=origin)
    assert "access-control-allow-origin" not in api.headers  # the API stays same-origin
    assert "access-control-allow-credentials" not in metadata.headers  # never with cookies
