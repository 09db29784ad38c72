"""The Files panel in a real Chromium over a real server: each upload followed to ready or failed
with what to do, and the list a person works with every day — newest first, sorted, filtered by
words, type and status, a page at a time, dates in the browser's language, same titles told
apart, and a row's actions in a keyboard-usable menu.

Screenshots land in $LOCI_TEST_ARTIFACTS/files-* (default: test-artifacts/ at the repository root).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, FilePayload, Locator, Page, Route, expect

from loci.service import Loci
from tests.support import office_files, pdf_files
from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.office_files import a_zip
from tests.support.web_app import INDEXING_TIMEOUT_MS, open_session, sign_in

BRAIN = "desk"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def upload_card(page: Page, name: str) -> Locator:
    return page.locator(".upload", has=page.locator(".doc-name", has_text=name))


def file_row(page: Page, name: str) -> Locator:
    return page.locator(".doc-row", has=page.locator(".doc-name", has_text=name))


def test_each_upload_is_followed_to_ready_or_failed_with_what_to_do(
    browser: Browser, loci: Loci
) -> None:
    # No worker in the server: the test runs it when the page has shown the indexing steps.
    server = LiveServer(loci, run_worker=False).start()
    with server.client() as api:
        assert api.post("/brains", json={"name": BRAIN}).status_code == 201
    session = open_session(
        browser, server, "files-uploads", viewport={"width": 1280, "height": 900}
    )
    page = session.page

    # The indexing steps the server reports (`progress`), on the way to the page: this server
    # has no worker running, so each document stays at the step the test chose.
    steps = {"report.pdf": {"stage": "ocr", "done": 3, "total": 60}}

    def with_progress(route: Route) -> None:
        response = route.fetch()
        body = response.json()
        if isinstance(body, dict) and body.get("name") in steps and body["status"] == "processing":
            body["progress"] = steps[body["name"]]
        route.fulfill(response=response, body=json.dumps(body))

    try:
        page.route(re.compile(r"/api/v1/brains/desk/files/\d+$"), with_progress)
        page.goto(server.url)
        sign_in(page, server.owner_token)
        expect(page.locator("#panel-files")).to_be_visible()
        expect(page.locator("#files-empty-text")).to_have_text(
            "Nothing in this brain yet: add files or a web page above."
        )
        page.set_input_files(
            "#file-input",
            [
                FilePayload(
                    name="report.pdf", mimeType="application/pdf", buffer=pdf_files.two_page_pdf()
                ),
                FilePayload(name="holiday.zip", mimeType="application/zip", buffer=a_zip()),
                FilePayload(name="empty.txt", mimeType="text/plain", buffer=b""),
            ],
        )
        report = upload_card(page, "report.pdf")
        expect(report.locator(".upload-state")).to_have_text(
            "Reading text in images (OCR): page 3 of 60"
        )
        expect(report.locator("progress")).to_have_js_property("value", 0.05)
        holiday = upload_card(page, "holiday.zip")
        expect(holiday.locator(".upload-state")).to_have_text("Indexing…")
        refused = upload_card(page, "empty.txt")
        expect(refused).to_have_attribute("data-state", "failed")
        expect(refused.locator(".upload-state")).to_contain_text("empty.txt is empty")
        steps["report.pdf"] = {"stage": "embed", "done": 1, "total": 2}
        expect(report.locator(".upload-state")).to_have_text("Indexing passages 1 of 2")
        session.shot("01-indexing")

        # The worker runs: each card ends in its own state.
        with server.client() as api:
            ids = [d["id"] for d in api.get(f"/brains/{BRAIN}/files").json()]
        loci.library.worker().drain(ids, lambda: loci.store.pending_jobs() == 0)
        expect(report).to_have_attribute("data-state", "ready", timeout=INDEXING_TIMEOUT_MS)
        expect(report.locator(".upload-state")).to_have_text("Ready · 2 passages")
        expect(holiday).to_have_attribute("data-state", "failed")
        expect(holiday.locator(".upload-state")).to_contain_text("no parser for this type")
        expect(holiday.locator(".upload-help")).to_contain_text("Save it as PDF")
        # Trying again cannot make a zip readable: no Retry, here or in the list.
        expect(holiday.get_by_role("button", name=re.compile("Retry"))).to_have_count(0)
        row = file_row(page, "holiday.zip")
        expect(row).to_have_attribute("data-status", "failed")
        expect(row.locator(".doc-help")).to_contain_text("Save it as PDF")
        expect(row.get_by_role("button", name="Retry holiday.zip")).to_be_hidden()
        session.shot("02-settled")

        # The card opens what it added.
        report.get_by_role("button", name="Open report.pdf").click()
        expect(page.locator("#preview-dialog")).to_be_visible()
        page.keyboard.press("Escape")

        # A failure a retry can fix (it gave up after its retries) offers Retry, which works.
        (report_id,) = [
            d.id for d in loci.library.documents(loci.brain(BRAIN)) if d.name == "report.pdf"
        ]
        loci.store.fail_document(report_id, "the model server did not answer (after 5 attempts)")
        page.select_option("#files-status", "failed")
        flaky = file_row(page, "report.pdf")
        expect(flaky.locator(".reason")).to_have_text(
            "the model server did not answer (after 5 attempts)"
        )
        expect(flaky.locator(".doc-help")).to_contain_text("may be temporary")
        # Retried from the whole list: under the "failed" filter the row leaves as it is retried.
        page.select_option("#files-status", "")
        flaky = file_row(page, "report.pdf")
        expect(flaky).to_have_attribute("data-status", "failed")
        flaky.get_by_role("button", name="Retry report.pdf").click()
        expect(flaky).to_have_attribute("data-status", "processing")
        loci.library.worker().drain([report_id], lambda: loci.store.pending_jobs() == 0)
        expect(flaky).to_have_attribute("data-status", "ready", timeout=INDEXING_TIMEOUT_MS)
        session.shot("03-retried")
        session.watch.assert_clean(
            ("GET", "/api/v1/me", 401),
            ("POST", f"/api/v1/brains/{BRAIN}/files", 400),  # the empty file
        )
    finally:
        page.context.close()
        server.stop()


def test_the_list_sorts_filters_pages_and_tells_same_titles_apart(
    browser: Browser, server: LiveServer, tmp_path: Path
) -> None:
    brain = server.loci.brain(BRAIN)
    # Two files of one title from two folders, a Word file, a note and 52 small text files.
    for folder in ("2025", "2026"):
        (tmp_path / folder).mkdir()
        budget = tmp_path / folder / "budget.md"
        budget.write_text(f"# Budget\n\nThe budget for {folder} is tight.\n")
        server.loci.library.add_file(brain, budget)
    with server.client() as api:
        api.post(
            f"/brains/{BRAIN}/files",
            files=[("files", (f"log-{n:02}.txt", f"entry {n}".encode())) for n in range(52)],
        )
        word = office_files.docx_with_structure()
        api.post(f"/brains/{BRAIN}/files", files={"files": ("plan.docx", word)})
        api.post(f"/brains/{BRAIN}/notes", json={"text": "Call the plumber on Monday."})
        for doc in api.get(f"/brains/{BRAIN}/files").json():
            server.wait_ready(api, BRAIN, doc["id"])

    session = open_session(
        browser,
        server,
        "files-list",
        viewport={"width": 1280, "height": 900},
        locale="de-DE",
        timezone_id="Europe/Berlin",
    )
    page = session.page
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)
        rows = page.locator(".doc-row")
        # Newest first, 50 at a time, with the total.
        expect(rows).to_have_count(50)
        expect(rows.first).to_contain_text("call-the-plumber-on-monday.md")
        expect(page.locator("#files-summary")).to_have_text("Showing 50 of 56.")
        # Dates in the browser's language: German day.month.year, 24-hour clock.
        german = re.compile(r"^\d{2}\.\d{2}\.\d{4}, \d{2}:\d{2}$")
        expect(rows.first.locator("time")).to_have_text(german)
        page.get_by_role("button", name="Show 6 more").click()
        expect(rows).to_have_count(56)
        expect(page.locator("#files-more")).to_be_hidden()

        # The same title twice: each says where it came from.
        budgets = page.locator(".doc-row", has_text="Budget (budget.md)")
        expect(budgets).to_have_count(2)
        expect(budgets.locator(".doc-origin")).to_have_text(
            [re.compile(r"from .*/2026/budget\.md$"), re.compile(r"from .*/2025/budget\.md$")]
        )
        expect(file_row(page, "plan.docx").locator(".doc-origin")).to_be_hidden()

        # Sorted by name; filtered by type, by words, and both to nothing.
        page.select_option("#files-sort", "name-asc")
        expect(rows.first.locator(".doc-name")).to_have_text("Budget (budget.md)")
        page.select_option("#files-format", "word")
        expect(rows).to_have_count(1)
        expect(rows.first).to_have_attribute("data-format", "word")
        expect(rows.first.locator(".badge")).to_have_text("Word")
        page.select_option("#files-format", "")
        page.fill("#files-filter", "log-4")
        expect(rows).to_have_count(10)  # log-40 … log-49
        expect(page.locator("#files-summary")).to_have_text("10 documents match.")
        page.select_option("#files-format", "pdf")
        expect(rows).to_have_count(0)
        expect(page.locator("#files-empty-text")).to_have_text("No documents match this filter.")
        session.shot("01-nothing-matches")
        page.get_by_role("button", name="Clear the filter").click()
        expect(page.locator("#files-filter")).to_be_focused()
        expect(rows).to_have_count(50)

        # A row's actions, by keyboard: the menu opens on the first action, Escape closes it.
        page.fill("#files-filter", "plan")
        expect(rows).to_have_count(1)
        plan = file_row(page, "plan.docx")
        menu_button = plan.get_by_role("button", name="Actions for plan.docx")
        menu_button.focus()
        page.keyboard.press("ArrowDown")
        menu = page.get_by_role("menu", name="Actions for plan.docx")
        expect(menu).to_be_visible()
        expect(menu.get_by_role("menuitem", name="Open")).to_be_focused()
        page.keyboard.press("ArrowUp")
        expect(menu.get_by_role("menuitem", name="Delete")).to_be_focused()
        session.shot("02-menu")
        page.keyboard.press("Escape")
        expect(menu).to_be_hidden()
        expect(menu_button).to_be_focused()
        # … and Delete from it, after the confirmation.
        menu_button.click()
        menu.get_by_role("menuitem", name="Delete").click()
        page.click("#confirm-yes")
        expect(file_row(page, "plan.docx")).to_have_count(0)
        with server.client() as api:
            names = [d["name"] for d in api.get(f"/brains/{BRAIN}/files").json()]
        assert "plan.docx" not in names and len(names) == 55

        # The view is kept across a reload in this tab.
        page.reload()
        expect(page.locator("#files-sort")).to_have_value("name-asc")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        session.shot("last")
        page.context.close()
