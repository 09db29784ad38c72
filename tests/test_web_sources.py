"""The Sources panel in a real Chromium over a real server: an admin follows a folder on the
server (a path outside the allowed roots is refused with the reason), syncs it, and sees each
folder with its file count, last sync and the files it could not take with their reasons; the
folder's files that failed to index are one click away in the Files list. A vault kept as pages
shows its mode, whether it is watched and its conflicts, each settled from the panel by keeping
one side; its owner stops following it and chooses that its pages stay.

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
from loci.service import Loci
from tests.support.accessibility import violations
from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.services import make_service
from tests.support.web_app import INDEXING_TIMEOUT_MS, open_session, sign_in


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


BEN = "---\nid: ben\nkind: page\ntype: person\ntitle: Ben Okafor\n---\n\nBen bakes sourdough.\n"
GARDEN = "# The Garden\n\nRun by [[Ben Okafor|Ben]]. Tomatoes by the wall.\n"


def test_a_vaults_conflicts_are_settled_and_its_owner_stops_following_it(
    browser: Browser, server: LiveServer, loci: Loci, tmp_path: Path
) -> None:
    brain = loci.brain()
    vault = tmp_path / "vault"
    (vault / "people").mkdir(parents=True)
    ben_file, garden_file = vault / "people" / "ben.md", vault / "Garden.md"
    ben_file.write_text(BEN)
    garden_file.write_text(GARDEN)
    loci.sources.add(brain, vault, mode="pages")
    (synced,) = loci.sources.sync(brain).sources
    loci.library.wait_for(brain, synced.queued)
    # Both pages changed in the folder and in Loci: two conflicts, nothing overwritten.
    ben_file.write_text(ben_file.read_text().replace("sourdough", "bagels"))
    garden_file.write_text(garden_file.read_text().replace("Tomatoes", "Beans"))
    loci.graph.rewrite(brain, "ben", "Ben bakes croissants.", actor="web")
    loci.graph.rewrite(brain, "garden", "Run by [[page:ben|Ben]]. Leeks.", actor="web")
    assert len(loci.sources.sync(brain).sources[0].conflicts) == 2

    session = open_session(
        browser, server, "sources-pages", viewport={"width": 1280, "height": 900}
    )
    page = session.page
    try:
        page.goto(server.url)
        sign_in(page, server.owner_token)
        folder = page.locator(".source")
        expect(folder.locator(".source-mode")).to_have_text(
            "Kept as brain pages: edits made in Loci are written to its files"
            " · not watched now: Sync now brings its changes in"
        )
        conflicts = folder.locator(".source-conflicts")
        expect(conflicts.locator("summary")).to_have_text(
            "2 files changed both in the folder and in Loci"
        )
        expect(conflicts.locator(".source-file")).to_have_text(["Garden.md", "people/ben.md"])
        assert not violations(page), violations(page)
        session.shot("01-conflicts")

        # Ben: the file's side, after the confirmation (Loci's text stays in the page's history).
        page.get_by_role("button", name="Keep the file's text: people/ben.md").click()
        expect(page.locator("#confirm-message")).to_contain_text("stays in its history")
        page.click("#confirm-yes")
        expect(conflicts.locator(".source-file")).to_have_text(["Garden.md"])
        expect(folder.locator(".source-path")).to_be_focused()
        assert "bagels" in loci.graph.get(brain, "ben").content
        # The garden, by keyboard: Loci's side is written to the file.
        page.get_by_role("button", name="Keep Loci's text: Garden.md").focus()
        page.keyboard.press("Enter")
        expect(page.locator("#confirm-yes")).to_have_text("Keep Loci's text")
        page.locator("#confirm-yes").focus()
        page.keyboard.press("Enter")
        expect(folder.locator(".source-conflicts")).to_have_count(0)
        assert "Leeks" in garden_file.read_text() and "Beans" not in garden_file.read_text()

        # Stop following, keeping its pages: the dialog asks, Cancel first.
        page.get_by_role("button", name=f"Stop following {vault}").click()
        dialog = page.locator("#unfollow-dialog")
        expect(dialog).to_be_visible()
        expect(page.locator("#unfollow-cancel")).to_be_focused()
        expect(page.locator("#unfollow-remove")).to_have_text("Stop following and remove its pages")
        assert not violations(page), violations(page)
        session.shot("02-stop-following")
        page.click("#unfollow-keep")
        expect(page.locator("#sources-empty")).to_be_visible()
        expect(page.locator("#sources-heading")).to_be_focused()
        assert not loci.sources.list(brain)
        assert "bagels" in loci.graph.get(brain, "ben").content  # the pages stay
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        session.shot("last")
        page.context.close()
