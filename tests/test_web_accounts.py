"""Accounts in the web app, in Chromium: an admin invites a person, who opens the link, chooses a
password and signs in with it; makes a token for the browser extension and sees it once; and is
disabled by the admin, whose click ends their session at once."""

from __future__ import annotations

import httpx
from playwright.sync_api import Browser, expect

from tests.support.live_server import LiveServer
from tests.support.web_app import browser, open_session, sign_in

__all__ = ["browser"]  # the module's Chromium, shared by this file's test

PASSWORD = "a walk along the river"


def test_the_first_sign_in_leads_with_the_token_the_first_start_printed(
    browser: Browser, server: LiveServer
) -> None:
    session = open_session(browser, server, "first-start", viewport={"width": 1280, "height": 860})
    page = session.page
    try:
        page.goto(server.url)
        first = page.locator("#signin-first")
        expect(first).to_be_visible()
        expect(page.locator("#signin-owner")).to_have_text("owner")
        expect(first).to_contain_text("the token loci serve printed when it first started")
        expect(first).to_contain_text("owner-token")
        # the token's field comes first, and has the focus; the password form follows
        token_box = page.locator("#signin-token").bounding_box()
        name_box = page.locator("#signin-name").bounding_box()
        assert token_box is not None and name_box is not None
        assert token_box["y"] < name_box["y"]
        expect(page.locator("#signin-token")).to_be_focused()
        session.shot("01-first-start")
        sign_in(page, server.owner_token)

        page.click("#signout-button")  # the owner has signed in: the page says no more
        expect(page.locator("#signin")).to_be_visible()
        expect(page.locator("#signin-name")).to_be_visible()
        expect(first).to_be_hidden()
        with httpx.Client() as anonymous:
            options = anonymous.get(server.url + "/api/v1/sign-in/options").json()
        assert options.get("first_start") is None and options["password"] is True
        session.shot("02-after-first-start")
        assert not session.watch.errors, session.watch.errors
    finally:
        page.context.close()


