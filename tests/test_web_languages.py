"""Languages in a real Chromium over a real server: the Files tab names the brain's languages in
the reader's own language, and in a brain of several each row names its document's; the preview
gives a document's language in its details, names a passage's where it differs from its
document's, and marks text with its language (`lang`), so a screen reader reads it in that
language's voice.

Screenshots land in $LOCI_TEST_ARTIFACTS/languages/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, expect

from tests.support.accessibility import violations
from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.web_app import file_row, open_session, sign_in

GERMAN = (
    "# Reise\n\nWir fahren im Sommer mit dem Zug nach Wien und bleiben eine Woche bei unseren "
    "Freunden. Die Fahrkarten sind schon gekauft, und das Hotel liegt direkt neben dem Bahnhof.\n"
)
ENGLISH = (
    "# Trip\n\nWe take the night train to Vienna in the summer and stay a week with our friends. "
    "The tickets are already bought, and the hotel is right next to the station.\n"
)
# Mostly English, with one section in German: that passage says its language.
MIXED = (
    "# Packing list\n\nThe big suitcase holds the winter coats, the boots and the presents for "
    "the family. Remember the chargers, the passports and the tickets for the night train. "
    "Water the plants before leaving and ask the neighbours to take in the post every day.\n\n"
    "## Für Oma\n\nDie Geschenke für Oma liegen im Schrank im Flur, hinter den Wintermänteln. "
    "Bitte vergiss nicht die Karte, die die Kinder gemalt haben, und den Kuchen vom Bäcker.\n"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def test_languages_are_named_in_the_files_list_and_the_preview(
    browser: Browser, server: LiveServer
) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "travel"}).status_code == 201
        for name, text in (("reise.md", GERMAN), ("trip.md", ENGLISH), ("packing.md", MIXED)):
            done = api.post("/brains/travel/files", files={"files": (name, text.encode())}).json()
            server.wait_ready(api, "travel", done["results"][0]["document"]["id"])
    session = open_session(
        browser, server, "languages", viewport={"width": 1280, "height": 900}, locale="de-DE"
    )
    page = session.page
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)
        # Named in the reader's language (German here), and each row says its own.
        expect(page.locator("#brain-languages")).to_have_text(
            re.compile(r"^Languages: (Englisch 2, Deutsch 1|Deutsch 1, Englisch 2)$")
        )
        expect(file_row(page, "reise.md").locator(".doc-meta")).to_contain_text("· Deutsch")
        expect(file_row(page, "trip.md").locator(".doc-meta")).to_contain_text("· Englisch")

        # The preview: the language in the details, and the text marked with it.
        file_row(page, "reise.md").get_by_role("button", name="Actions for reise.md").click()
        page.get_by_role("menuitem", name="Open").click()
        expect(page.locator("#preview-meta")).to_have_text(
            "brain travel · reise.md · Deutsch · 1 passage · ready"
        )
        expect(page.locator("#preview-body pre.source-text")).to_have_attribute("lang", "de")
        page.keyboard.press("Escape")

        # A passage in another language than its document's says which.
        file_row(page, "packing.md").get_by_role("button", name="Actions for packing.md").click()
        page.get_by_role("menuitem", name="Open").click()
        expect(page.locator("#preview-meta")).to_contain_text("packing.md · Englisch ·")
        page.get_by_role("button", name="Passages").click()
        german = page.locator(".chunk", has_text="Geschenke für Oma")
        expect(german.locator(".chunk-where")).to_contain_text("· Deutsch")
        expect(german.locator(".chunk-text")).to_have_attribute("lang", "de")
        english = page.locator(".chunk", has_text="big suitcase")
        expect(english.locator(".chunk-where")).not_to_contain_text("Englisch")
        expect(english.locator(".chunk-text")).to_have_attribute("lang", "en")
        assert not violations(page), violations(page)
        session.shot("01-passages")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        session.shot("last")
        page.context.close()
