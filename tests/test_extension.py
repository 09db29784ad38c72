"""The browser extension (extension/) end to end, and the API route it saves through.

The unpacked extension is loaded into Debian's Chromium (Playwright, headless) next to a real
Loci server and a small fixture site, both on 127.0.0.1. A person opens the popup, connects with
a token, saves an article page, sees it become searchable, finds it through the API's search,
and asks the brain about it in the popup's chat — answered by a scripted OpenAI-compatible model
on loopback — with a citation that links back to the page.

The popup page is opened in a tab of its own (Playwright cannot click the toolbar button), so
"this page" is the web page looked at just before; the loopback host permission the extension
holds for local servers also lets it read the fixture site, as activeTab would after a click.
Chromium comes from `make browser` (apt); when it is missing these tests fail, never skip.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler
from pathlib import Path

import pytest
from playwright.sync_api import BrowserContext, ConsoleMessage, Page, expect

from loci.embed.base import Embedder
from loci.llm.client import ChatSettings, OpenAICompatibleChat
from loci.service import Loci
from tests.support.browser import ARTIFACTS, chromium_with_extension
from tests.support.live_server import LiveServer
from tests.support.loopback import Loopback, QuietHandler
from tests.support.paths import REPO
from tests.support.scripted_llm import AnswerSteps, Reply, ScriptedLLM
from tests.support.services import make_service

EXTENSION = REPO / "extension"
FIXTURES = EXTENSION / "test" / "fixtures"
ANSWER = "Open the bleed valve a quarter turn, until it hisses [1]."
# Chromium logs failed requests as console errors; the tests make two kinds on purpose (a wrong
# token, a server that has stopped) and check what the popup shows instead.
NETWORK_ERROR = re.compile(
    r"^Failed to load resource: (the server responded with a status of 401|"
    r"net::ERR_CONNECTION_REFUSED)"
)


# ---- the API route the extension saves through ------------------------------------------------
def test_a_page_saved_as_markdown_is_kept_with_its_url_and_becomes_searchable(
    server: LiveServer,
) -> None:
    url = "http://127.0.0.1:9/radiators"  # nothing listens on port 9: the page is never fetched
    page = {
        "url": url,
        "title": "Bleeding radiators",
        "markdown": "# Bleeding radiators\n\n## Steps\n\n- Open the valve a quarter turn.\n",
    }
    with server.client() as api:
        assert api.post("/brains", json={"name": "reading"}).status_code == 201
        saved = api.post("/brains/reading/urls", json={**page, "tags": ["home"]})
        assert saved.status_code == 202, saved.text
        document = saved.json()["document"]
        assert (document["kind"], document["source_url"], document["title"]) == (
            "web",
            url,
            "Bleeding radiators",
        )
        assert document["tags"] == ["home"]
        assert server.wait_ready(api, "reading", document["id"])["status"] == "ready"

        found = api.post("/brains/reading/search", json={"query": "valve quarter turn"})
        hits = found.json()["hits"]
        assert hits and hits[0]["document_id"] == document["id"]
        assert hits[0]["source_url"] == url and hits[0]["heading_path"][-1] == "Steps"

        again = api.post("/brains/reading/urls", json=page).json()
        assert again["deduped"] and again["document"]["id"] == document["id"]

        refused = api.post("/brains/reading/urls", json={**page, "url": "file:///etc/passwd"})
        assert refused.status_code == 400 and refused.json()["error"] == "invalid_input"
        blank = api.post("/brains/reading/urls", json={**page, "markdown": " \n "})
        assert blank.status_code == 400 and "no text" in blank.json()["message"]
        empty = api.post("/brains/reading/urls", json={**page, "markdown": ""})
        assert empty.status_code == 422
        untitled = api.post("/brains/reading/urls", json={"url": url, "title": "no text"})
        assert untitled.status_code == 422 and "only taken with `markdown`" in untitled.text

        read_only = api.post("/tokens", json={"name": "reader", "scope": "read"}).json()["secret"]
    with server.client(read_only) as reader:
        other = {**page, "url": url + "/2"}
        assert reader.post("/brains/reading/urls", json=other).status_code == 403
    with server.client() as api:
        assert len(api.get("/brains/reading/files").json()) == 1


# ---- the extension in Chromium -----------------------------------------------------------------
@pytest.fixture
def model() -> Iterator[ScriptedLLM]:
    steps = AnswerSteps(
        Reply(ANSWER),
        rewritten="How far is a radiator bleed valve opened?",
        queries=["open the bleed valve a quarter turn"],
    )
    llm = ScriptedLLM(responder=steps).start()
    yield llm
    llm.stop()


@pytest.fixture
def answering_server(
    tmp_path: Path, embedder: Embedder, model: ScriptedLLM
) -> Iterator[LiveServer]:
    """A live server whose configured chat model is the scripted one."""
    base = make_service(tmp_path / "home", embedder, job_retry_base_s=0.01)
    settings = ChatSettings(base_url=model.base_url, model="scripted", api_key="sk-test")
    loci = Loci(
        store=base.store,
        blobs=base.blobs,
        embedder=lambda: embedder,
        settings=base.settings,
        chat=lambda: OpenAICompatibleChat(settings),
    )
    live = LiveServer(loci).start()
    yield live
    live.stop()
    loci.store.close()


class QuietFiles(QuietHandler, SimpleHTTPRequestHandler):
    """A folder's files, served without a log line a request."""


