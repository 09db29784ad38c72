"""Single sign-on with an OpenID Connect provider: a real one on loopback
(tests/support/oidc_provider.py, built with Authlib), over real HTTP on both backends — the first
sign-in creating the user, linking by verified e-mail only when allowed, group claims to brains
and admin rights, Loci's disabling winning over the provider, password sign-in turned off, consent
after SSO — and every ID token a hostile or broken provider could send, each refused before anyone
is signed in.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from joserfc.jwk import RSAKey

from loci.auth.people import People
from loci.auth.sso.provider import ProviderDirectory, SsoProvider
from loci.embed.base import Embedder
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.oauth_flow import App, Browser
from tests.support.oidc_provider import CLIENT_ID, CLIENT_SECRET, OidcProvider, Person, Provider
from tests.support.services import BACKENDS, served_world

pytestmark = pytest.mark.attack


@pytest.fixture(scope="module")
def idp() -> Iterator[OidcProvider]:
    provider = OidcProvider()
    with provider:
        yield provider


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    tmp_path_factory: pytest.TempPathFactory,
    embedder: Embedder,
    request: pytest.FixtureRequest,
    idp: OidcProvider,
) -> Iterator[LiveServer]:
    configured = SsoProvider(
        name="corp",
        label="Corp ID",
        issuer=idp.issuer,
        client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
        scopes=("openid", "email", "profile", "groups"),
    )
    with served_world(tmp_path_factory, embedder, request, "sso", sso_providers=(configured,)) as (
        loci,
        live,
    ):
        yield live


@pytest.fixture
def provider(idp: OidcProvider, server: LiveServer) -> Iterator[Provider]:
    """The provider, reset to an honest one signing in a new person each test."""
    p = idp.provider
    p.sign_with, p.claims = p.key, {}
    p.person = Person(f"sub-{time.monotonic_ns()}", "dana", "dana@example.org")
    yield p


def configure(server: LiveServer, **changes: Any) -> None:
    """Change the provider's settings, as the administrator would in LOCI_OIDC_PROVIDERS."""
    directory: ProviderDirectory = server.app.state.sso_flow.directory
    directory.providers["corp"] = dataclasses.replace(directory.providers["corp"], **changes)


@pytest.fixture(autouse=True)
def default_settings(server: LiveServer) -> Iterator[None]:
    directory: ProviderDirectory = server.app.state.sso_flow.directory
    original = directory.providers["corp"]
    yield
    directory.providers["corp"] = original


def sign_in(server: LiveServer, next_path: str = "/") -> tuple[httpx.Client, httpx.Response]:
    """A browser's round trip: Loci → the provider → Loci's callback, following redirects as a
    browser does; the browser, and the callback's last answer."""
    browser = httpx.Client(base_url=server.url, timeout=30, follow_redirects=False)
    response = browser.get("/sso/corp/start", params={"next": next_path})
    for _ in range(5):
        if response.status_code not in (302, 303):
            break
        location = response.headers["location"]
        if location.startswith(server.url + "/sso/") or location.startswith("/sso/"):
            response = browser.get(location)  # the callback: its answer is what we check
            break
        response = browser.get(location)
    return browser, response


def me(browser: httpx.Client) -> dict[str, Any]:
    found = browser.get("/api/v1/me")
    assert found.status_code == 200, found.text
    return dict(found.json())


def test_a_first_sign_in_creates_the_user_and_the_next_finds_them(
    server: LiveServer, provider: Provider
) -> None:
    provider.person = Person("sub-erin", "erin", "Erin@Example.org")
    browser, landed = sign_in(server, "/#brain/default")
    assert landed.status_code == 303 and landed.headers["location"] == "/#brain/default"
    assert "loci_session" in browser.cookies
    user = me(browser)["user"]
    assert user["name"] == "erin"
    assert server.accounts.user("erin").email == "Erin@Example.org"
    again, landed = sign_in(server)
    assert me(again)["user"]["id"] == user["id"]
    assert [u.name for u in server.accounts.users()].count("erin") == 1
    options = httpx.get(server.url + "/api/v1/sign-in/options").json()
    assert options == {
        "password": True,
        "providers": [{"name": "corp", "label": "Corp ID"}],
        "first_start": None,  # two people have signed in: no first-start hint
    }


