"""Accessibility of the web app in a real Chromium over a real server: axe-core finds no serious
or critical violation (WCAG 2.2 A and AA, contrast included) in any view — light and dark, desktop
and phone — and a person can do the core tasks with the keyboard alone: sign in, move between
sections, search, open a citation and come back where they were.

Screenshots land in $LOCI_TEST_ARTIFACTS/a11y-*/.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support import pdf_files
from tests.support.accessibility import violations
from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.web_app import Session, open_session, sign_in

BRAIN = "home"
DOCS = f"/brains/{BRAIN}/graph/documents"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def a_zip() -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr("a.txt", "not an office file")
    return buffer.getvalue()


def fill_brain(server: LiveServer, tmp_path: Path) -> None:
    """Something in every view: a PDF, a failed file, a note with an earlier version, pages with
    a link, a conversation, a followed folder."""
    with server.client() as api:
        assert api.post("/brains", json={"name": BRAIN}).status_code == 201
        for name, data in (("report.pdf", pdf_files.two_page_pdf()), ("photos.zip", a_zip())):
            done = api.post(f"/brains/{BRAIN}/files", files={"files": (name, data)}).json()
            server.wait_ready(api, BRAIN, done["results"][0]["document"]["id"])
        note = api.post(
            f"/brains/{BRAIN}/notes", json={"text": "Bleed the radiators\n\nIn autumn."}
        ).json()["document"]
        rewritten = api.put(  # an earlier version, for the Versions view
            f"/brains/{BRAIN}/notes/{note['id']}",
            json={
                "text": "Bleed the radiators\n\nIn October.",
                "expected_hash": note["content_hash"],
            },
        )
        assert rewritten.status_code == 200, rewritten.text
        api.post(DOCS, json={"type": "person", "title": "Ana López", "text": "Grows apples."})
        api.post(
            DOCS,
            json={"type": "project", "title": "Orchard", "text": "Led by [[page:ana-lopez|Ana]]."},
        )
        api.post(f"/brains/{BRAIN}/answer", json={"question": "Where do zebras graze?"})
    folder = tmp_path / "shared" / "handbook"
    folder.mkdir(parents=True)
    (folder / "a.md").write_text("# A\n\nA page.\n")
    server.loci.sources.add(server.loci.brain(BRAIN), folder)
    server.loci.sources.sync(server.loci.brain(BRAIN))


def audit(page: Page, found: dict[str, list[str]], view: str) -> None:
    problems = violations(page)
    if problems:
        found[view] = problems


def views(page: Page) -> Iterator[str]:
    """Open each view of the app in turn, and yield its name once it shows."""
    expect(page.locator(".doc-row").first).to_be_visible()
    yield "files"
    page.locator(".doc-row").first.locator(".menu-button").click()
    expect(page.locator(".menu:not([hidden])")).to_be_visible()
    yield "files menu"
    page.keyboard.press("Escape")
    note = page.locator(".doc-row", has_text="Bleed the radiators")
    note.locator(".menu-button").click()
    page.get_by_role("menuitem", name="Versions").click()
    page.get_by_role("button", name="Show changes").click()
    expect(page.locator(".diff-added")).to_contain_text("In October.")
    yield "versions"
    page.keyboard.press("Escape")
    page.click(".tab[data-panel=notes]")
    expect(page.locator(".note-card")).to_have_count(1)
    yield "notes"
    page.locator(".note-open").click()
    expect(page.locator("#note-view")).to_be_visible()
    yield "note"
    page.click("#edit-note-button")
    expect(page.locator("#note-editor")).to_be_visible()
    yield "note editor"
    page.click("#cancel-note-button")
    page.click(".tab[data-panel=brain]")
    expect(page.locator(".graph-item").first).to_be_visible()
    yield "brain"
    page.click("#graph-show-graph")
    expect(page.locator("#graph-canvas")).to_have_attribute("data-nodes", "2")
    yield "graph"
    page.click("#graph-show-all")
    page.get_by_role("link", name="Orchard").click()
    expect(page.locator("#graph-title")).to_have_text("Orchard")
    page.locator("#graph-organize summary").click()
    yield "page"
    page.click("#new-page-button")
    expect(page.locator("#page-dialog")).to_be_visible()
    yield "new page"
    page.keyboard.press("Escape")
    page.click(".tab[data-panel=search]")
    page.fill("#search-input", "zebras graze")
    page.click("#search-form button[type=submit]")
    expect(page.locator(".hit").first).to_be_visible()
    yield "search"
    page.locator(".hit .citation").first.click()
    expect(page.locator(".page-frame")).to_have_attribute("data-loaded", "true")
    yield "source"
    page.keyboard.press("Escape")
    page.click(".tab[data-panel=ask]")
    page.locator(".conversation-open").first.click()
    expect(page.locator(".msg-assistant")).to_have_count(1)
    yield "ask"
    page.click("#ask-show-study")
    expect(page.locator("#study-form")).to_be_visible()
    yield "study"
    page.click("#ask-show-chat")
    if page.locator("#account-button").is_visible():
        page.click("#account-button")
    else:  # a phone: in the header's menu
        page.get_by_role("button", name="Menu").click()
        page.get_by_role("menuitem", name="Account").click()
    expect(page.locator("#token-list")).to_be_attached()
    expect(page.locator("#account-dialog")).to_be_visible()
    yield "account"
    page.keyboard.press("Escape")


def walk(session: Session, server: LiveServer, found: dict[str, list[str]], prefix: str) -> None:
    page = session.page
    page.goto(server.url)
    expect(page.locator("#signin")).to_be_visible()
    audit(page, found, f"{prefix} sign-in")
    sign_in(page, server.owner_token)
    for name in views(page):
        audit(page, found, f"{prefix} {name}")
        session.shot(name.replace(" ", "-"))


def report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{view}:\n  " + "\n  ".join(lines) for view, lines in found.items())


def test_axe_finds_nothing_serious_in_any_view(
    browser: Browser, server: LiveServer, tmp_path: Path
) -> None:
    fill_brain(server, tmp_path)
    found: dict[str, list[str]] = {}
    for prefix, options in (
        ("light", {"viewport": {"width": 1280, "height": 900}}),
        ("dark", {"viewport": {"width": 1280, "height": 900}, "color_scheme": "dark"}),
        (
            "phone",
            {
                "viewport": {"width": 390, "height": 844},
                "is_mobile": True,
                "has_touch": True,
                "device_scale_factor": 2,
            },
        ),
    ):
        session = open_session(browser, server, f"a11y-{prefix}", **options)
        try:
            walk(session, server, found, prefix)
            session.watch.assert_clean(("GET", "/api/v1/me", 401))
        finally:
            session.page.context.close()
    assert not found, report(found)


def test_the_core_tasks_work_with_the_keyboard_alone(browser: Browser, server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": BRAIN}).status_code == 201
        done = api.post(
            f"/brains/{BRAIN}/files", files={"files": ("report.pdf", pdf_files.two_page_pdf())}
        ).json()
        server.wait_ready(api, BRAIN, done["results"][0]["document"]["id"])
    session = open_session(
        browser, server, "a11y-keyboard", viewport={"width": 1280, "height": 900}
    )
    page = session.page
    keys = page.keyboard

    def focused() -> str:
        return str(
            page.evaluate("document.activeElement.id || document.activeElement.textContent.trim()")
        )

    try:
        page.goto(server.url)
        expect(page.locator("#signin-name")).to_be_focused()  # the first field is ready
        # The token form: Tab through the password form's fields and button to it.
        for _ in range(3):
            keys.press("Tab")
        assert focused() == "signin-token", focused()
        keys.type(server.owner_token)
        keys.press("Enter")
        expect(page.locator("#workspace")).to_be_visible()

        # The skip link is the first stop and moves the focus to the content.
        page.reload()
        expect(page.locator("#workspace")).to_be_visible()
        keys.press("Tab")
        expect(page.locator(".skip-link")).to_be_focused()
        keys.press("Enter")
        expect(page.locator("#main")).to_be_focused()

        # The sections are buttons in order; the Search one opens by Enter.
        page.locator(".tab[data-panel=files]").focus()
        for _ in range(3):
            keys.press("Tab")
        expect(page.locator(".tab[data-panel=search]")).to_be_focused()
        keys.press("Enter")
        expect(page.locator("#panel-search")).to_be_visible()
        page.locator("#search-input").focus()
        keys.type("zebras graze near the river")
        keys.press("Enter")
        hit = page.locator(".hit .citation").first
        expect(hit).to_be_visible()

        # A citation opens by Enter at its passage; Escape closes it and the focus comes back.
        hit.focus()
        keys.press("Enter")
        expect(page.locator(".page-frame")).to_be_focused()
        keys.press("Escape")
        expect(page.locator("#preview-dialog")).to_be_hidden()
        expect(hit).to_be_focused()
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        session.shot("last")
        page.context.close()
