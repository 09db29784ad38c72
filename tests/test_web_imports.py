"""Import from another tool, in the web app's Files panel, in a real Chromium over a real
server: an editor picks "browser bookmarks" and the export file, checks first (nothing fetched,
nothing stored, what would be added listed), imports (the pages fetched from a loopback site
appear in the list with their titles; the dead link is listed with its reason), and a second
import leaves everything unchanged. A viewer of the brain is not offered the import.

Screenshots land in $LOCI_TEST_ARTIFACTS/imports/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from loci.embed.base import Embedder
from tests.support.accessibility import violations
from tests.support.bookmark_files import chrome_bookmarks, site, write
from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.loopback import Loopback
from tests.support.services import make_service
from tests.support.web_app import INDEXING_TIMEOUT_MS, file_row, open_session, sign_in


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def pages() -> Iterator[Loopback]:
    with site() as served:
        yield served


def test_an_editor_checks_then_imports_bookmarks_and_a_viewer_cannot(
    browser: Browser, tmp_path: Path, embedder: Embedder, pages: Loopback
) -> None:
    loci = make_service(tmp_path / "home", embedder, fetch_allowed_networks=["127.0.0.1/32"])
    server = LiveServer(loci).start()
    _, vera = server.accounts.add_user("vera")
    with server.client() as api:
        assert api.post("/brains", json={"name": "reading"}).status_code == 201
        role = api.put("/brains/reading/members/vera", json={"role": "viewer"})
        assert role.status_code == 200, role.text
    export = write(tmp_path, chrome_bookmarks(pages.url()))
    session = open_session(browser, server, "imports", viewport={"width": 1280, "height": 1000})
    page = session.page
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)
        page.get_by_text("Import from another tool").click()
        kind = page.get_by_label("Exported from", exact=True)
        expect(kind.locator("option", has_text="browser bookmarks")).to_have_count(1)
        kind.select_option("bookmarks")
        page.get_by_label("Export file", exact=True).set_input_files(str(export))
        page.get_by_label("Tags (optional, comma-separated)").fill("from-chrome")

        page.get_by_role("button", name="Check first").click()
        heading = page.locator("#import-report-heading")
        expect(heading).to_have_text(
            "Check: 6 items would be added, 2 items skipped. Nothing was imported yet."
        )
        items = page.locator(".import-item")
        expect(items.filter(has_text="Sourdough & starters")).to_contain_text("would be added")
        expect(items.filter(has_text="Show title")).to_contain_text("javascript: link")
        assert pages.connections == []
        assert loci.library.documents(loci.store.get_brain("reading")) == []
        assert violations(page) == []
        session.shot("checked")

        page.get_by_role("button", name="Import", exact=True).click()
        expect(heading).to_have_text(
            "Imported: 3 items added, 3 items failed, 2 items skipped.",
            timeout=INDEXING_TIMEOUT_MS,
        )
        gone = items.filter(has_text="A page that is gone")
        expect(gone).to_contain_text("failed")
        expect(gone.locator(".reason")).to_have_text(
            f"{pages.url('/gone')} answered HTTP 404 Not Found"
        )
        expect(items.filter(has_text="Router admin").locator(".reason")).to_contain_text(
            "10.11.12.13"
        )
        # The pages are in the brain, named by their own titles once read.
        sourdough = file_row(page, "Sourdough starter guide")
        expect(sourdough).to_have_count(1, timeout=INDEXING_TIMEOUT_MS)
        expect(file_row(page, "Ciabatta at home")).to_have_count(1)
        expect(file_row(page, "Tide notes")).to_have_count(1)
        session.shot("imported")

        page.get_by_role("button", name="Import", exact=True).click()
        expect(heading).to_have_text(
            "Imported: 0 items added, 3 items unchanged, 3 items failed, 2 items skipped.",
            timeout=INDEXING_TIMEOUT_MS,
        )
        documents = loci.library.documents(loci.store.get_brain("reading"))
        assert len(documents) == 3 and all("from-chrome" in d.tags for d in documents)
        session.watch.assert_clean(("GET", "/api/v1/me", 401))  # before signing in

        viewer = open_session(browser, server, "imports-viewer")
        try:
            viewer.page.goto(server.url)
            sign_in(viewer.page, vera.secret)
            expect(viewer.page.locator("#files-heading")).to_be_visible()
            expect(file_row(viewer.page, "Tide notes")).to_have_count(1)
            expect(viewer.page.locator("#import-box")).to_be_hidden()
            viewer.watch.assert_clean(("GET", "/api/v1/me", 401))
        finally:
            viewer.page.context.close()
    finally:
        page.context.close()
        server.stop()
        loci.store.close()
