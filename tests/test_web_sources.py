"""The Sources panel in a real Chromium over a real server: an admin follows a folder on the
server (a path outside the allowed roots is refused with the reason), syncs it, and sees each
folder with its file count, last sync and the files it could not take with their reasons; the
folder's files that failed to index are one click away in the Files list.

Screenshots land in $LOCI_TEST_ARTIFACTS/sources/.
"""

from __future__ import annotations

import io
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from loci.embed.base import Embedder
from tests.browser import chromium
from tests.conftest import make_service
from tests.live_server import LiveServer
from tests.test_web_app import INDEXING_TIMEOUT_MS, open_session, sign_in


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def test_an_admin_follows_a_folder_syncs_it_and_sees_what_failed(
    browser: Browser, tmp_path: Path, embedder: Embedder
) -> None:
    allowed = tmp_path / "shared"
    handbook = allowed / "handbook"
    handbook.mkdir(parents=True)
    (handbook / "boiler.md").write_text("# Boiler\n\nOne and a half bar when cold.\n")
    (handbook / "scan.txt").write_text("x" * 20_000)  # over this server's 10 KB cap
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("a.txt", "not an office file")
    (handbook / "photos.zip").write_bytes(archive.getvalue())  # stored, fails to index
    outside = tmp_path / "private"
    outside.mkdir()

    loci = make_service(tmp_path / "home", embedder, max_file_mb=0.01, job_retry_base_s=0.01)
    server = LiveServer(loci, sources_allowed_roots=(allowed,)).start()
    with server.client() as api:
        assert api.post("/brains", json={"name": "office"}).status_code == 201
    session = open_session(browser, server, "sources", viewport={"width": 1280, "height": 1000})
    page = session.page
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)
        sources = page.locator("#sources")
        expect(sources).to_be_visible()
        expect(page.locator("#sources-empty")).to_be_visible()
        expect(page.locator("#sync-button")).to_be_disabled()

        # A folder outside what the server allows is refused, with the reason.
        page.fill("#source-path", str(outside))
        page.get_by_role("button", name="Follow").click()
        refusal = page.locator("#sources-error")
        expect(refusal).to_contain_text("not inside a folder this server allows")
        page.fill("#source-path", str(handbook))
        page.get_by_role("button", name="Follow").click()
        folder = page.locator(".source")
        expect(folder).to_have_count(1)
        expect(folder.locator(".source-path")).to_have_text(str(handbook.resolve()))
        expect(folder.locator(".source-state")).to_have_text("Not synced yet.")

        page.get_by_role("button", name="Sync now").click()
        expect(page.locator("#sync-result")).to_have_text("Synced: 2 added, 1 failed.")
        expect(folder.locator(".source-state")).to_contain_text("3 files · last synced")
        failures = folder.locator(".source-failures")
        expect(failures.locator("summary")).to_have_text("1 file could not be taken")
        failures.locator("summary").click()
        expect(failures.locator("li")).to_contain_text("scan.txt")
        expect(failures.locator(".reason")).to_contain_text("limit is")
        session.shot("01-synced")

        # The zip was taken but no parser reads it: the Files list shows it, failed.
        photos = page.locator(".doc-row", has=page.locator(".doc-name", has_text="photos.zip"))
        expect(photos).to_have_attribute("data-status", "failed", timeout=INDEXING_TIMEOUT_MS)
        folder.get_by_role("button", name="Show its files that failed to index").click()
        expect(page.locator("#files-status")).to_have_value("failed")
        expect(page.locator(".doc-row")).to_have_count(1)
        expect(photos.locator(".doc-help")).to_contain_text("Save it as PDF")
        session.shot("02-failed-files")
        session.watch.assert_clean(
            ("GET", "/api/v1/me", 401),
            ("POST", "/api/v1/brains/office/folders", 403),  # the folder outside
        )
    finally:
        page.context.close()
        server.stop()
        loci.store.close()