@pytest.fixture
def site() -> Iterator[str]:
    """The extractor's fixture pages, served over HTTP on 127.0.0.1."""
    with Loopback(functools.partial(QuietFiles, directory=str(FIXTURES))) as web:
        yield web.url()


@pytest.fixture
def browser(tmp_path: Path) -> Iterator[BrowserContext]:
    with chromium_with_extension(EXTENSION, tmp_path / "profile") as context:
        context.set_default_timeout(15_000)
        yield context


def extension_id(context: BrowserContext) -> str:
    worker = (
        context.service_workers[0]
        if context.service_workers
        else context.wait_for_event("serviceworker")
    )
    match = re.match(r"chrome-extension://([a-p]{32})/", worker.url)
    assert match, worker.url
    return match.group(1)


def errors_of(page: Page) -> list[str]:
    """Console errors and uncaught exceptions of `page` (CSP violations are console errors)."""
    seen: list[str] = []

    def on_console(message: ConsoleMessage) -> None:
        if message.type == "error" and not NETWORK_ERROR.match(message.text):
            seen.append(message.text)

    page.on("console", on_console)
    page.on("pageerror", lambda error: seen.append(str(error)))
    return seen


def test_save_a_page_from_the_popup_find_it_and_ask_about_it(
    browser: BrowserContext, answering_server: LiveServer, site: str
) -> None:
    server = answering_server
    article = f"{site}/wordpress.html"
    with server.client() as api:
        assert api.post("/brains", json={"name": "reading"}).status_code == 201
        token = api.post("/tokens", json={"name": "browser", "scope": "write"}).json()["secret"]

    reading = browser.pages[0] if browser.pages else browser.new_page()
    reading.goto(article)
    expect(reading).to_have_title(re.compile("Bleeding a radiator"))

    popup = browser.new_page()
    errors = errors_of(popup)
    popup.goto(f"chrome-extension://{extension_id(browser)}/popup.html")
    expect(popup.locator("#connect")).to_be_visible()
    expect(popup.locator("#connected")).to_be_hidden()

    # A wrong token is refused with a sentence, and nothing is stored.
    popup.fill("#server", server.url + "/")
    popup.fill("#token", "loci_" + "0" * 43)
    popup.click("#connect-button")
    expect(popup.locator("#connect-error")).to_contain_text("refused the token")
    expect(popup.locator("#connected")).to_be_hidden()

    popup.fill("#token", token)
    popup.click("#connect-button")
    expect(popup.locator("#connected")).to_be_visible()
    expect(popup.locator("#server-label")).to_have_text(server.url.removeprefix("http://"))
    popup.select_option("#brain", "reading")

    popup.click("#save")
    status = popup.locator("#save-status")
    expect(status).to_have_text(
        "Saved “Bleeding a radiator without the mess” to reading. It is searchable now.",
        timeout=60_000,
    )

    with server.client(token) as api:
        hits = api.post(
            "/brains/reading/search", json={"query": "how far to open the bleed valve"}
        ).json()["hits"]
        assert hits, "the saved page is not found by search"
        top = hits[0]
        assert top["source_url"] == article
        assert top["title"] == "Bleeding a radiator without the mess"
        document = api.get(f"/brains/reading/files/{top['document_id']}").json()
        assert document["kind"] == "web" and document["status"] == "ready"
        saved = api.get(f"/brains/reading/files/{top['document_id']}/download").text
    # What was kept is the article as Markdown, without the page's chrome.
    assert "## Step by step\n\n1. Turn the heating off" in saved
    assert "- An old towel\n  - folded twice" in saved
    assert "Keep the towel there until the valve stops dripping." in saved  # display: contents
    for junk in (
        "BUY CHEAP BOILERS",
        "casino",
        "Subscribe to our newsletter",
        "We use cookies",
        "three free articles",  # hidden by the page's stylesheet
    ):
        assert junk not in saved

    # Saving the same page again keeps one copy.
    popup.click("#save")
    expect(status).to_have_text("Already in reading: “Bleeding a radiator without the mess”.")

    # The chat asks the brain and shows the answer with a citation that links to the page.
    popup.fill("#question", "How far do I open the bleed valve?")
    popup.press("#question", "Enter")
    expect(popup.locator(".msg-user")).to_have_text("How far do I open the bleed valve?")
    answer = popup.locator(".msg-assistant").last
    expect(answer).to_have_attribute("data-state", "done", timeout=60_000)
    expect(answer.locator(".answer-text")).to_have_text(ANSWER)
    citation = answer.locator(".citations li").first
    expect(citation).to_contain_text("[1] Bleeding a radiator without the mess")
    expect(citation.locator("a")).to_have_attribute("href", article)
    expect(popup.locator("#new-chat")).to_be_visible()
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    popup.screenshot(path=str(ARTIFACTS / "extension-popup.png"), full_page=True)

    # A follow-up continues the same conversation; "New chat" starts another.
    popup.fill("#question", "And then what?")
    popup.press("#question", "Enter")
    expect(popup.locator(".msg-assistant").nth(1)).to_have_attribute("data-state", "done")
    with server.client(token) as api:
        conversations = api.get("/brains/reading/conversations").json()
        assert len(conversations) == 1
        detail = api.get(f"/brains/reading/conversations/{conversations[0]['id']}").json()
        assert [m["content"] for m in detail["messages"] if m["role"] == "user"] == [
            "How far do I open the bleed valve?",
            "And then what?",
        ]
    popup.click("#new-chat")
    expect(popup.locator("#messages > *")).to_have_count(0)
    popup.fill("#question", "How far do I open the bleed valve?")
    popup.press("#question", "Enter")
    expect(popup.locator(".msg-assistant")).to_have_attribute("data-state", "done")
    with server.client(token) as api:
        assert len(api.get("/brains/reading/conversations").json()) == 2

    # Closing and reopening the popup keeps the connection and the chosen brain.
    popup.reload()
    expect(popup.locator("#connected")).to_be_visible()
    expect(popup.locator("#brain")).to_have_value("reading")
    assert errors == []

    # The manifest's CSP holds: a script injected inline into the popup does not run.
    injected = """() => {
      const script = document.createElement("script");
      script.textContent = "window.injected = true";
      document.body.append(script);
      return window.injected === true;
    }"""
    assert popup.evaluate(injected) is False
    assert any("Content Security Policy" in e for e in errors)


