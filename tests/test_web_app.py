"""The web app in a real Chromium (Debian's, driven by Playwright) over a real server.

One desktop pass walks what a person does: sign in with a token, create a brain, drop a PDF on
the page, watch it become ready, search, open a citation at its passage, write and edit a note
(including an edit that loses a race), share the brain, reload, delete the file, sign out. A
second pass asks: a streamed answer from the documents with citation chips that open the passage,
a follow-up in the same conversation, renaming and deleting it, a quiz and flashcards, then the
person's own model (a scripted OpenAI-compatible server) streaming a cited answer, and Stop. A
phone-sized pass checks the layout. Every pass also asserts that the page logged no errors, broke
no CSP rule, and asked no host but the test server for anything.

Screenshots land in $LOCI_TEST_ARTIFACTS (default: test-artifacts/ at the repository root).
Chromium comes from `make browser` (apt); when it is missing these tests fail, never skip.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import (
    Browser,
    FilePayload,
    expect,
)

from loci.embed.base import Embedder
from tests.support import pdf_files
from tests.support.live_server import LiveServer
from tests.support.scripted_llm import AnswerSteps, Reply, ScriptedLLM
from tests.support.services import make_service
from tests.support.web_app import (
    DROP_FILE,
    HORIZONTAL_OVERFLOW,
    INDEXING_TIMEOUT_MS,
    b64,
    browser,
    file_row,
    open_session,
    sign_in,
)

__all__ = ["browser"]  # the module's Chromium (tests/support/web_app.py)

# Every state the newest answer in the chat passes through, with the length of its text then.
TRACE_ANSWER = """
() => {
  window.lociAnswerTrace = [];
  const log = document.querySelector("#chat-log");
  new MutationObserver(() => {
    const answer = log.querySelector(".msg-assistant:last-child");
    if (!answer) return;
    const text = answer.querySelector(".answer").textContent;
    window.lociAnswerTrace.push([answer.dataset.state, text.length]);
  }).observe(log, { subtree: true, childList: true, characterData: true, attributes: true });
}
"""


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
            ["#drop-zone", "fruit-report.pdf", "application/pdf", b64(pdf_files.two_page_pdf())],
        )
        upload = page.locator(".upload", has_text="fruit-report.pdf")
        expect(upload).to_have_attribute("data-state", "ready", timeout=INDEXING_TIMEOUT_MS)
        expect(upload.locator(".upload-state")).to_have_text("Ready · 2 passages")
        report = file_row(page, "fruit-report.pdf")
        expect(report).to_have_attribute("data-status", "ready", timeout=INDEXING_TIMEOUT_MS)
        expect(report).to_contain_text("Quarterly Fruit Report")
        expect(report).to_contain_text("2 passages")

        # Several files through the picker: each its own request; one refused at upload, one
        # that fails while indexing shows the reason and what to do (a retry would not help).
        page.set_input_files(
            "#file-input",
            [
                FilePayload(name="empty.txt", mimeType="text/plain", buffer=b""),
                FilePayload(
                    name="broken.pdf", mimeType="application/pdf", buffer=pdf_files.truncated_pdf()
                ),
                FilePayload(
                    name="orchard.txt",
                    mimeType="text/plain",
                    buffer=b"The orchard gave a good harvest of apples and pears this quarter.",
                ),
            ],
        )
        refused = page.locator(".upload", has_text="empty.txt")
        expect(refused).to_have_attribute("data-state", "failed")
        expect(refused).to_contain_text("empty.txt is empty")
        broken = file_row(page, "broken.pdf")
        expect(broken).to_have_attribute("data-status", "failed", timeout=INDEXING_TIMEOUT_MS)
        expect(broken.locator(".reason")).to_contain_text("truncated PDF")
        expect(broken.locator(".doc-help")).to_contain_text("add a good copy")
        expect(broken.get_by_role("button", name="Retry broken.pdf")).to_be_hidden()
        orchard = file_row(page, "orchard.txt")
        expect(orchard).to_have_attribute("data-status", "ready", timeout=INDEXING_TIMEOUT_MS)
        session.shot("02-files")

        # A web page on a private address is refused, and the page says why.
        page.fill("#url-input", "http://127.0.0.1:9/secret")
        page.click("#url-form button[type=submit]")
        expect(page.locator("#files-error")).to_be_visible()
        expect(page.locator("#files-error")).not_to_be_empty()
        # The list refreshing (here: sorted again) leaves that error standing.
        page.select_option("#files-sort", "name-asc")
        expect(page.locator("#file-list .doc-row").first).to_contain_text("broken.pdf")
        expect(page.locator("#files-error")).to_be_visible()
        page.select_option("#files-sort", "newest")

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

        # The citation opens the source: the PDF's page 2 drawn, the cited lines marked on it.
        first.locator(".citation").click()
        dialog = page.locator("#preview-dialog")
        expect(dialog).to_be_visible()
        frame = dialog.locator(".page-frame")
        expect(frame).to_have_attribute("data-loaded", "true")
        expect(frame).to_be_focused()
        expect(frame).to_have_accessible_name(
            "Page 2 of fruit-report.pdf, with the cited passage marked"
        )
        expect(dialog.locator(".page-number")).to_have_text("Page 2 of 2")
        expect(frame.locator(".passage-box")).to_have_count(2)  # its two lines
        expect(frame.locator(".passage-box").first).to_be_in_viewport()
        expect(dialog.locator(".passage-quote")).to_contain_text("Zebras graze near the river")
        session.shot("04-citation")
        dialog.get_by_role("button", name="‹ Previous page").click()
        expect(dialog.locator(".page-number")).to_have_text("Page 1 of 2")
        expect(dialog.locator(".passage-box")).to_have_count(0)
        # The passages as search sees them, the cited one highlighted.
        dialog.get_by_role("button", name="Passages").click()
        cited = dialog.locator(".chunk.cited")
        expect(cited).to_have_count(1)
        expect(cited).to_contain_text("Zebras graze near the river")
        expect(cited).to_be_in_viewport()
        expect(cited).to_be_focused()
        dialog.get_by_role("button", name="Extracted text").click()
        expect(dialog.locator(".extracted")).to_contain_text("Alpha report opens on page one.")
        # Related documents: each opens its own preview, at its closest passage.
        dialog.get_by_role("button", name="Related").click()
        kin = dialog.locator(".related-list .related")
        expect(kin.first).to_be_visible()
        expect(kin).to_have_count(1)  # the one other indexed document (broken.pdf has none)
        kin.first.locator("button").click()
        expect(page.locator("#preview-title")).to_have_text("orchard.txt")
        expect(dialog.locator("mark.passage-mark")).to_contain_text("good harvest of apples")
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
        report.get_by_role("button", name="Actions for fruit-report.pdf").click()
        page.get_by_role("menuitem", name="Delete").click()
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


NONCE = "ZEPHYR-5519-ORCHID"
TRIP_NOTES = f"""# Trip notes

