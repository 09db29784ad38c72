"""Right-to-left text: snippets cut only between grapheme clusters in Arabic and Hebrew, and
the web app shows an Arabic search, its hits and an answer right to left inside the
left-to-right page, with an English hit beside them left to right (Chromium, screenshots in
test-artifacts/bidi/)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import regex
from playwright.sync_api import Browser, Locator, Page, expect

from loci.search.snippets import make_snippet
from tests.support.browser import chromium
from tests.support.live_server import LiveServer
from tests.support.web_app import open_session, sign_in

ARABIC = (
    "اجتماعُ الفريقِ يومَ الثلاثاءِ في الساعةِ العاشرةِ صباحاً في قاعة Orion، "
    "ويُرجى إحضارُ تقريرِ الميزانيةِ المحدَّث قبل الموعد."
)
HEBREW = "פגישת הצוות ביום שלישי בשעה עשר בבוקר בחדר Orion; נא להביא את דוח התקציב המעודכן."
ENGLISH = "The team meets on Tuesday at ten in the Orion room; bring the updated budget report."


def _clusters(text: str) -> set[str]:
    return set(regex.findall(r"\X", text))


def test_snippets_of_pointed_arabic_and_hebrew_are_cut_between_clusters() -> None:
    for text in (ARABIC * 6, HEBREW.replace("ש", "שׁ") * 6):
        whole = _clusters(text)
        for width in range(30, 120, 7):
            for terms in ([], ["الميزانية"], ["התקציב"]):
                snippet = make_snippet(text, terms, width=width)
                body = snippet.text.strip("…")
                assert body.replace(" ", "") in text.replace(" ", ""), (width, terms)
                # The first and last clusters are whole clusters of the text: no mark cut off.
                first, last = regex.findall(r"\X", body)[0], regex.findall(r"\X", body)[-1]
                assert first in whole and last in whole, (width, terms, first, last)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def _starts_at(page: Page, element: Locator) -> str:
    """Which side of its box the element's first letter is drawn at: 'right' or 'left'."""
    side: str = element.evaluate(
        """(node) => {
            const walker = document.createTreeWalker(node, NodeFilter.SHOW_TEXT);
            let text = walker.nextNode();
            while (text && !text.data.trim()) text = walker.nextNode();
            const at = text.data.search(/\\S/);
            const range = document.createRange();
            range.setStart(text, at);
            range.setEnd(text, at + 1);
            const letter = range.getBoundingClientRect(), box = node.getBoundingClientRect();
            return box.right - letter.right < letter.left - box.left ? "right" : "left";
        }"""
    )
    return side


def test_the_web_app_shows_arabic_right_to_left_beside_english(
    browser: Browser, server: LiveServer
) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "bidi"}).status_code == 201
        for title, text in (("اجتماع", ARABIC), ("פגישה", HEBREW), ("Meeting", ENGLISH)):
            made = api.post("/brains/bidi/notes", json={"text": text, "title": title})
            assert made.status_code == 201, made.text
            server.wait_ready(api, "bidi", made.json()["document"]["id"])
    session = open_session(browser, server, "bidi", viewport={"width": 1100, "height": 900})
    page = session.page
    try:
        page.goto(server.url + "/#search")
        sign_in(page, server.owner_token)
        page.click(".tab[data-panel=files]")  # the brain's languages, named in the reader's
        expect(page.locator("#brain-languages")).to_have_text(
            re.compile(r"Languages: (Arabic|English|Hebrew) 1, .* 1, .* 1")
        )
        page.click(".tab[data-panel=search]")
        page.fill("#search-input", "تقرير الميزانية Orion")
        assert page.locator("#search-input").evaluate("(n) => n.matches(':dir(rtl)')")
        page.click("#search-form button[type=submit]")
        hits = page.locator(".hit")
        # The first search loads the embedding model: seconds.
        expect(hits.first.locator(".citation-name")).to_contain_text("اجتماع", timeout=60_000)
        arabic = hits.first.locator(".snippet")
        expect(arabic.locator("mark").first).to_be_visible()
        assert _starts_at(page, arabic) == "right"
        english = page.locator(".hit", has_text="Tuesday").locator(".snippet")
        if english.count():  # the English note matches "Orion" too
            assert _starts_at(page, english) == "left"
        session.shot("01-search")

        page.click(".tab[data-panel=ask]")
        page.fill("#ask-input", "متى اجتماع الفريق؟")
        assert page.locator("#ask-input").evaluate("(n) => n.matches(':dir(rtl)')")
        page.keyboard.press("Enter")
        answer = page.locator(".msg-assistant").first
        expect(answer).to_have_attribute("data-state", "done", timeout=60_000)
        expect(answer.locator(".answer")).to_contain_text("الثلاثاء")
        # "From your documents:" reads left to right, the Arabic sentence under it right to left.
        assert _starts_at(page, answer.locator(".answer p").first) == "left"
        assert _starts_at(page, answer.locator(".answer li").first) == "right"
        assert _starts_at(page, page.locator(".msg-user .msg-text").first) == "right"
        session.shot("02-answer")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        session.page.context.close()