def test_a_read_only_token_asks_without_a_model_and_cannot_save(
    browser: BrowserContext, server: LiveServer, site: str
) -> None:
    readme = f"{site}/github-readme.html"
    with server.client() as api:
        assert api.post("/brains", json={"name": "code"}).status_code == 201
        page = {"url": readme, "title": "tidewater", "markdown": "# tidewater\n\nTide tables "
                "for small harbours, computed offline from harmonic constants.\n"}  # fmt: skip
        saved = api.post("/brains/code/urls", json=page).json()["document"]
        server.wait_ready(api, "code", saved["id"])
        reader = api.post(
            "/tokens", json={"name": "reader", "scope": "read", "brains": ["code"]}
        ).json()["secret"]

    reading = browser.pages[0] if browser.pages else browser.new_page()
    reading.goto(readme)
    popup = browser.new_page()
    errors = errors_of(popup)
    popup.goto(f"chrome-extension://{extension_id(browser)}/popup.html")
    popup.fill("#server", server.url)
    popup.fill("#token", reader)
    popup.click("#connect-button")
    expect(popup.locator("#brain option")).to_have_text(["code (read only)"])

    # The token's scope is read from the server: saving is not offered at all.
    expect(popup.locator("#save")).to_be_disabled()
    expect(popup.locator("#save-status")).to_have_text(
        "This token is read-only: it can ask, not save."
    )

    popup.fill("#question", "What does tidewater compute tide tables from?")
    popup.press("#question", "Enter")
    answer = popup.locator(".msg-assistant").last
    expect(answer).to_have_attribute("data-state", "done", timeout=60_000)
    expect(answer.locator(".answer-text")).to_contain_text("harmonic constants")
    expect(answer.locator(".msg-note")).to_have_text(
        "No model on the server: quoted from your sources."
    )
    expect(answer.locator(".citations a").first).to_have_attribute("href", readme)

    # The server goes away: the question fails with a sentence saying so, not a blank answer.
    server.stop()
    popup.fill("#question", "Is anyone there?")
    popup.press("#question", "Enter")
    failed = popup.locator(".msg-assistant").last
    expect(failed).to_have_attribute("data-state", "failed")
    expect(failed.locator(".answer-text")).to_have_text(
        f"Cannot reach the Loci server at {server.url}."
    )

    popup.click("#disconnect")
    expect(popup.locator("#connect")).to_be_visible()
    popup.reload()
    expect(popup.locator("#connect")).to_be_visible()  # the token is gone from storage
    expect(popup.locator("#server")).to_have_value(server.url)
    assert errors == []