def test_a_taken_name_is_not_taken_over(server: LiveServer, provider: Provider) -> None:
    server.accounts.add_user("frank")
    provider.person = Person("sub-frank", "frank", "frank@example.org")
    browser, landed = sign_in(server)
    assert landed.status_code == 409 and "link_by_email" in landed.text
    assert "loci_session" not in browser.cookies


def test_linking_by_email_needs_the_setting_and_a_verified_address(
    server: LiveServer, provider: Provider
) -> None:
    user, _ = server.accounts.add_user("gwen")
    store: Any = server.loci.store
    env = {"LOCI_DATABASE_URL": store.db.url} if hasattr(store.db, "url") else {}
    recorded = run_cli("users", "email", "gwen", "gwen@example.org", home=server._home(), env=env)
    assert recorded.returncode == 0, recorded.stderr
    provider.person = Person("sub-gwen", "gwen", "gwen@example.org", email_verified=False)
    configure(server, link_by_email=True)
    _, refused = sign_in(server)  # unverified: no link, and the name is taken
    assert refused.status_code == 409
    provider.person = Person("sub-gwen", "gwen", "gwen@example.org")
    browser, landed = sign_in(server)
    assert landed.status_code == 303 and me(browser)["user"]["id"] == user.id


def test_allowed_domains_and_groups(server: LiveServer, provider: Provider) -> None:
    configure(server, allowed_domains=("corp.example",))
    _, refused = sign_in(server)
    assert refused.status_code == 403 and "domain" in refused.text
    provider.person = Person("sub-hana", "hana", "hana@corp.example")
    configure(server, allowed_domains=("corp.example",), allowed_groups=("staff",))
    _, refused = sign_in(server)
    assert refused.status_code == 403 and "groups" in refused.text
    provider.person.groups = ["staff"]
    _, landed = sign_in(server)
    assert landed.status_code == 303


def test_groups_give_brains_and_admin_rights_and_take_them_back(
    server: LiveServer, provider: Provider
) -> None:
    owner = server.accounts.user("owner")
    server.loci.store.create_brain("eng", "restricted", owner.id)
    configure(
        server,
        admin_groups=("loci-admins",),
        group_brains={"eng": {"eng": "editor"}, "eng-leads": {"eng": "owner"}},
    )
    provider.person = Person("sub-ivan", "ivan", "ivan@example.org", groups=["eng", "loci-admins"])
    sign_in(server)
    ivan = server.accounts.user("ivan")
    eng = server.loci.store.get_brain("eng")
    assert ivan.is_admin
    assert server.accounts.accounts.roles(ivan.id) == {eng.id: "editor"}
    provider.person.groups = ["eng", "eng-leads"]
    sign_in(server)
    assert server.accounts.accounts.roles(ivan.id) == {eng.id: "owner"}
    assert not server.accounts.user("ivan").is_admin
    provider.person.groups = []
    sign_in(server)  # left every group: the role goes (the owner who made it stays)
    assert server.accounts.accounts.roles(ivan.id) == {}


def test_disabling_in_loci_wins_over_the_provider(server: LiveServer, provider: Provider) -> None:
    provider.person = Person("sub-judy", "judy", "judy@example.org")
    browser, _ = sign_in(server)
    assert me(browser)["user"]["name"] == "judy"
    People(server.accounts).update("judy", by=None, disabled=True)
    assert browser.get("/api/v1/me").status_code == 401
    again, refused = sign_in(server)
    assert refused.status_code == 401 and "disabled" in refused.text
    assert "loci_session" not in again.cookies


