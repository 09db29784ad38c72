"""Open registration (RFC 7591) under attack, over real HTTP on both backends (issue 28, findings
5, 6 and 9): one address registers a few applications a minute and some tens an hour, and
registrations that never got a token are capped for everyone, so registering cannot fill the
disk; a registration is small; an application's name cannot hide characters or imitate another
name, and its redirect URIs cannot hold what a URL must not; and a refresh token presented by
another application is refused without touching the grant it belongs to.

The server's clock is the test's: a limit is passed by moving it, never by waiting.
"""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from tests.support.live_server import LiveServer
from tests.support.mcp_http import ACCEPT, INITIALIZE
from tests.support.oauth_flow import REDIRECT, App, Browser

pytestmark = [pytest.mark.attack, pytest.mark.both_backends]

# The limits docs/security.md states.
PER_MINUTE = 5
PER_HOUR = 50
MAX_UNUSED = 2000
UNUSED_FOR_S = 86400
MAX_URI = 500


class Clock:
    def __init__(self) -> None:
        self.now = time.time()

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def clock(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Clock:
    moved = Clock()
    monkeypatch.setattr(server.app.state.oauth_server, "clock", moved)
    return moved


def register(server: LiveServer, address: str, **metadata: Any) -> httpx.Response:
    """A registration arriving from `address` (as the trusted proxy in front reports it)."""
    body = {
        "client_name": "Test assistant",
        "redirect_uris": [REDIRECT],
        "token_endpoint_auth_method": "none",
        **metadata,
    }
    return httpx.post(
        server.url + "/oauth/register", json=body, headers={"X-Forwarded-For": address}
    )


def refused(answer: httpx.Response, status: int, error: str) -> dict[str, Any]:
    assert answer.status_code == status, answer.text
    body: dict[str, Any] = answer.json()
    assert body["error"] == error, body
    return body


# finding 5: registering fills the disk ------------------------------------------------------
def test_one_address_registers_a_few_a_minute_and_some_tens_an_hour(
    server: LiveServer, clock: Clock
) -> None:
    for _ in range(PER_MINUTE):
        assert register(server, "203.0.113.7").status_code == 201
    too_fast = register(server, "203.0.113.7")
    assert "minute" in refused(too_fast, 429, "rate_limited")["error_description"]
    assert 1 <= int(too_fast.headers["Retry-After"]) <= 60
    assert register(server, "203.0.113.8").status_code == 201  # another address: its own budget

    # An IPv6 network of one household or host (a /64) is one address.
    for n in range(1, PER_MINUTE + 1):
        assert register(server, f"2001:db8:7:1::{n}").status_code == 201
    refused(register(server, "2001:db8:7:1:ffff::9"), 429, "rate_limited")
    assert register(server, "2001:db8:7:2::1").status_code == 201

    for _ in range(PER_HOUR // PER_MINUTE - 1):  # a minute later, the next few
        clock.now += 61
        for _ in range(PER_MINUTE):
            assert register(server, "203.0.113.7").status_code == 201
    clock.now += 61
    too_many = register(server, "203.0.113.7")
    assert "hour" in refused(too_many, 429, "rate_limited")["error_description"]
    assert 60 < int(too_many.headers["Retry-After"]) <= 3600
    clock.now += 3600
    assert register(server, "203.0.113.7").status_code == 201


def test_registrations_never_used_are_capped_for_everyone(server: LiveServer, clock: Clock) -> None:
    connected = App(server)  # an application that got a token does not count
    connected.connect(Browser(server, "owner"))
    tables: Any = server.loci.store.oauth  # a flood from many addresses, each within its budget
    db = tables.db
    with db.transaction() as conn:
        db.run_many(
            conn,
            "INSERT INTO oauth_clients(client_id, name, redirect_uris, grant_types, auth_method)"
            " VALUES (?, 'flood', ?, '[\"authorization_code\"]', 'none')",
            [(f"locic_flood{n}", f'["{REDIRECT}"]') for n in range(MAX_UNUSED - 1)],
        )
    assert register(server, "198.51.100.1").status_code == 201  # the last place
    full = register(server, "198.51.100.2")
    refused(full, 503, "temporarily_unavailable")
    assert 60 < int(full.headers["Retry-After"]) <= UNUSED_FOR_S

    clock.now += UNUSED_FOR_S + 60  # a day later the unused ones are forgotten
    assert register(server, "198.51.100.2").status_code == 201


def test_a_registration_is_small(server: LiveServer) -> None:
    """What one registration can make the server keep is bounded: its body, its name, the
    number and the length of its redirect URIs."""
    refused(register(server, "192.0.2.1", software_id="x" * 20_000), 400, "invalid_request")
    long_uri = "https://app.example/" + "a" * MAX_URI
    refused(register(server, "192.0.2.1", redirect_uris=[long_uri]), 400, "invalid_redirect_uri")
    eleven = [f"https://app.example/cb{n}" for n in range(11)]
    refused(register(server, "192.0.2.1", redirect_uris=eleven), 400, "invalid_redirect_uri")
    refused(register(server, "192.0.2.1", client_name="n" * 101), 400, "invalid_client_metadata")

    at_the_caps = [f"https://app.example/{n}/".ljust(MAX_URI, "a") for n in range(10)]
    largest = register(server, "192.0.2.1", client_name="n" * 100, redirect_uris=at_the_caps)
    assert largest.status_code == 201, largest.text


# finding 9: names that hide or imitate, redirect URIs that are not URLs -----------------------
HIDING_OR_IMITATING = [
    "\u202eedualC",  # right-to-left override: shows as "Claude"
    "Claude\u202e",
    "Claude \u2066Code\u2069",  # an isolate
    "\u200eClaude",  # a left-to-right mark
    "Cla\u200bude",  # zero-width space
    "Cla\u200dude",  # zero-width joiner
    "Claude\u00ad",  # soft hyphen
    "\ufeffClaude",  # byte order mark
    "Claude\u3164",  # Hangul filler: a letter that shows nothing
    "Claude\u0007",
    "Claude\nCode",
    "\u0421laude",  # a Cyrillic С
    "Cl\u0430ude Code",  # a Cyrillic а
]
HONEST_NAMES = {
    "Claude Code": "Claude Code",
    "VS Code (Copilot) - v1.2": "VS Code (Copilot) - v1.2",
    "Яндекс Браузер": "Яндекс Браузер",
    "Яндекс Browser": "Яндекс Browser",  # words of two scripts, none mixing them
    "日本語アプリ for Loci": "日本語アプリ for Loci",
    "مساعد المنزل": "مساعد المنزل",
    "\uff23\uff4c\uff41\uff55\uff44\uff45": "Claude",  # fullwidth: kept in its NFKC form
}


def test_a_name_that_hides_characters_or_imitates_another_is_refused(server: LiveServer) -> None:
    for name in HIDING_OR_IMITATING:
        got = register(server, "192.0.2.10", client_name=name)
        refused(got, 400, "invalid_client_metadata")
    for n, (name, kept) in enumerate(HONEST_NAMES.items()):
        got = register(server, f"192.0.2.{20 + n}", client_name=name)
        assert got.status_code == 201, (name, got.text)
        stored = server.loci.store.oauth.client(got.json()["client_id"])
        assert stored is not None and stored.name == kept


BAD_REDIRECT_URIS = [
    "https://app.example/cb\n",
    "https://app.example/cb\r\nSet-Cookie: x=1",
    "\thttps://app.example/cb",
    "https://app.example/c b",
    "https://app .example/cb",
    "https://app.example:99999/cb",
    "https://app.example:http/cb",
    "http://127.0.0.1:0/cb",
    "https://user:pass@app.example/cb",
    "https://user@app.example/cb",
    "https://app.example\u202e/cb",
    "https://app.example/\u200bcb",
    "https://\u0430pp.example/cb",  # a Cyrillic а in the host: xn--… is how it is written
    "https://app..example/cb",
    "https://-app.example/cb",
    "https://127.1/cb",  # a browser reads it as 127.0.0.1
    "https://0x7f.0.0.1/cb",
]
GOOD_REDIRECT_URIS = [
    "https://app.example:8443/cb",
    "http://[::1]:3000/callback",
    "http://localhost:33418",
    "http://127.0.0.1:8976/callback",
    "https://xn--80ak6aa92e.example/cb",
    "https://app.example/cb?x=1&y=%20",
    "https://192.0.2.5/cb",
    "https://app.example./cb",
]


def test_a_redirect_uri_that_is_not_a_plain_url_is_refused(server: LiveServer) -> None:
    for uri in BAD_REDIRECT_URIS:
        got = register(server, "192.0.2.40", redirect_uris=[uri])
        assert got.status_code == 400, (uri, got.text)
        assert got.json()["error"] == "invalid_redirect_uri", (uri, got.text)
    good = register(server, "192.0.2.41", redirect_uris=GOOD_REDIRECT_URIS)
    assert good.status_code == 201, good.text
    stored = server.loci.store.oauth.client(good.json()["client_id"])
    assert stored is not None and list(stored.redirect_uris) == GOOD_REDIRECT_URIS


# finding 6: another client's refresh --------------------------------------------------------
def mcp_works(server: LiveServer, token: str) -> bool:
    answer = httpx.post(
        server.url + "/mcp",
        json=INITIALIZE,
        headers={**ACCEPT, "Authorization": f"Bearer {token}"},
    )
    return answer.status_code == 200


@pytest.mark.parametrize("auth_method", ["client_secret_post", "none"])
def test_a_refresh_token_presented_by_another_client_leaves_the_grant_alone(
    server: LiveServer, auth_method: str
) -> None:
    person = Browser(server, "owner")
    real = App(server, name="Real assistant", auth_method=auth_method)
    thief = App(server, name="Other assistant", auth_method=auth_method)
    tokens = real.connect(person)

    stolen = thief.refresh(tokens["refresh_token"])
    refused(stolen, 400, "invalid_grant")
    assert mcp_works(server, tokens["access_token"])
    renewed = real.refresh(tokens["refresh_token"])  # still unspent: the real client refreshes
    assert renewed.status_code == 200, renewed.text

    # A spent one from another client is refused too, and revokes nothing: only its own client
    # presenting it again is the sign of a copy in two hands.
    refused(thief.refresh(tokens["refresh_token"]), 400, "invalid_grant")
    assert mcp_works(server, renewed.json()["access_token"])
    again = real.refresh(renewed.json()["refresh_token"])
    assert again.status_code == 200, again.text
    person.close()