The locker combination at the ferry terminal is {NONCE}.
The morning ferry leaves the harbour at 7:15 and reaches the island at 8:40.
A return ticket costs 12 euros, and the ferry carries 240 passengers.
The cafe on deck 3 opens at 6:50 and closes at 18:00.
"""
MODEL_KEY = "sk-web-test-4f1c9a-secret"
# Markup in an answer is text: the image must neither render nor be fetched.
MODEL_ANSWER = (
    f"The locker at the ferry terminal opens with **{NONCE}** [1].\n\n"
    '- Bring a padlock <img src="http://192.0.2.1/pixel.png"> too.'
)
LONG_ANSWER = "The ferry timetable is long, and this answer takes its time to arrive " * 3


@pytest.fixture
def model_server() -> Iterator[tuple[ScriptedLLM, AnswerSteps]]:
    # The answer streams word by word, slowly enough to be seen arriving.
    steps = AnswerSteps(
        Reply(MODEL_ANSWER, token_delay_s=0.06),
        rewritten="What is the ferry locker combination?",
        queries=["ferry terminal locker combination"],
    )
    llm = ScriptedLLM(responder=steps).start()
    yield llm, steps
    llm.stop()


def test_a_person_asks_follows_up_studies_and_uses_their_own_model(
    browser: Browser,
    tmp_path: Path,
    embedder: Embedder,
    model_server: tuple[ScriptedLLM, AnswerSteps],
) -> None:
    llm, steps = model_server
    # The person's model runs on 127.0.0.1, which the server's fetcher refuses unless allowed.
    loci = make_service(
        tmp_path / "home", embedder, fetch_allowed_networks=["127.0.0.1/32"], job_retry_base_s=0.01
    )
    server = LiveServer(loci).start()
    with server.client() as api:
        assert api.post("/brains", json={"name": "trips"}).status_code == 201
        uploaded = api.post(
            "/brains/trips/files", files={"files": ("trip-notes.md", TRIP_NOTES.encode())}
        ).json()
        server.wait_ready(api, "trips", uploaded["results"][0]["document"]["id"])

    session = open_session(browser, server, "ask", viewport={"width": 1280, "height": 860})
    page, watch = session.page, session.watch
    try:
        page.goto(server.url + "/#ask")
        sign_in(page, server.owner_token)
        expect(page.locator("#panel-ask")).to_be_visible()
        expect(page.locator("#conversations-empty")).to_be_visible()

        # No model on the server: the answer is extracted from the documents, and cites them.
        page.fill("#ask-input", "What is the locker combination at the ferry terminal?")
        page.keyboard.press("Enter")
        expect(page.locator(".msg-user")).to_have_text(
            "What is the locker combination at the ferry terminal?"
        )
        first = page.locator(".msg-assistant").first
        expect(first).to_have_attribute("data-state", "done")
        expect(first.locator(".answer")).to_contain_text(NONCE)
        expect(first.locator(".msg-progress")).to_contain_text("simple lookup")
        expect(first.locator(".msg-progress")).to_contain_text("relevant")
        expect(first.locator(".msg-model")).to_have_text("From your documents (no model)")
        source = first.locator(".source-item").first
        expect(source).to_contain_text("trip-notes.md")
        expect(source).to_contain_text("Trip notes")  # the heading path
        chip = first.locator(".answer .cite-chip").first
        expect(chip).to_have_text("1")
        session.shot("01-answer")

        chip.click()
        dialog = page.locator("#preview-dialog")
        # Text is shown as text, the cited lines marked in it.
        cited = dialog.locator("mark.passage-mark")
        expect(cited).to_contain_text(NONCE)
        expect(cited).to_be_in_viewport()
        expect(cited).to_be_focused()
        expect(dialog.locator(".source-text")).to_contain_text("The cafe on deck 3")
        page.keyboard.press("Escape")
        expect(dialog).to_be_hidden()

        # Save answer: kept as an analysis page in research/, and the chat says where.
        first.get_by_role("button", name="Save answer").click()
        expect(first.locator(".msg-saved")).to_contain_text("Saved as research/answer-")
        with server.client() as api:
            kept = api.get("/brains/trips/graph/documents", params={"folder": "research"}).json()
            assert [(d["type"], d["title"]) for d in kept] == [
                ("analysis", "What is the locker combination at the ferry terminal")
            ]

        # Thumbs down, then say why: the rating is kept on the answer.
        first.get_by_role("button", name="Bad answer").click()
        first.get_by_label("What was wrong with this answer").fill("wrong locker")
        first.locator(".rate-reason button[type=submit]").click()
        expect(first.locator(".msg-rated")).to_have_text("You found this unhelpful: wrong locker")
        expect(first.get_by_role("button", name="Bad answer")).to_have_attribute(
            "aria-pressed", "true"
        )

        # The conversation is listed; a follow-up continues it.
        conversation = page.locator(".conversation")
        expect(conversation).to_have_count(1)
        expect(conversation).to_have_class(re.compile(r"\bcurrent\b"))
        expect(page.locator("#chat-title")).to_have_text(
            "What is the locker combination at the ferry terminal?"
        )
        page.fill("#ask-input", "And when does the morning ferry leave the harbour?")
        page.click("#ask-button")
        second = page.locator(".msg-assistant").nth(1)
        expect(second).to_have_attribute("data-state", "done")
        expect(second.locator(".answer")).to_contain_text("7:15")
        expect(conversation).to_have_count(1)
        with server.client() as api:
            (listed,) = api.get("/brains/trips/conversations").json()
            detail = api.get(f"/brains/trips/conversations/{listed['id']}").json()
            assert [m["role"] for m in detail["messages"]] == ["user", "assistant"] * 2

        # Rename it, start anew, then reopen it from the list: the history comes back cited.
        conversation.get_by_role("button", name=re.compile("^Rename ")).click()
        page.fill(".rename-input", "Ferry facts")
        page.click(".rename-form button[type=submit]")
        expect(conversation.locator(".conversation-title")).to_have_text("Ferry facts")
        expect(page.locator("#chat-title")).to_have_text("Ferry facts")
        page.click("#new-conversation-button")
        expect(page.locator(".msg")).to_have_count(0)
        expect(page.locator("#chat-title")).to_have_text("New conversation")
        conversation.locator(".conversation-open").click()
        expect(page.locator(".msg")).to_have_count(4)
        expect(page.locator(".msg-assistant").first.locator(".cite-chip").first).to_be_visible()
        reopened = page.locator(".msg-assistant").first
        expect(reopened.locator(".msg-rated")).to_have_text(
            "You found this unhelpful: wrong locker"
        )
        reopened.get_by_role("button", name="Good answer").click()  # rating again replaces it
        expect(reopened.locator(".msg-rated")).to_have_text("You found this helpful")
        with server.client() as api:
            answers = api.get(f"/brains/trips/conversations/{listed['id']}").json()["messages"]
            assert [m["feedback"] and m["feedback"]["rating"] for m in answers] == [
                None,
                "up",
                None,
                None,
            ]
        session.shot("02-conversation")

        # Study: a quiz checked and revealed, flashcards flipped, each opening its passage.
        page.click("#ask-show-study")
        page.select_option("#study-count", "3")
        page.click("#make-quiz")
        question = page.locator(".quiz-item").first
        expect(page.locator(".quiz-item")).to_have_count(3)
        question.get_by_role("button", name="Reveal answer").click()
        expect(question.locator(".choice.right")).to_have_count(1)
        expect(question.locator(".verdict")).to_contain_text("The answer is")
        right_index = question.locator(".choice.right").get_attribute("data-index")
        right = question.locator(f'.choice[data-index="{right_index}"]')
        question.locator(".choice:not(.right)").first.click()
        question.get_by_role("button", name="Check").click()
        expect(question.locator(".verdict")).to_contain_text("Not quite")
        expect(question).to_have_attribute("data-result", "wrong")
        right.click()
        question.get_by_role("button", name="Check").click()
        expect(question.locator(".verdict")).to_contain_text("Right.")
        expect(question).to_have_attribute("data-result", "right")
        session.shot("03-quiz")

        page.fill("#study-topic", "ferry")
        page.click("#make-flashcards")
        card = page.locator(".flashcard").first
        expect(card.locator(".card-side")).to_have_text("Question")
        expect(card.locator(".card-text")).to_contain_text("_____")
        card.locator(".card-face").click()
        expect(card.locator(".card-face")).to_have_attribute("aria-pressed", "true")
        expect(card.locator(".card-side")).to_have_text("Answer")
        expect(card.locator(".card-text")).not_to_contain_text("_____")
        expect(card.locator(".citation-name")).to_contain_text("trip-notes.md")
        session.shot("04-flashcards")
        card.locator(".citation").click()
        expect(dialog.locator("mark.passage-mark")).to_be_visible()
        page.keyboard.press("Escape")

        # Back to the chat: delete the conversation.
        page.click("#ask-show-chat")
        conversation.get_by_role("button", name="Delete Ferry facts").click()
        expect(page.locator("#confirm-message")).to_contain_text("Ferry facts")
        page.click("#confirm-yes")
        expect(conversation).to_have_count(0)
        expect(page.locator(".msg")).to_have_count(0)
        with server.client() as api:
            assert api.get("/brains/trips/conversations").json() == []

        # The person's own model: saved with its key, which is never shown back.
        page.click("#model-button")
        model_dialog = page.locator("#model-dialog")
        expect(model_dialog).to_be_visible()
        expect(page.locator("#model-state")).to_contain_text("server's model")
        expect(page.locator("#model-remove")).to_be_hidden()
        page.fill("#model-base-url", llm.base_url)
        page.fill("#model-name", "scripted-model")
        page.fill("#model-key", MODEL_KEY)
        page.fill("#model-fallbacks", "scripted-small")
        page.click("#model-form button[type=submit]")
        expect(model_dialog).to_be_hidden()
        page.click("#model-button")
        expect(page.locator("#model-state")).to_contain_text("scripted-model")
        expect(page.locator("#model-key-state")).to_be_visible()
        expect(page.locator("#model-key")).to_have_value("")
        expect(page.locator("#model-fallbacks")).to_have_value("scripted-small")
        assert MODEL_KEY not in page.content()
        session.shot("05-model")
        model_dialog.get_by_role("button", name="Close").click()

        # Its answer streams in, token by token, with a chip for its citation.
        page.evaluate(TRACE_ANSWER)
        page.fill("#ask-input", "What is the locker combination at the ferry terminal?")
        page.click("#ask-button")
        answer = page.locator(".msg-assistant").last
        expect(page.locator("#stop-button")).to_be_visible()
        expect(answer).to_have_attribute("data-state", "done")
        expect(answer.locator(".answer")).to_contain_text(re.compile(rf"opens with {NONCE}\s*1\."))
        expect(answer.locator(".answer strong")).to_have_text(NONCE)
        expect(answer.locator(".answer li").first).to_contain_text('<img src="http://192.0.2.1/')
        expect(answer.locator(".answer img")).to_have_count(0)
        # The padlock is in no passage: after the model answered again with it, it is marked.
        expect(answer.locator(".answer")).to_contain_text("Not supported by the passages it cites")
        expect(answer.locator(".msg-model")).to_contain_text("Answered by scripted-model")
        expect(answer.locator(".cite-chip")).to_have_count(1)
        expect(page.locator("#stop-button")).to_be_hidden()
        trace: list[list[Any]] = page.evaluate("window.lociAnswerTrace")
        growing = {length for state, length in trace if state == "streaming" and length}
        assert len(growing) >= 3, trace  # seen part-written, several times
        assert all(r["_authorization"] == f"Bearer {MODEL_KEY}" for r in llm.requests)
        answer.locator(".cite-chip").click()
        expect(dialog.locator("mark.passage-mark")).to_contain_text(NONCE)
        page.keyboard.press("Escape")
        session.shot("06-model-answer")

        # Stop ends an answer that is still being written.
        steps.answer = Reply(LONG_ANSWER, token_delay_s=0.08)
        page.fill("#ask-input", "Tell me everything about the ferry timetable.")
        page.click("#ask-button")
        slow = page.locator(".msg-assistant").last
        expect(slow.locator(".answer")).to_contain_text("timetable")
        page.click("#stop-button")
        expect(slow).to_have_attribute("data-state", "stopped")
        expect(slow.locator(".msg-progress")).to_contain_text("Stopped.")
        expect(page.locator("#ask-button")).to_be_visible()

        # Removing the model: the server's answers again.
        page.click("#model-button")
        expect(page.locator("#model-remove")).to_be_visible()
        page.click("#model-remove")
        page.click("#confirm-yes")
        expect(model_dialog).to_be_hidden()
        with server.client() as api:
            assert api.get("/me/model").status_code == 404

        watch.assert_clean(
            ("GET", "/api/v1/me", 401),  # first visit: not signed in yet
            ("GET", "/api/v1/me/model", 404),  # no model of their own yet
        )
    finally:
        session.shot("ask-last")
        page.context.close()
        server.stop()
        loci.store.close()


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
                "#header-menu .menu-button",
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
        cited = page.locator("#preview-dialog mark.passage-mark")
        expect(cited).to_be_in_viewport()
        dialog_box = page.locator("#preview-dialog").bounding_box()
        assert dialog_box is not None and dialog_box["x"] + dialog_box["width"] <= 390
        fits("06-citation")
        page.keyboard.press("Escape")

        page.click(".tab[data-panel=ask]")
        page.fill("#ask-input", "What should the boiler gauge read when it is cold?")
        page.click("#ask-button")
        answer = page.locator(".msg-assistant").last
        expect(answer).to_have_attribute("data-state", "done")
        expect(answer.locator(".answer")).to_contain_text("between one and two bar")
        expect(answer.locator(".source-item")).to_contain_text(long_name)
        expect(page.locator(".conversation")).to_have_count(1)
        expect(page.locator("#ask-input")).to_be_in_viewport()
        answer.get_by_role("button", name="Bad answer").click()  # the reason field opens
        expect(answer.get_by_label("What was wrong with this answer")).to_be_visible()
        fits("07-ask")
        for control in ("#ask-button", "#new-conversation-button", ".cite-chip", ".rate-reason"):
            box = page.locator(control).first.bounding_box()
            assert box is not None and box["x"] + box["width"] <= 390, control

        page.click("#ask-show-study")
        page.click("#make-flashcards")
        expect(page.locator(".flashcard").first).to_be_visible()
        fits("08-study")

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