def test_password_sign_in_can_be_turned_off(server: LiveServer, provider: Provider) -> None:
    People(server.accounts).set_password("owner", "a long enough passphrase 42")
    body = {"name": "owner", "password": "a long enough passphrase 42"}
    assert httpx.post(server.url + "/api/v1/session", json=body).status_code == 200
    people = server.app.state.people
    people.password_sign_in = False
    try:
        refused = httpx.post(server.url + "/api/v1/session", json=body)
        assert refused.status_code == 403 and "turned off" in refused.json()["message"]
        assert httpx.get(server.url + "/api/v1/sign-in/options").json()["password"] is False
        token = {"token": server.owner_token}  # API tokens still open a session
        assert httpx.post(server.url + "/api/v1/session", json=token).status_code == 200
    finally:
        people.password_sign_in = True


def test_an_application_is_approved_after_single_sign_on(
    server: LiveServer, provider: Provider
) -> None:
    provider.person = Person("sub-kim", "kim", "kim@example.org")
    app = App(server, name="Kim's agent")
    url = app.authorize_url()
    path = url.removeprefix(server.url)
    http, landed = sign_in(server, path)  # the consent page sent the person to sign in
    assert landed.headers["location"] == path
    browser = Browser(server, "kim", http=http)
    tokens = app.exchange(browser.approve(url, access="read")["code"]).json()
    listed = browser.http.get("/api/v1/tokens").json()
    assert [t["name"] for t in listed if t["oauth_client_id"] == app.client_id] == ["Kim's agent"]
    assert tokens["scope"] == "read"


def test_next_is_only_ever_a_path_of_this_site(server: LiveServer, provider: Provider) -> None:
    provider.person = Person("sub-lee", "lee", "lee@example.org")
    for elsewhere in ("https://evil.example/", "//evil.example/x", "/\\evil.example"):
        _, landed = sign_in(server, elsewhere)
        assert landed.headers["location"] == "/"


# hostile ID tokens ---------------------------------------------------------------------------
def _refused(server: LiveServer, expected: str) -> None:
    users_before = len(server.accounts.users())
    browser, landed = sign_in(server)
    assert landed.status_code == 401, landed.text
    assert expected in landed.text
    assert "loci_session" not in browser.cookies
    assert len(server.accounts.users()) == users_before  # nobody was created


def test_an_id_token_with_a_bad_signature_is_refused(
    server: LiveServer, provider: Provider
) -> None:
    provider.sign_with = RSAKey.generate_key(2048, parameters={"kid": "k1"})
    _refused(server, "does not verify")


def test_an_id_token_from_another_issuer_is_refused(server: LiveServer, provider: Provider) -> None:
    provider.claims = {"iss": "https://impostor.example"}
    _refused(server, "iss")


def test_an_id_token_for_another_audience_is_refused(
    server: LiveServer, provider: Provider
) -> None:
    provider.claims = {"aud": ["someone-else"]}
    _refused(server, "aud")
    provider.claims = {"aud": ["someone-else"], "azp": CLIENT_ID}  # azp alone does not do
    _refused(server, "aud")


def test_an_expired_id_token_is_refused(server: LiveServer, provider: Provider) -> None:
    now = int(time.time())
    provider.claims = {"iat": now - 7200, "exp": now - 3600}
    _refused(server, "expired")


def test_an_id_token_with_another_nonce_is_refused(server: LiveServer, provider: Provider) -> None:
    provider.claims = {"nonce": "not-the-one-sent"}
    _refused(server, "nonce")


def test_a_callback_from_another_browser_is_refused(server: LiveServer, provider: Provider) -> None:
    victim = httpx.Client(base_url=server.url, follow_redirects=False)
    started = victim.get("/sso/corp/start")
    at_provider = httpx.get(started.headers["location"])  # the attacker's own code and state
    callback = at_provider.headers["location"]
    stranger = httpx.Client(follow_redirects=False)  # no cookie from the start
    refused = stranger.get(callback)
    assert refused.status_code == 401 and "start again" in refused.text
    tampered = victim.get(callback.replace("state=", "state=x"))
    assert tampered.status_code == 401 and "loci_session" not in victim.cookies
