"""Search filters and dropping a file on the chat, in a real Chromium over a real server.

One pass over a brain holding a note, a file and a web page: filter search by kind and by tag,
a date range that excludes everything (the empty state) and one the API refuses (its message in
the form), chips that remove filters, a reload that keeps them; then Ask with "notes only" cites
only the note, and a Markdown file dropped on the chat is uploaded, indexed and answered from.
A viewer of the brain gets no drop target.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Locator, expect

from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.web_app import DROP_FILE, b64, open_session, sign_in

NOTE = "Lighthouse note: the keeper's cat is called Marlow and sleeps by the lamp."
MANUAL = "# Lighthouse manual\n\nThe lighthouse lens is polished every morning with a soft cloth.\n"
HISTORY = "# Lighthouse history\n\nThe lighthouse on the cape was first lit in 1871.\n"
HISTORY_URL = "https://example.org/lighthouse-history"
FERRY = "# Ferry times\n\nThe morning ferry leaves the harbour at 06:40 from pier 2.\n"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def labels(found: Locator) -> list[str]:
    """The texts of what `found` matches, once at least one is shown."""
    expect(found.first).to_be_visible()
    return found.all_inner_texts()


def test_filters_narrow_search_and_ask_and_a_dropped_file_is_asked_about(
    browser: Browser, server: LiveServer
) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "coast"}).status_code == 201
        note = api.post("/brains/coast/notes", json={"text": NOTE, "tags": ["cats"]}).json()
        manual = api.post(
            "/brains/coast/files", files={"files": ("lighthouse-manual.md", MANUAL.encode())}
        ).json()["results"][0]["document"]
        history = api.post(
            "/brains/coast/urls",
            json={"url": HISTORY_URL, "markdown": HISTORY, "tags": ["history"]},
        ).json()["document"]
        for doc in (note["document"], manual, history):
            assert server.wait_ready(api, "coast", doc["id"])["status"] == "ready"
        note_name = note["document"]["name"]
        _, ana = server.accounts.add_user("ana")
        assert api.put("/brains/coast/members/ana", json={"role": "viewer"}).status_code < 300

    session = open_session(browser, server, "filters", viewport={"width": 1280, "height": 900})
    page, watch = session.page, session.watch
    search_url = "/api/v1/brains/coast/search"
    try:
        page.goto(server.url + "/#search")
        sign_in(page, server.owner_token)
        page.select_option("#brain-select", "coast")
        hits = "#search-results .citation-name"

        # Unfiltered, the query finds all three kinds.
        page.fill("#search-input", "lighthouse")
        page.click("#search-form button[type=submit]")
        expect(page.locator(hits)).to_have_count(3)

        # Notes only: just the note, with a chip saying so.
        page.click("#search-filters summary")
        page.check("#search-filter-kind-note")
        page.click("#search-form button[type=submit]")
        expect(page.locator("#search-summary")).to_contain_text("with these filters")
        assert [note_name in label for label in labels(page.locator(hits))] == [True]
        expect(page.locator("#search-chips .filter-chip")).to_have_text(["Notes×"])
        expect(page.locator("#search-filters summary")).to_have_text("Filters (1)")

        # Removing the chip searches again without it.
        page.get_by_role("button", name="Remove filter: Notes").click()
        expect(page.locator("#search-chips")).to_be_hidden()
        expect(page.locator(hits)).to_have_count(3)

        # A tag: only the web page carries "history".
        page.fill("#search-filter-tags", "history, ")
        page.click("#search-form button[type=submit]")
        expect(page.locator(hits)).to_have_count(1)
        expect(page.locator(hits)).to_contain_text("lighthouse-history")
        session.shot("01-tag-filter")

        # A reload keeps the filters (and they still apply).
        page.reload()
        expect(page.locator("#search-chips .filter-chip")).to_have_text(["Tag: history×"])
        expect(page.locator("#search-filter-tags")).to_have_value("history")

        # A date range before anything was added: the empty state, not an error.
        page.click("#search-filters summary")
        page.fill("#search-filter-after", "2000-01-01")
        page.fill("#search-filter-before", "2000-01-02")
        page.fill("#search-input", "lighthouse")
        page.click("#search-form button[type=submit]")
        expect(page.locator("#search-summary")).to_have_text(
            "Nothing in coast matches “lighthouse” with these filters."
        )
        expect(page.locator(hits)).to_have_count(0)
        expect(page.locator("#search-error")).to_be_hidden()

        # An empty range is refused by the API; its message shows in the form.
        page.fill("#search-filter-after", "2000-01-05")
        page.click("#search-form button[type=submit]")
        expect(page.locator("#search-error")).to_contain_text("must come before")
        session.shot("02-refused-range")

        # The chips remove the dates and the tag; the search runs again each time.
        chips = page.locator("#search-chips .filter-chip")
        expect(chips).to_have_count(3)
        page.get_by_role("button", name="Remove filter: Added before 2000-01-02").click()
        expect(page.locator("#search-error")).to_be_hidden()
        page.get_by_role("button", name="Remove filter: Added on or after 2000-01-05").click()
        expect(page.locator(hits)).to_have_count(1)
        page.get_by_role("button", name="Remove filter: Tag: history").click()
        expect(chips).to_have_count(0)
        expect(page.locator(hits)).to_have_count(3)

        # Ask with an empty date range: refused above the form, the question kept to retry.
        page.click(".tab[data-panel=ask]")
        page.click("#ask-filters summary")
        page.fill("#ask-filter-after", "2000-01-05")
        page.fill("#ask-filter-before", "2000-01-02")
        question = "How is the lighthouse lens polished, and what is the cat called?"
        page.fill("#ask-input", question)
        page.click("#ask-button")
        expect(page.locator("#ask-error")).to_contain_text("must come before")
        expect(page.locator("#ask-input")).to_have_value(question)
        expect(page.locator("#chat-log > li")).to_have_count(0)

        # Ask, searching notes only: the answer cites the note and nothing else.
        page.click("#ask-filters .link-button")  # Clear filters
        expect(page.locator("#ask-chips")).to_be_hidden()
        page.check("#ask-filter-kind-note")
        page.click("#ask-button")
        answer = page.locator(".msg-assistant").last
        expect(answer).to_have_attribute("data-state", "done")
        expect(answer.locator(".msg-progress")).to_contain_text("searched notes")
        sources = labels(answer.locator(".source-item .citation-name"))
        assert sources and all(note_name in s for s in sources), sources
        expect(answer.locator(".answer")).to_contain_text("Marlow")

        # A file dropped on the chat is uploaded, indexed, then answered from.
        page.get_by_role("button", name="Remove filter: Notes").click()
        page.evaluate(
            DROP_FILE, ["#chat-log", "ferry-times.md", "text/markdown", b64(FERRY.encode())]
        )
        expect(page.locator(".msg-system")).to_have_text(
            "Added ferry-times.md — ask about it.", timeout=60_000
        )
        page.fill("#ask-input", "When does the morning ferry leave the harbour?")
        page.click("#ask-button")
        answer = page.locator(".msg-assistant").last
        expect(answer).to_have_attribute("data-state", "done")
        expect(answer.locator(".source-item").first).to_contain_text("ferry-times.md")
        expect(answer.locator(".answer")).to_contain_text("06:40")
        session.shot("03-dropped-and-asked")
        watch.assert_clean(
            ("GET", "/api/v1/me", 401),
            ("POST", search_url, 400),
            ("POST", "/api/v1/brains/coast/ask", 400),
        )
    finally:
        session.shot("last")
        page.context.close()

    # A viewer: no drop target, and a dropped file goes nowhere.
    viewer = open_session(browser, server, "filters-viewer")
    try:
        viewer.page.goto(server.url + "/#ask")
        sign_in(viewer.page, ana.secret)
        expect(viewer.page.locator("#panel-ask")).to_be_visible()
        expect(viewer.page.locator("#ask-drop-help")).to_be_hidden()
        viewer.page.evaluate(DROP_FILE, ["#chat-log", "x.md", "text/markdown", b64(b"# X\n")])
        expect(viewer.page.locator(".msg-system")).to_have_count(0)
        with server.client() as api:
            assert len(api.get("/brains/coast/files").json()) == 4  # nothing new
        viewer.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        viewer.page.context.close()
