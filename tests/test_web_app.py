"""The web app in a real Chromium (Debian's, driven by Playwright) over a real server.

One desktop pass walks what a person does: sign in with a token, create a brain, drop a PDF on
the page, watch it become ready, search, open a citation at its passage, write and edit a note
(including an edit that loses a race), share the brain, reload, delete the file, sign out. A
phone-sized pass checks the layout. Every pass also asserts that the page logged no errors, broke
no CSP rule, and asked no host but the test server for anything.

Screenshots land in $LOCI_TEST_ARTIFACTS (default: test-artifacts/ at the repository root).
Chromium comes from `make browser` (apt); when it is missing these tests fail, never skip.
"""

from __future__ import annotations

import base64
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    BrowserContext,
    ConsoleMessage,
    Page,
    Request,
    Response,
    expect,
    sync_playwright,
)

from tests import fixtures
from tests.live_server import LiveServer

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = Path(os.environ.get("LOCI_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--disable-quic",
]
ARTIFACTS = Path(os.environ.get("LOCI_TEST_ARTIFACTS") or ROOT / "test-artifacts")
INDEXING_TIMEOUT_MS = 120_000
# Chromium logs every 4xx/5xx answer as a console error; those are checked as responses instead.
NETWORK_ERROR = re.compile(r"^Failed to load resource: the server responded with a status of \d+")

# Drag and drop as a person does it: a DataTransfer holding a real File, built in the page from
# the bytes, dispatched as dragenter → dragover → drop on the drop zone.
DROP_FILE = """
([selector, name, type, b64]) => {
  const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const transfer = new DataTransfer();
  transfer.items.add(new File([bytes], name, { type }));
  const zone = document.querySelector(selector);
  for (const kind of ["dragenter", "dragover", "drop"]) {
    zone.dispatchEvent(
      new DragEvent(kind, { bubbles: true, cancelable: true, dataTransfer: transfer }),
    );
  }
}
"""
REPORT_CSP_VIOLATIONS = """
document.addEventListener("securitypolicyviolation", (event) => {
  window.lociCspViolation(`${event.violatedDirective} blocked ${event.blockedURI || "inline"}`);
});
"""
HORIZONTAL_OVERFLOW = "document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not CHROMIUM.exists():
        pytest.fail(f"Chromium is not installed at {CHROMIUM}: run `make browser` (apt's chromium)")
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@dataclass
class Watch:
    """Everything a page did that a test should see: console errors, uncaught exceptions, CSP
    violations, requests to other hosts, and every HTTP error answer (method, path, status)."""

    origin: str
    errors: list[str] = field(default_factory=list)
    csp_violations: list[str] = field(default_factory=list)
    foreign_requests: list[str] = field(default_factory=list)
    error_responses: list[tuple[str, str, int]] = field(default_factory=list)

    def attach(self, context: BrowserContext) -> None:
        context.expose_function("lociCspViolation", self._csp_violation)
        context.add_init_script(REPORT_CSP_VIOLATIONS)
        context.on("console", self._console)
        context.on("weberror", lambda error: self.errors.append(f"uncaught: {error.error}"))
        context.on("request", self._request)
        context.on("response", self._response)

    def _csp_violation(self, description: str) -> None:
        self.csp_violations.append(description)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error" and not NETWORK_ERROR.match(message.text):
            self.errors.append(message.text)
        if "Content Security Policy" in message.text:
            self.csp_violations.append(message.text)

    def _request(self, request: Request) -> None:
        url = request.url
        if not (url.startswith(self.origin + "/") or url.startswith(("data:", "blob:"))):
            self.foreign_requests.append(url)

    def _response(self, response: Response) -> None:
        if response.status >= 400:
            path = response.url.removeprefix(self.origin)
            self.error_responses.append((response.request.method, path, response.status))

    def assert_clean(self, *expected_errors: tuple[str, str, int]) -> None:
        assert self.errors == [], self.errors
        assert self.csp_violations == [], self.csp_violations
        assert self.foreign_requests == [], self.foreign_requests
        assert sorted(self.error_responses) == sorted(expected_errors)


@dataclass
class Session:
    page: Page
    watch: Watch
    shots: Path

    def shot(self, name: str) -> None:
        self.page.screenshot(path=str(self.shots / f"{name}.png"), full_page=True)


def open_session(
    browser: Browser, server: LiveServer, name: str, **context_options: Any
) -> Session:
    shots = ARTIFACTS / name
    shots.mkdir(parents=True, exist_ok=True)
    context = browser.new_context(**context_options)
    context.set_default_timeout(15_000)
    watch = Watch(server.url)
    watch.attach(context)
    return Session(context.new_page(), watch, shots)


def sign_in(page: Page, token: str) -> None:
    expect(page.locator("#signin")).to_be_visible()
    page.fill("#signin-token", token)
    page.click("#signin-form button[type=submit]")
    expect(page.locator("#workspace")).to_be_visible()


def b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def file_row(page: Page, name: str) -> Any:
    return page.locator(".doc-row", has=page.locator(".doc-name", has_text=name))


def test_a_person_adds_searches_cites_notes_shares_and_deletes(
    browser: Browser, server: LiveServer
) -> None:
    session = open_session(browser, server, "desktop", viewport={"width": 1280, "height": 860})
    page, watch = session.page, session.watch
    try:
        page.goto(server.url)
        session.shot("01-sign-in")

        # A wrong token is refused in the page, not only in the console.
        page.fill("#signin-token", "loci_not-a-real-token")
        page.click("#signin-form button[type=submit]")
        expect(page.locator("#signin-error")).to_contain_text("not accepted")
        sign_in(page, server.owner_token)
        expect(page.locator("#user-name")).to_have_text("owner")

        # A first brain.
        page.click("#first-brain-button")
        page.fill("#brain-name", "research")
        page.select_option("#brain-visibility", "restricted")
        page.click("#brain-form button[type=submit]")
        expect(page.locator("#brain-select")).to_have_value("research")
        expect(page.locator("#panel-files")).to_be_visible()

        # A PDF dropped on the page uploads with a progress bar and turns ready in the list.
        page.evaluate(
            DROP_FILE,
            ["#drop-zone", "fruit-report.pdf", "application/pdf", b64(fixtures.two_page_pdf())],
        )
        upload = page.locator(".upload", has_text="fruit-report.pdf")
        expect(upload).to_have_attribute("data-state", "done")
        expect(upload.locator("progress")).to_have_js_property("value", 1)
        report = file_row(page, "fruit-report.pdf")
        expect(report).to_have_attribute("data-status", "ready", timeout=INDEXING_TIMEOUT_MS)
        expect(report).to_contain_text("Quarterly Fruit Report")
        expect(report).to_contain_text("2 passages")

        # Several files through the picker: each its own request; one refused at upload, one
        # that fails while indexing shows the reason and can be retried.
        page.set_input_files(
            "#file-input",
            [
                {"name": "empty.txt", "mimeType": "text/plain", "buffer": b""},
                {
                    "name": "broken.pdf",
                    "mimeType": "application/pdf",
                    "buffer": fixtures.truncated_pdf(),
                },
            ],
        )
        refused = page.locator(".upload", has_text="empty.txt")
        expect(refused).to_have_attribute("data-state", "failed")
        expect(refused).to_contain_text("empty.txt is empty")
        broken = file_row(page, "broken.pdf")
        expect(broken).to_have_attribute("data-status", "failed", timeout=INDEXING_TIMEOUT_MS)
        expect(broken.locator(".reason")).to_contain_text("truncated PDF")
        expect(broken.get_by_role("button", name="Retry broken.pdf")).to_be_enabled()
        session.shot("02-files")

        # A web page on a private address is refused, and the page says why.
        page.fill("#url-input", "http://127.0.0.1:9/secret")
        page.click("#url-form button[type=submit]")
        expect(page.locator("#files-error")).to_be_visible()
        expect(page.locator("#files-error")).not_to_be_empty()

        # Search with citations, then the citation opens the preview at its passage.
        page.click(".tab[data-panel=search]")
        page.fill("#search-input", "zebras graze near the river")
        page.click("#search-form button[type=submit]")
        first = page.locator(".hit").first
        expect(first.locator(".citation-name")).to_contain_text("fruit-report.pdf")
        expect(first.locator(".citation-where")).to_contain_text("page 2")
        expect(first.locator(".citation-where")).to_contain_text("lines 1–2")
        expect(first.locator(".snippet mark").first).to_have_text(re.compile("zebras", re.I))
        session.shot("03-search")

        first.locator(".citation").click()
        dialog = page.locator("#preview-dialog")
        expect(dialog).to_be_visible()
        cited = dialog.locator(".chunk.cited")
        expect(cited).to_have_count(1)
        expect(cited).to_contain_text("Zebras graze near the river")
        expect(cited).to_be_in_viewport()
        expect(cited).to_be_focused()
        session.shot("04-citation")
        dialog.get_by_role("button", name="Extracted text").click()
        expect(dialog.locator(".extracted")).to_contain_text("Alpha report opens on page one.")
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()

        # The same search across every brain, words only.
        page.check("#search-all")
        page.select_option("#search-mode", "text")
        page.click("#search-form button[type=submit]")
        expect(page.locator(".hit").first).to_contain_text("brain research")
        page.uncheck("#search-all")

        # A note: written in Markdown with tags and a colour, shown from the server's HTML.
        page.click(".tab[data-panel=notes]")
        page.click("#new-note-button")
        page.fill("#note-title", "Orchard plan")
        page.fill("#note-tags", "garden, plans")
        page.click("label[for=note-color-green]")
        page.fill("#note-text", "# Trees\n\nPlant **apples** first.\n\n<script>alert(1)</script>")
        page.click("#note-editor button[type=submit]")
        view = page.locator("#note-view")
        expect(view).to_be_visible()
        expect(view.locator("#note-view-body h1")).to_have_text("Trees")
        expect(view.locator("#note-view-body strong")).to_have_text("apples")
        expect(view.locator("#note-view-body script")).to_have_count(0)
        expect(view).to_have_class(re.compile(r"\bcolor-green\b"))

        # Someone else saves the note while it is open here: the edit is refused with a clear
        # message, the draft is kept, and saving again is a deliberate overwrite.
        page.click("#edit-note-button")
        with server.client() as api:
            (note,) = api.get("/brains/research/notes").json()
            changed = api.put(
                f"/brains/research/notes/{note['id']}",
                json={
                    "text": "# Trees\n\nPlant pears first.",
                    "title": "Orchard plan",
                    "tags": ["garden"],
                    "expected_hash": note["content_hash"],
                },
            )
            assert changed.status_code == 200
        page.fill("#note-text", "# Trees\n\nPlant **plums** first.")
        page.click("#note-editor button[type=submit]")
        conflict = page.locator("#note-conflict")
        expect(conflict).to_be_visible()
        expect(conflict).to_contain_text("Someone else changed this note")
        expect(conflict.locator("#note-conflict-body")).to_contain_text("Plant pears first.")
        expect(page.locator("#note-text")).to_have_value("# Trees\n\nPlant **plums** first.")
        session.shot("05-note-conflict")
        page.click("#note-editor button[type=submit]")
        expect(view.locator("#note-view-body strong")).to_have_text("plums")

        # Filtering by tag.
        page.locator("#note-view .back-to-notes").click()
        page.get_by_role("button", name="#garden").click()
        expect(page.locator(".note-card")).to_have_count(1)
        page.fill("#tag-filter", "nothing-has-this")
        page.click("#tag-filter-form button[type=submit]")
        expect(page.locator(".note-card")).to_have_count(0)
        expect(page.locator("#notes-empty")).to_be_visible()

        # Sharing: add a person as a viewer, then remove them.
        server.accounts.add_user("ana")
        page.click("#share-button")
        share = page.locator("#share-dialog")
        expect(share.locator(".member")).to_have_count(1)
        page.select_option("#member-user", "ana")
        page.select_option("#member-role", "viewer")
        share.get_by_role("button", name="Add", exact=True).click()
        ana = share.locator(".member", has_text="ana")
        expect(ana).to_contain_text("Viewer")
        session.shot("06-share")
        ana.get_by_role("button", name="Remove ana").click()
        page.click("#confirm-yes")
        expect(ana).to_have_count(0)
        share.get_by_role("button", name="Close").click()

        # A reload keeps the session (and its CSRF token: the delete below is a write).
        page.reload()
        expect(page.locator("#workspace")).to_be_visible()
        expect(page.locator("#brain-select")).to_have_value("research")
        page.click(".tab[data-panel=files]")
        report = file_row(page, "fruit-report.pdf")
        report.get_by_role("button", name="Delete fruit-report.pdf").click()
        expect(page.locator("#confirm-message")).to_contain_text("fruit-report.pdf")
        page.click("#confirm-yes")
        expect(report).to_have_count(0)
        with server.client() as api:
            names = [d["name"] for d in api.get("/brains/research/files").json()]
            assert "fruit-report.pdf" not in names and "broken.pdf" in names
        session.shot("07-after-delete")

        page.click("#signout-button")
        expect(page.locator("#signin")).to_be_visible()
        page.reload()
        expect(page.locator("#signin")).to_be_visible()

        watch.assert_clean(
            ("GET", "/api/v1/me", 401),  # first visit: not signed in yet
            ("POST", "/api/v1/session", 401),  # the wrong token
            ("POST", "/api/v1/brains/research/files", 400),  # the empty file
            ("POST", "/api/v1/brains/research/urls", 400),  # the private address
            ("PUT", f"/api/v1/brains/research/notes/{note['id']}", 409),  # the lost race
            ("GET", "/api/v1/me", 401),  # after signing out
        )
    finally:
        session.shot("desktop-last")
        page.context.close()


def test_phone_layout_fits_the_screen(browser: Browser, server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "pocket"}).status_code == 201
        long_name = "a-very-long-file-name-without-any-spaces-that-must-wrap-on-a-phone.md"
        body = (
            b"# Boiler\n\nThe gauge should read between one and two bar when the boiler is cold.\n"
        )
        uploaded = api.post("/brains/pocket/files", files={"files": (long_name, body)}).json()
        server.wait_ready(api, "pocket", uploaded["results"][0]["document"]["id"])
        api.post(
            "/brains/pocket/notes",
            json={"text": "Bleed the radiators in autumn.", "tags": ["home"]},
        )

    session = open_session(
        browser,
        server,
        "phone",
        viewport={"width": 390, "height": 844},
        device_scale_factor=2,
        is_mobile=True,
        has_touch=True,
    )
    page, watch = session.page, session.watch
    try:
        page.goto(server.url)
        assert page.evaluate(HORIZONTAL_OVERFLOW) <= 0
        session.shot("01-sign-in")
        sign_in(page, server.owner_token)

        def fits(name: str) -> None:
            assert page.evaluate(HORIZONTAL_OVERFLOW) <= 0, f"{name} scrolls sideways"
            for control in (
                "#brain-select",
                "#new-brain-button",
                "#share-button",
                "#signout-button",
                ".tab[data-panel=files]",
                ".tab[data-panel=ask]",
            ):
                box = page.locator(control).bounding_box()
                assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= 390, control
            session.shot(name)

        expect(file_row(page, long_name)).to_have_attribute("data-status", "ready")
        expect(page.locator("label[for=file-input]")).to_be_in_viewport()
        expect(page.locator("#url-input")).to_be_visible()
        fits("02-files")

        page.click(".tab[data-panel=notes]")
        expect(page.locator(".note-card")).to_have_count(1)
        expect(page.locator("#new-note-button")).to_be_visible()
        fits("03-notes")
        page.locator(".note-open").click()
        expect(page.locator("#note-view-body")).to_contain_text("Bleed the radiators")
        fits("04-note")

        page.click(".tab[data-panel=search]")
        page.fill("#search-input", "what should the boiler gauge read")
        page.click("#search-form button[type=submit]")
        expect(page.locator(".hit").first).to_contain_text(long_name)
        expect(page.locator("#search-mode")).to_be_visible()
        fits("05-search")
        page.locator(".hit .citation").first.click()
        cited = page.locator("#preview-dialog .chunk.cited")
        expect(cited).to_be_in_viewport()
        dialog_box = page.locator("#preview-dialog").bounding_box()
        assert dialog_box is not None and dialog_box["x"] + dialog_box["width"] <= 390
        fits("06-citation")
        page.keyboard.press("Escape")

        page.click(".tab[data-panel=ask]")
        expect(page.locator("#panel-ask")).to_contain_text("later release")
        expect(page.locator("#ask-input")).to_be_disabled()
        expect(page.locator("#panel-ask button")).to_be_disabled()
        fits("07-ask")

        watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        session.shot("phone-last")
        page.context.close()


def test_the_watch_catches_csp_violations(browser: Browser, server: LiveServer) -> None:
    """The checks above would pass vacuously if the watch saw nothing: make it see something."""
    session = open_session(browser, server, "watch")
    page, watch = session.page, session.watch
    try:
        page.goto(server.url)
        expect(page.locator("#signin")).to_be_visible()
        page.evaluate(
            """() => {
              const script = document.createElement("script");
              script.textContent = "window.inlineRan = true";
              document.body.append(script);
              const image = document.createElement("img");
              image.src = "http://192.0.2.1/pixel.png";
              document.body.append(image);
            }"""
        )
        page.wait_for_timeout(300)
        assert page.evaluate("window.inlineRan === undefined")
        assert any("script-src" in v for v in watch.csp_violations), watch.csp_violations
        assert any("img-src" in v for v in watch.csp_violations), watch.csp_violations
    finally:
        page.context.close()