def test_invite_password_tokens_and_disabling(browser: Browser, server: LiveServer) -> None:
    admin = open_session(browser, server, "accounts-admin", viewport={"width": 1280, "height": 860})
    sam = open_session(browser, server, "accounts-sam", viewport={"width": 1280, "height": 860})
    page = admin.page
    try:
        # The admin invites Sam from the People page; the link is shown once.
        page.goto(server.url)
        sign_in(page, server.owner_token)
        page.click("#account-button")
        page.click("#people-button")
        expect(page.locator(".person-row[data-name=owner]")).to_contain_text("you")
        page.fill("#invite-create-name", "sam")
        page.fill("#invite-create-email", "sam@example.org")
        page.click("#invite-create-form button[type=submit]")
        expect(page.locator("#invite-link-box")).to_be_visible()
        link = page.locator("#invite-link").inner_text()
        assert link.startswith(server.url + "/#invite/locinv_")
        expect(page.locator(".person-row[data-name=sam]")).to_contain_text("invited")
        admin.shot("01-invited")
        page.click("#people-dialog .close-dialog")

        # Sam opens it, chooses a password, and is in; the secret leaves the address bar.
        tab = sam.page
        tab.goto(link)
        expect(tab.locator("#invite-intro")).to_contain_text("Welcome, sam")
        assert "#invite" not in tab.url
        tab.fill("#invite-password", PASSWORD)
        tab.fill("#invite-password-again", PASSWORD + "?")
        tab.click("#invite-form button[type=submit]")
        expect(tab.locator("#invite-error")).to_contain_text("differ")
        tab.fill("#invite-password-again", PASSWORD)
        tab.click("#invite-form button[type=submit]")
        expect(tab.locator("#workspace")).to_be_visible()
        expect(tab.locator("#user-name")).to_have_text("sam")
        tab.click("#account-button")
        expect(tab.locator("#account-user")).to_have_text("sam")
        expect(tab.locator("#people-button")).to_be_hidden()  # not an admin
        tab.click("#account-dialog .close-dialog")

        # Signed out, Sam signs in again with name and password (a wrong one first).
        tab.click("#signout-button")
        tab.fill("#signin-name", "sam")
        tab.fill("#signin-password", "not my password")
        tab.click("#password-form button[type=submit]")
        expect(tab.locator("#signin-error")).to_have_text("wrong name or password")
        sam.shot("02-sign-in")
        tab.fill("#signin-password", PASSWORD)
        tab.click("#password-form button[type=submit]")
        expect(tab.locator("#user-name")).to_have_text("sam")
        sam.shot("03-signed-in")

        # A read-only token for the extension, limited to one brain: its secret is shown once.
        tab.click("#first-brain-button")
        tab.fill("#brain-name", "sams")
        tab.click("#brain-form button[type=submit]")
        expect(tab.locator("#brain-select")).to_have_value("sams")
        tab.click("#account-button")
        expect(tab.locator("#tokens-empty")).to_be_visible()
        tab.fill("#token-name", "browser extension")
        tab.select_option("#token-scope", "read")
        tab.check("#token-brains input[value=sams]")
        tab.click("#token-form button[type=submit]")
        expect(tab.locator("#token-secret-box")).to_be_visible()
        secret = tab.locator("#token-secret").inner_text()
        assert secret.startswith("loci_")
        expect(tab.locator("#token-mcp")).to_contain_text(f"Bearer {secret}")
        expect(tab.locator("#token-mcp")).to_contain_text(f"{server.url}/mcp")
        row = tab.locator(".token-row", has_text="browser extension")
        expect(row).to_contain_text("read only · sams")
        expect(row).to_contain_text("never used")
        sam.shot("04-token-once")
        with server.client(secret) as extension:
            assert [b["name"] for b in extension.get("/brains").json()] == ["sams"]
        tab.click("#account-dialog .close-dialog")
        tab.click("#account-button")  # reopened: the secret is gone from the page
        expect(tab.locator("#token-secret-box")).to_be_hidden()
        assert secret not in tab.content()
        expect(row).to_contain_text("last used")

        # Revoked from the page: the extension's token stops working.
        row.get_by_role("button", name="Revoke browser extension").click()
        tab.click("#confirm-yes")
        expect(row).to_have_count(0)
        with server.client(secret) as extension:
            assert extension.get("/brains").status_code == 401
        tab.click("#account-dialog .close-dialog")

        # The admin cannot disable the only owner of a brain...
        page.click("#account-button")
        page.click("#people-button")
        person = page.locator(".person-row[data-name=sam]")
        person.get_by_role("button", name="Disable sam").click()
        page.click("#confirm-yes")
        expect(page.locator("#people-error")).to_contain_text("only owner of 'sams'")
        expect(person).to_have_attribute("data-disabled", "false")

        # ...so Sam shares it with the admin as an owner; then disabling Sam ends Sam's session
        # at once: the next request finds it gone.
        tab.click("#share-button")
        tab.select_option("#member-user", "owner")
        tab.select_option("#member-role", "owner")
        tab.click("#member-form button[type=submit]")
        expect(tab.locator("#member-list")).to_contain_text("owner")
        tab.click("#share-dialog .close-dialog")
        person.get_by_role("button", name="Disable sam").click()
        page.click("#confirm-yes")
        expect(person).to_have_attribute("data-disabled", "true")
        expect(page.locator("#people-error")).to_be_hidden()
        expect(person.locator(".person-state")).to_contain_text("disabled")
        admin.shot("04-disabled")
        tab.click(".tab[data-panel=notes]")
        expect(tab.locator("#signin")).to_be_visible()
        expect(tab.locator("#signin-error")).to_contain_text("session has ended")
        with httpx.Client(base_url=server.url + "/api/v1") as anonymous:
            again = anonymous.post("/session", json={"name": "sam", "password": PASSWORD})
            assert again.status_code == 401

        admin.watch.assert_clean(("GET", "/api/v1/me", 401), ("PATCH", "/api/v1/users/sam", 409))
        sam.watch.assert_clean(
            ("POST", "/api/v1/session", 401),  # the wrong password
            ("GET", "/api/v1/brains/sams/notes", 401),  # after being disabled
        )
    finally:
        admin.page.context.close()
        sam.page.context.close()
