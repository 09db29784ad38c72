"""A document's versions in a real Chromium over a real server: opened from the Files list's row
menu, listed with dates in the browser's language and sizes, two compared (the lines added and
removed marked, a PDF saying it has no text diff), one downloaded, one restored after a
confirmation — the list then shows the replaced content as a version, and search finds the
restored text. A viewer gets no restore. axe-core finds nothing serious in the views.

Screenshots land in $LOCI_TEST_ARTIFACTS/versions/.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from loci.service import Loci
from tests.support import pdf_files
from tests.support.accessibility import violations
from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.web_app import INDEXING_TIMEOUT_MS, file_row, open_session, sign_in

FIRST = "# Piano\n\nThe piano lesson is on Tuesday at 5pm with Mrs Okafor.\nBring the green book.\n"
SECOND = "# Piano\n\nThe piano lesson is on Friday at 4pm with Mrs Okafor.\nBring the green book.\n"
# en-GB's medium date and short time: "4 Mar 2026, 14:05".
BRITISH = re.compile(r"^\d{1,2} [A-Z][a-z]{2,3} \d{4}, \d{2}:\d{2}$")


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def test_versions_are_compared_downloaded_and_restored_from_the_files_list(
    browser: Browser, server: LiveServer, loci: Loci, tmp_path: Path
) -> None:
    brain = loci.brain()
    lesson, scan = tmp_path / "lesson.md", tmp_path / "scan.pdf"
    lesson.write_text(FIRST)
    scan.write_bytes(pdf_files.make_pdf([pdf_files.text_lines(["The boiler was serviced."])]))
    for path in (lesson, scan):
        loci.library.add_file(brain, path)
    lesson.write_text(SECOND)
    scan.write_bytes(pdf_files.make_pdf([pdf_files.text_lines(["The boiler needs a new valve."])]))
    for path in (lesson, scan):
        loci.library.wait_for(brain, [loci.library.add_file(brain, path).document.id])

    session = open_session(
        browser,
        server,
        "versions",
        viewport={"width": 1280, "height": 900},
        locale="en-GB",
        timezone_id="Europe/London",
        accept_downloads=True,
    )
    page = session.page
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)

        # From the row's menu, by keyboard: the preview opens at its versions.
        menu_button = file_row(page, "lesson.md").get_by_role(
            "button", name="Actions for lesson.md"
        )
        menu_button.focus()
        page.keyboard.press("ArrowDown")
        page.keyboard.press("ArrowDown")
        expect(page.get_by_role("menuitem", name="Versions")).to_be_focused()
        page.keyboard.press("Enter")
        dialog = page.locator("#preview-dialog")
        expect(dialog.locator("#preview-show-versions")).to_have_attribute("aria-pressed", "true")
        versions = dialog.locator(".version")
        expect(versions.locator(".version-number")).to_have_text(
            ["Version 2 (current)", "Version 1"]
        )
        expect(versions.first.locator(".version-meta")).to_contain_text(f"{len(SECOND)} B · saved")
        expect(versions.nth(1).locator("time")).to_have_count(2)  # saved, replaced
        for moment in versions.nth(1).locator("time").all():
            expect(moment).to_have_text(BRITISH)

        # Compared: the changed line removed and added, each said in words too.
        dialog.get_by_role("button", name="Show changes").click()
        expect(dialog.locator(".diff-heading")).to_have_text("Changes from version 1 to version 2")
        expect(dialog.locator(".diff-heading")).to_be_focused()
        expect(dialog.locator(".diff-summary")).to_have_text("1 line added, 1 removed.")
        expect(dialog.locator("del.diff-removed")).to_have_text(
            "removed: The piano lesson is on Tuesday at 5pm with Mrs Okafor."
        )
        expect(dialog.locator("ins.diff-added")).to_have_text(
            "added: The piano lesson is on Friday at 4pm with Mrs Okafor."
        )
        expect(dialog.locator(".diff-same", has_text="Bring the green book.")).to_have_count(1)
        assert not violations(page), violations(page)
        session.shot("01-compared")

        # Version 1's exact bytes.
        old_menu = versions.nth(1).get_by_role("button", name="Actions for version 1")
        old_menu.click()
        with page.expect_download() as downloading:
            page.get_by_role("menuitem", name="Download").click()
        assert downloading.value.suggested_filename == "lesson.md"
        assert Path(downloading.value.path()).read_text() == FIRST

        # Restored, after the confirmation: the replaced content is version 2 now.
        old_menu.click()
        page.get_by_role("menuitem", name="Restore this version").click()
        expect(page.locator("#confirm-message")).to_contain_text("kept as version 2")
        page.click("#confirm-yes")
        expect(versions.locator(".version-number")).to_have_text(
            ["Version 3 (current)", "Version 2", "Version 1"]
        )
        expect(dialog.locator(".versions-heading")).to_be_focused()
        expect(dialog.locator(".versions-state")).to_have_text(
            "Indexed: search finds the current version's text.", timeout=INDEXING_TIMEOUT_MS
        )
        assert not violations(page), violations(page)
        session.shot("02-restored")

        # A PDF has no text to compare: the view says so, as the API does.
        page.keyboard.press("Escape")
        file_row(page, "scan.pdf").get_by_role("button", name="Actions for scan.pdf").click()
        page.get_by_role("menuitem", name="Open").click()
        dialog.get_by_role("button", name="Versions").click()
        dialog.get_by_role("button", name="Show changes").click()
        expect(dialog.locator(".diff-none")).to_have_text(
            "A PDF file has no text diff; download the two versions to compare them."
        )
        session.shot("03-pdf")
        page.keyboard.press("Escape")

        # Search finds the restored text, and not the one it replaced.
        page.click(".tab[data-panel=search]")
        page.select_option("#search-mode", "text")
        page.fill("#search-input", "piano lesson Tuesday")
        page.click("#search-form button[type=submit]")
        hit = page.locator(".hit").first
        expect(hit.locator(".citation-name")).to_contain_text("lesson.md")
        expect(hit.locator(".snippet")).to_contain_text("Tuesday")
        expect(page.locator(".hit .snippet", has_text="Friday")).to_have_count(0)
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        session.shot("last")
        page.context.close()

    # A viewer sees the versions and compares them, but is offered no restore.
    with server.client() as api:
        _, ana = server.accounts.add_user("ana")
        assert api.put(f"/brains/{brain.name}/members/ana", json={"role": "viewer"}).is_success
    viewer = open_session(
        browser, server, "versions-viewer", viewport={"width": 1280, "height": 900}
    )
    try:
        viewer.page.goto(server.url)
        sign_in(viewer.page, ana.secret)
        file_row(viewer.page, "lesson.md").get_by_role(
            "button", name="Actions for lesson.md"
        ).click()
        viewer.page.get_by_role("menuitem", name="Versions").click()
        viewer.page.get_by_role("button", name="Actions for version 1").click()
        menu = viewer.page.get_by_role("menu", name="Actions for version 1")
        expect(menu.get_by_role("menuitem")).to_have_text(["Compare with current", "Download"])
        viewer.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        viewer.page.context.close()
