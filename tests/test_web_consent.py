"""OAuth consent and single sign-on in Chromium: an application's authorization request lands on
the consent page, the person signs in there, picks read-only and one brain and approves, and the
browser goes back to the application with a code; and the sign-in screen's provider button takes
a person through a real OpenID Connect provider and back into the web app."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Route, expect

from loci.auth.people import People
from loci.auth.sso.flow import OidcFlow
from loci.auth.sso.provider import ProviderDirectory, SsoProvider
from tests.support.live_server import LiveServer
from tests.support.oauth_flow import PASSWORD, REDIRECT, App, query_of
from tests.support.oidc_provider import CLIENT_ID, CLIENT_SECRET, OidcProvider, Person
from tests.support.web_app import browser, open_session

__all__ = ["browser"]  # the module's Chromium


@pytest.fixture
def idp() -> Iterator[OidcProvider]:
    provider = OidcProvider()
    with provider:
        yield provider


def test_the_consent_page_signs_in_and_grants_what_was_chosen(
    browser: Browser, server: LiveServer
) -> None:
    alice, _ = server.accounts.add_user("alice")
    People(server.accounts).set_password("alice", PASSWORD)
    garden = server.loci.store.create_brain("garden", "restricted", alice.id)
    server.loci.store.create_brain("taxes", "restricted", alice.id)
    app = App(server, name="Web agent")
    session = open_session(browser, server, "oauth-consent", viewport={"width": 900, "height": 900})
    page = session.page
    landed: list[str] = []

    def application(route: Route) -> None:  # the application's redirect URI
        landed.append(route.request.url)
        route.fulfill(status=200, body="connected", content_type="text/plain")

    page.context.route(REDIRECT.rsplit("/", 1)[0] + "/**", application)
    url = app.authorize_url()
    page.goto(url)
    expect(page.locator("#consent-signin")).to_be_visible()
    page.fill("#consent-name", "alice")
    page.fill("#consent-password", PASSWORD)
    page.click("#consent-password-form button[type=submit]")
    expect(page.locator("#consent-client")).to_have_text("Web agent")
    expect(page.locator("#consent-host")).to_have_text("127.0.0.1:8976")
    session.shot("01-consent")
    page.uncheck("#consent-all")
    page.check("#consent-brain-list input[value=garden]")
    page.click("#consent-form button[type=submit]")
    page.wait_for_url(REDIRECT + "**")
    assert len(landed) == 1 and query_of(landed[0])["state"] == query_of(url)["state"]

    tokens = app.exchange(query_of(landed[0])["code"]).json()
    assert tokens["scope"] == "read"
    held = server.accounts.authenticate(tokens["access_token"], server.url + "/mcp")
    assert held.token.brain_ids == (garden.id,) and held.token.scope == "read"
    assert session.watch.errors == [] and session.watch.csp_violations == []
    assert session.watch.foreign_requests == landed  # nothing else left the site
    assert [e for e in session.watch.error_responses if e[2] != 401] == []


def test_the_sign_in_screens_provider_button_signs_in(
    browser: Browser, server: LiveServer, idp: OidcProvider
) -> None:
    provider = SsoProvider(
        name="corp", label="Corp ID", issuer=idp.issuer, client_id=CLIENT_ID,
        client_secret=CLIENT_SECRET,
    )  # fmt: skip
    server.app.state.sso_flow = OidcFlow(ProviderDirectory([provider]))  # as configured
    idp.provider.person = Person("sub-web", "wendy", "wendy@example.org")
    session = open_session(browser, server, "sso-button", viewport={"width": 900, "height": 900})
    page = session.page
    page.goto(server.url)
    button = page.locator("#signin-sso button", has_text="Sign in with Corp ID")
    expect(button).to_be_visible()
    button.click()
    expect(page.locator("#workspace")).to_be_visible()
    expect(page.locator("#user-name")).to_have_text("wendy")
    session.shot("01-signed-in")
    assert session.watch.errors == [] and session.watch.csp_violations == []
