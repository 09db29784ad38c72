"""Reading in a real Chromium over a real server: a cited recording opens at the moment the
passage was said, and a conversation had on the command line is in the web app's list, marked as
such, and opens with its cited answer.

Screenshots land in $LOCI_TEST_ARTIFACTS/reading/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect

from loci.embed.base import Embedder
from tests.support.audio_files import script, service_with, wav
from tests.support.browser import chromium
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.scripted_stt import ScriptedSTT
from tests.support.web_app import INDEXING_TIMEOUT_MS, open_session, sign_in

QUESTION = "we spoke again about money matters for the house"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def test_a_cited_recording_opens_at_the_moment_it_was_said(
    browser: Browser, tmp_path: Path, embedder: Embedder
) -> None:
    with ScriptedSTT(lines=script()) as stt:
        loci = service_with(tmp_path, embedder, stt)
        server = LiveServer(loci).start()
        with server.client() as api:
            assert api.post("/brains", json={"name": "house"}).status_code == 201
            done = api.post("/brains/house/files", files={"files": ("meeting.wav", wav())}).json()
            meeting = server.wait_ready(api, "house", done["results"][0]["document"]["id"])
            assert meeting["status"] == "ready" and meeting["format"] == "audio"
            # The passage the search below shows first: said well into the recording.
            question = {"query": QUESTION, "mode": "text"}
            later = api.post("/brains/house/search", json=question).json()["hits"][0]
            assert "money matters for the house" in later["text"]
            assert later["time_start"] > 30
        session = open_session(browser, server, "reading", viewport={"width": 1280, "height": 900})
        page = session.page
        try:
            page.goto(server.url + "/#search")
            sign_in(page, server.owner_token)
            page.fill("#search-input", QUESTION)
            page.select_option("#search-mode", "text")
            page.click("#search-form button[type=submit]")
            hit = page.locator(f".hit[data-chunk-id='{later['chunk_id']}']")
            moment = f"{int(later['time_start']) // 60}:{int(later['time_start']) % 60:02}"
            expect(hit.locator(".citation-where")).to_contain_text(moment)
            hit.locator(".citation").click()
            player = page.locator("#preview-dialog audio")
            expect(player).to_be_visible()
            expect(player).to_have_accessible_name(f"meeting.wav, from {moment}")
            page.wait_for_function(
                "([at]) => Math.abs(document.querySelector('#preview-dialog audio').currentTime"
                " - at) < 0.5",
                arg=[later["time_start"]],
                timeout=INDEXING_TIMEOUT_MS,
            )
            expect(page.locator(".passage-quote")).to_contain_text("money matters for the house")
            session.shot("01-recording")
            session.watch.assert_clean(("GET", "/api/v1/me", 401))
        finally:
            page.context.close()
            server.stop()
            loci.store.close()


def test_a_conversation_from_the_command_line_is_in_the_list(
    browser: Browser, server: LiveServer, tmp_path: Path
) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "kitchen"}).status_code == 201
        done = api.post(
            "/brains/kitchen/files",
            files={
                "files": ("cake.md", b"# Lemon cake\n\nBake it at 180 degrees for forty minutes.\n")
            },
        ).json()
        server.wait_ready(api, "kitchen", done["results"][0]["document"]["id"])
    asked = run_cli(
        "ask", "How long does the lemon cake bake?", "--brain", "kitchen", home=tmp_path / "home"
    )
    assert asked.returncode == 0, asked.stderr

    session = open_session(browser, server, "reading-cli", viewport={"width": 1280, "height": 900})
    page = session.page
    try:
        page.goto(server.url + "/#ask")
        sign_in(page, server.owner_token)
        item = page.locator(".conversation", has_text="How long does the lemon cake bake?")
        expect(item.locator(".conversation-origin")).to_have_text("from command line")
        item.locator(".conversation-open").click()
        answer = page.locator(".msg-assistant")
        expect(answer).to_have_count(1)
        expect(answer.locator(".answer")).to_contain_text("forty minutes")
        answer.locator(".cite-chip").first.click()
        expect(page.locator("#preview-dialog mark.passage-mark")).to_contain_text("forty minutes")
        session.shot("01-from-the-cli")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        page.context.close()
