"""The web app on a phone (390 × 844, touch) in a real Chromium over a real server: a one-line
header with the account's buttons in a menu, no "drop a file" hint where nothing can be dropped,
the question box kept in view while an answer is read; installed, it opens offline and says so,
and files shared from another app (the share target, through the service worker) are saved.

Screenshots land in $LOCI_TEST_ARTIFACTS/phone-*/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, FilePayload, Page, expect

from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.web_app import INDEXING_TIMEOUT_MS, open_session, sign_in

PHONE = {
    "viewport": {"width": 390, "height": 844},
    "device_scale_factor": 2,
    "is_mobile": True,
    "has_touch": True,
}
BOILER = (
    b"# Boiler\n\nThe gauge should read between one and two bar when the boiler is cold.\n\n"
    b"Bleed the radiators in autumn, starting with the one furthest from the boiler.\n"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def with_boiler(server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "pocket"}).status_code == 201
        done = api.post("/brains/pocket/files", files={"files": ("boiler.md", BOILER)}).json()
        server.wait_ready(api, "pocket", done["results"][0]["document"]["id"])


def worker_ready(page: Page) -> None:
    """Wait until the service worker controls the page (it claims it once installed)."""
    page.wait_for_function(
        "() => navigator.serviceWorker.controller !== null", timeout=INDEXING_TIMEOUT_MS
    )


def test_a_compact_header_and_the_question_kept_at_hand(
    browser: Browser, server: LiveServer
) -> None:
    with_boiler(server)
    session = open_session(browser, server, "phone-ask", **PHONE)
    page = session.page
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)
        header = page.locator(".topbar").bounding_box()
        assert header is not None and header["height"] <= 64  # one line
        expect(page.locator("#new-brain-button")).to_be_hidden()
        expect(page.locator(".drop-hint")).to_be_hidden()  # a phone drops nothing
        expect(page.get_by_text("Choose files…")).to_be_visible()
        session.shot("01-files")

        # The account's buttons are in the menu, each label starting at the same left edge.
        page.get_by_role("button", name="Menu").click()
        starts = page.eval_on_selector_all(
            "#header-menu [role=menuitem]",
            """items => items.map(item => {
                const range = document.createRange();
                range.selectNodeContents(item);
                return Math.round(range.getBoundingClientRect().left);
            })""",
        )
        assert len(starts) == 5 and len(set(starts)) == 1, starts
        session.shot("01b-menu")
        page.get_by_role("menuitem", name="Account").click()
        expect(page.locator("#account-dialog")).to_be_visible()
        page.locator("#account-dialog").get_by_role("button", name="Close").click()

        page.click(".tab[data-panel=ask]")
        expect(page.locator("#ask-help")).to_be_hidden()  # "Enter asks…": no keyboard here
        for question in (
            "What should the boiler gauge read when it is cold?",
            "When should the radiators be bled?",
            "Which radiator is bled first?",
        ):
            page.fill("#ask-input", question)
            page.click("#ask-button")
            expect(page.locator(".msg-assistant").last).to_have_attribute("data-state", "done")
        # Reading the first answer, the question box is still on the screen.
        page.locator(".msg-assistant").first.scroll_into_view_if_needed()
        page.evaluate("window.scrollTo(0, document.querySelector('#chat-log').offsetTop)")
        expect(page.locator(".msg-user").first).to_be_in_viewport()
        expect(page.locator("#ask-input")).to_be_in_viewport()
        box = page.locator("#ask-form").bounding_box()
        assert box is not None and box["y"] + box["height"] <= 844 + 1
        session.page.screenshot(path=str(session.shots / "02-ask.png"))  # the screen, as seen
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        page.context.close()


def test_offline_the_app_opens_and_says_so(browser: Browser, server: LiveServer) -> None:
    session = open_session(browser, server, "phone-offline", **PHONE)
    page = session.page
    context = page.context
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)
        worker_ready(page)
        context.set_offline(True)
        page.reload()
        offline = page.locator("#offline")
        expect(offline).to_be_visible()
        expect(offline).to_contain_text("You are offline")
        expect(page.locator("#signin")).to_be_hidden()  # not "signed out": only offline
        session.shot("01-offline")
        context.set_offline(False)
        expect(offline).to_be_hidden()
        expect(page.locator("#workspace")).to_be_visible()
    finally:
        context.close()


SHARE_FORM = """
([count]) => {
  const form = document.createElement("form");
  form.method = "post";
  form.action = "/share";
  form.enctype = "multipart/form-data";
  form.id = "share-as-the-phone-does";
  for (const [name, value] of [["title", "From the gallery"], ["text", ""], ["url", ""]]) {
    const input = document.createElement("input");
    input.name = name;
    input.value = value;
    form.append(input);
  }
  const files = document.createElement("input");
  files.type = "file";
  files.name = "files";
  files.multiple = true;
  form.append(files);
  document.body.append(form);
}
"""


def test_files_shared_from_another_app_are_saved(browser: Browser, server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "default"}).status_code == 201
    session = open_session(browser, server, "phone-share", **PHONE)
    page = session.page
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)
        worker_ready(page)
        # What the phone's share sheet does: a form post of the files to the share target.
        page.evaluate(SHARE_FORM, [2])
        page.set_input_files(
            "#share-as-the-phone-does input[type=file]",
            [
                FilePayload(name="receipt.txt", mimeType="text/plain", buffer=b"Hinges 4.20 EUR"),
                FilePayload(name="plan.md", mimeType="text/markdown", buffer=b"# Plan\n\nPaint."),
            ],
        )
        page.evaluate("document.querySelector('#share-as-the-phone-does').submit()")
        expect(page.locator("#toasts")).to_contain_text("Saved 2 files to default.")
        assert page.evaluate("location.pathname + location.search") == "/"
        rows = page.locator(".doc-row")
        expect(rows.filter(has_text="receipt.txt")).to_have_count(1)
        expect(rows.filter(has_text="plan.md")).to_have_count(1)
        session.shot("01-shared")
        with server.client() as api:
            names = sorted(d["name"] for d in api.get("/brains/default/files").json())
        assert names == ["plan.md", "receipt.txt"]
        # Kept once: a reload shares nothing again, and the worker's cache is empty.
        page.reload()
        expect(page.locator("#workspace")).to_be_visible()
        assert (
            page.evaluate("caches.open('loci-share').then((c) => c.keys()).then((k) => k.length)")
            == 0
        )
    finally:
        page.context.close()
