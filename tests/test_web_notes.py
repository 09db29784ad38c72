"""Notes in a real Chromium over a real server: a note written without a title is listed by its
first line, its card shows the lines after it, and its editor leaves the title empty so it keeps
following the first line. A note deleted elsewhere says why it will not open, and the list
loading again does not hide that.

Screenshots land in $LOCI_TEST_ARTIFACTS/notes/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.web_app import open_session, sign_in


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def test_an_untitled_note_reads_as_its_first_line(browser: Browser, server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "home"}).status_code == 201
        api.post(
            "/brains/home/notes", json={"text": "Older note\n\nWritten first.", "title": "Old"}
        )
    session = open_session(browser, server, "notes", viewport={"width": 1280, "height": 900})
    page = session.page
    try:
        page.goto(server.url + "/#notes")
        sign_in(page, server.owner_token)
        page.click("#new-note-button")
        page.fill(
            "#note-text",
            "Call the plumber on Monday\n\nThe boiler loses pressure every night; "
            "ask about the flue and the expansion vessel.",
        )
        page.click("#note-editor button[type=submit]")
        expect(page.locator("#note-view-title")).to_have_text("Call the plumber on Monday")
        page.locator("#note-view .back-to-notes").click()
        cards = page.locator(".note-card")
        expect(cards).to_have_count(2)
        newest = cards.first  # the note changed last comes first
        expect(newest.locator(".note-open")).to_have_text("Call the plumber on Monday")
        expect(newest.locator(".note-excerpt")).to_have_text(
            "The boiler loses pressure every night; ask about the flue and the expansion vessel."
        )
        expect(cards.nth(1).locator(".note-excerpt")).to_have_text("Older note Written first.")
        session.shot("01-cards")

        # Its editor leaves the title empty: a new first line is its new title.
        newest.locator(".note-open").click()
        page.click("#edit-note-button")
        expect(page.locator("#note-title")).to_have_value("")
        page.fill("#note-text", "Plumber booked for Tuesday\n\nBring the boiler manual.")
        page.click("#note-editor button[type=submit]")
        expect(page.locator("#note-view-title")).to_have_text("Plumber booked for Tuesday")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        page.context.close()


def test_a_note_gone_elsewhere_says_so_and_the_list_reloading_keeps_the_message(
    browser: Browser, server: LiveServer
) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "home"}).status_code == 201
        api.post("/brains/home/notes", json={"text": "Kept note", "tags": ["house"]})
        gone = api.post("/brains/home/notes", json={"text": "Soon gone", "tags": ["house"]})
    session = open_session(browser, server, "notes-gone", viewport={"width": 1280, "height": 900})
    page = session.page
    try:
        page.goto(server.url + "/#notes")
        sign_in(page, server.owner_token)
        expect(page.locator(".note-card")).to_have_count(2)
        # Deleted from another device while this list is shown.
        note_id = gone.json()["document"]["id"]
        with server.client() as api:
            assert api.delete(f"/brains/home/notes/{note_id}").status_code == 204
        page.locator(".note-card", has_text="Soon gone").locator(".note-open").click()
        error = page.locator("#notes-error")
        expect(error).to_be_visible()
        expect(error).not_to_be_empty()
        # The list loading again (a tag chosen) shows what is left and leaves the message.
        page.locator("#tag-chips .chip", has_text="#house").click()
        expect(page.locator(".note-card")).to_have_count(1)
        expect(error).to_be_visible()
        session.watch.assert_clean(
            ("GET", "/api/v1/me", 401), ("GET", f"/api/v1/brains/home/notes/{note_id}", 404)
        )
    finally:
        page.context.close()
