"""The web app's Brain view in a real Chromium over a real server, and the HTML it shows.

Pages are made through the API (a person, a project linking to them and citing evidence, a
capture waiting in the inbox, an archived page, a merged tombstone, a page of hostile Markdown);
then a person browses them grouped by folder, filters the inbox, finds a page, opens the project,
follows its link to the person, reads the timeline, is refused a status the page does not
qualify for, edits the compiled truth (autosaved once after the typing stops, kept on reload,
a new hash in the API), loses a race to a write made underneath and resolves it, adds a timeline
entry, and sees hostile Markdown rendered inert. A viewer gets the same pages without a control.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from html.parser import HTMLParser

import httpx
import pytest
from playwright.sync_api import Browser, Locator, Request, expect

from tests.support.browser import chromium
from tests.support.live_server import LiveServer, made
from tests.support.web_app import HORIZONTAL_OVERFLOW, open_session, sign_in

BRAIN = "orchard"
DOCS = f"/brains/{BRAIN}/graph/documents"
PROJECT_TRUTH = (
    "Led by [[page:ana-lopez|Ana López]]. Agreed on [[evidence:ev-kickoff-call|the kickoff "
    "call]]. Tracked in [[source:slack:C01/1712345|Slack]]."
)
HOSTILE_TRUTH = (
    "<script>window.lociPwned = 1</script>\n\n"
    '<img src="x" onerror="window.lociPwned = 2">\n\n'
    "[[page:ana-lopez|<img src=x onerror=window.lociPwned=3>]] "
    "[click me](javascript:window.lociPwned=4) "
    '<a href="#" onclick="window.lociPwned=5" class="graph-link">raw anchor</a>'
)
CITES = "[[evidence:ev-kickoff-call|kickoff call]]"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def build_brain(api: httpx.Client) -> None:
    """The pages the browser then finds; waits until the graph query finds the project."""
    made(api.post("/brains", json={"name": BRAIN}))
    made(
        api.post(
            DOCS,
            json={
                "type": "source", "title": "Kickoff call", "folder": "evidence",
                "id": "ev-kickoff-call", "status": "active",
                "text": "Transcript: Ana agreed to lead the planting.",
            },
        )
    )  # fmt: skip
    made(api.post(DOCS, json={"type": "person", "title": "Ana López", "text": "Ana grows apples."}))
    made(
        api.post(
            DOCS,
            json={
                "type": "project", "title": "Orchard Project", "status": "active",
                "text": PROJECT_TRUTH,
            },
        )
    )  # fmt: skip
    project = f"{DOCS}/orchard-project"
    for entry in (
        {"text": "Kickoff held", "at": "2026-03-04", "source": "slack:C01/1712345"},
        {"text": "First trees planted", "at": "2026-05-01"},
    ):
        made(api.post(f"{project}/timeline", json=entry))
    made(api.post(f"/brains/{BRAIN}/captures", json={"text": "Buy compost bins before May"}))
    made(api.post(DOCS, json={"type": "concept", "title": "Hedge maze", "status": "archived"}))
    made(api.post(DOCS, json={"type": "person", "title": "A. Lopez draft"}))
    made(api.post(f"{DOCS}/a-lopez-draft/merge", json={"into": "ana-lopez"}))
    made(
        api.post(
            DOCS,
            json={
                "type": "note", "title": "Hostile paste", "folder": "thoughts",
                "text": HOSTILE_TRUTH,
            },
        )
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while True:  # writes are indexed in the background
        hits = made(api.post(f"/brains/{BRAIN}/graph/query", json={"query": "orchard led"}))
        if any(h["document"]["id"] == "orchard-project" for h in hits["hits"]):
            return
        assert time.monotonic() < deadline, "the project was never indexed"
        time.sleep(0.2)


def test_a_person_browses_follows_links_edits_and_a_viewer_only_reads(
    browser: Browser, server: LiveServer
) -> None:
    with server.client() as api:
        build_brain(api)
    session = open_session(browser, server, "brain", viewport={"width": 1280, "height": 900})
    page, watch = session.page, session.watch
    truth_puts: list[str] = []

    def count_truth_puts(request: Request) -> None:
        if request.method == "PUT" and request.url.endswith("/truth"):
            truth_puts.append(request.url)

    page.on("request", count_truth_puts)
    try:
        page.goto(server.url + "/#brain")
        sign_in(page, server.owner_token)
        panel = page.locator("#panel-brain")
        expect(panel).to_be_visible()

        # Grouped by folder, the inbox first; the merged tombstone nowhere; archived collapsed.
        def group(folder: str) -> Locator:
            return page.locator(f".graph-group[data-folder='{folder}']")

        expect(page.locator(".graph-group")).to_have_count(5)
        expect(page.locator(".graph-group").first).to_have_attribute("data-folder", "inbox")
        expect(group("inbox")).to_contain_text("Buy compost bins before May")
        expect(group("people")).to_contain_text("Ana López")
        expect(group("projects")).to_contain_text("Orchard Project")
        expect(group("evidence")).to_contain_text("Kickoff call")
        expect(group("thoughts")).to_contain_text("Hostile paste")
        expect(panel.get_by_text("A. Lopez draft")).to_have_count(0)
        archived = page.locator("#graph-archived")
        expect(archived).to_have_js_property("open", False)
        expect(archived.get_by_role("link", name="Hedge maze")).to_be_hidden()
        expect(page.locator("#graph-groups")).not_to_contain_text("Hedge maze")
        archived.locator("summary").click()
        expect(archived.get_by_role("link", name="Hedge maze")).to_be_visible()
        session.shot("01-grouped")

        # The inbox: only the drafts captures left there.
        page.click("#graph-show-inbox")
        expect(page.locator("#graph-show-inbox")).to_have_text("Inbox (1)")
        expect(page.locator(".graph-item")).to_have_count(1)
        expect(page.locator(".graph-item")).to_contain_text("Buy compost bins before May")
        expect(page.locator("#graph-summary")).to_contain_text("1 capture waiting")
        page.click("#graph-show-all")

        # The filter box asks the graph query route.
        page.fill("#graph-filter", "orchard led")
        page.click("#graph-filter-form button[type=submit]")
        hit = page.locator(".graph-hit", has=page.get_by_role("link", name="Orchard Project"))
        expect(hit).to_be_visible()
        expect(page.locator("#graph-groups")).to_be_empty()
        session.shot("02-found")

        # The project: type, status, truth with decorated links, timeline newest first, links.
        hit.get_by_role("link", name="Orchard Project").click()
        view = page.locator("#graph-page")
        expect(view).to_be_visible()
        expect(page.locator("#graph-title")).to_have_text("Orchard Project")
        expect(page.locator("#graph-meta")).to_contain_text("project")
        expect(page.locator("#graph-meta")).to_contain_text("active")
        truth = page.locator("#graph-truth")
        expect(truth.locator("a.graph-page")).to_have_text("Ana López")
        expect(truth.locator("a.graph-evidence")).to_have_text("the kickoff call")
        expect(truth.locator("a.graph-page.graph-evidence")).to_have_count(0)
        expect(truth.locator(".graph-source")).to_have_attribute("title", "slack:C01/1712345")
        entries = page.locator(".graph-entry")
        expect(entries).to_have_count(2)
        expect(entries.nth(0)).to_contain_text("2026-05-01")
        expect(entries.nth(0)).to_contain_text("First trees planted")
        expect(entries.nth(1)).to_contain_text("Kickoff held")
        expect(entries.nth(1)).to_contain_text("source: slack:C01/1712345")
        expect(page.locator("#graph-links")).to_contain_text("Ana López")
        expect(page.locator("#graph-cites")).to_contain_text("Kickoff call")
        session.shot("03-project")

        # Following the link opens the person, who shows the project among the backlinks.
        truth.get_by_role("link", name="Ana López").click()
        expect(page).to_have_url(server.url + "/#brain/ana-lopez")
        expect(page.locator("#graph-title")).to_have_text("Ana López")
        expect(page.locator("#graph-meta")).to_contain_text("A. Lopez draft")  # the merged alias
        backlinks = page.locator("#graph-backlinks")
        expect(backlinks).to_contain_text("Orchard Project")
        expect(backlinks).not_to_contain_text("draft")  # the merged tombstone's link
        page.go_back()
        expect(page.locator("#graph-title")).to_have_text("Orchard Project")
        page.go_forward()
        expect(page.locator("#graph-title")).to_have_text("Ana López")

        # Active needs a cited evidence record: refused, with the API's reason, nothing changed.
        page.select_option("#graph-status", "active")
        expect(page.locator("#graph-status-error")).to_contain_text(
            "must cite at least one evidence record"
        )
        expect(page.locator("#graph-status")).to_have_value("draft")

        # The truth autosaves once after the typing stops, against the version opened.
        with server.client() as api:
            before = made(api.get(f"{DOCS}/ana-lopez"))["document"]["content_hash"]
        page.click("#graph-edit-button")
        editor = page.locator("#graph-truth-text")
        expect(editor).to_have_value("Ana grows apples.")
        editor.press("End")
        editor.press_sequentially(f" And pears, says the {CITES}.", delay=15)
        saved = page.locator("#graph-save-state")
        expect(saved).to_have_attribute("data-state", "saved")
        assert len(truth_puts) == 1, truth_puts  # one save for the whole burst of typing
        edited = f"Ana grows apples. And pears, says the {CITES}."
        with server.client() as api:
            stored = made(api.get(f"{DOCS}/ana-lopez"))
        assert stored["truth"] == edited
        assert stored["document"]["content_hash"] != before
        page.click("#graph-done-button")
        expect(truth.locator("a.graph-evidence")).to_have_text("kickoff call")
        page.select_option("#graph-status", "active")
        expect(page.locator("#graph-meta")).to_contain_text("active")
        expect(page.locator("#graph-status-error")).to_be_hidden()

        # A reload opens the same page from its address, as saved.
        page.reload()
        expect(page.locator("#graph-title")).to_have_text("Ana López")
        expect(truth).to_contain_text("And pears")

        # Someone writes the page underneath an open editor: the autosave is refused, their
        # version is shown, the draft stays; keeping mine is a deliberate overwrite.
        page.click("#graph-edit-button")
        with server.client() as api:
            current = made(api.get(f"{DOCS}/ana-lopez"))["document"]["content_hash"]
            theirs = f"Ana grows plums now, per the {CITES}."
            underneath = {"truth": theirs, "expected_hash": current}
            made(api.put(f"{DOCS}/ana-lopez/truth", json=underneath))
        mine = f"Ana grows apples, pears and quinces ({CITES})."
        editor.fill(mine)
        expect(saved).to_have_attribute("data-state", "conflict")
        conflict = page.locator("#graph-conflict")
        expect(conflict).to_be_visible()
        expect(conflict).to_contain_text("Someone else changed this page")
        expect(conflict.locator("#graph-conflict-body")).to_contain_text("Ana grows plums now")
        expect(editor).to_have_value(mine)
        with server.client() as api:
            assert made(api.get(f"{DOCS}/ana-lopez"))["truth"] == theirs
        session.shot("04-conflict")
        page.click("#graph-keep-mine")
        expect(saved).to_have_attribute("data-state", "saved")
        expect(conflict).to_be_hidden()
        with server.client() as api:
            assert made(api.get(f"{DOCS}/ana-lopez"))["truth"] == mine
        page.click("#graph-done-button")
        expect(truth).to_contain_text("quinces")

        # A timeline entry, dated and sourced, arrives at the top.
        page.fill("#graph-entry-text", "Planted the quinces")
        page.fill("#graph-entry-at", "2026-06-01")
        page.fill("#graph-entry-source", "slack:C01/1719999")
        page.click("#graph-timeline-form button[type=submit]")
        expect(entries.first).to_contain_text("Planted the quinces")
        expect(entries.first).to_contain_text("source: slack:C01/1719999")
        session.shot("05-person")

        # Hostile Markdown is text: no script ran, no element came from it.
        page.evaluate("location.hash = '#brain/hostile-paste'")
        expect(page.locator("#graph-title")).to_have_text("Hostile paste")
        expect(truth).to_contain_text("<script>window.lociPwned = 1</script>")
        expect(truth.locator("script, img, [onerror], [onclick]")).to_have_count(0)
        expect(truth.locator("a[href^='javascript']")).to_have_count(0)
        expect(truth.locator("a.graph-page")).to_have_text("<img src=x onerror=window.lociPwned=3>")
        truth.locator("a.graph-page").hover()
        assert page.evaluate("window.lociPwned") is None

        # On a phone the page, with every control, fits the screen's width.
        page.set_viewport_size({"width": 390, "height": 844})
        page.evaluate("location.hash = '#brain/orchard-project'")
        expect(page.locator("#graph-title")).to_have_text("Orchard Project")
        page.click("#graph-edit-button")
        assert page.evaluate(HORIZONTAL_OVERFLOW) <= 0, "the page scrolls sideways on a phone"
        session.shot("06-phone")
        page.click("#graph-done-button")

        watch.assert_clean(
            ("GET", "/api/v1/me", 401),  # the first visit, before signing in
            ("PATCH", f"/api/v1{DOCS}/ana-lopez/fields", 400),  # active without evidence
            ("PUT", f"/api/v1{DOCS}/ana-lopez/truth", 409),  # the lost race
        )
    finally:
        session.shot("owner-last")
        page.context.close()

    # A viewer reads the same pages and gets no control to change them.
    _, vera = server.accounts.add_user("vera")
    with server.client() as api:
        made(api.put(f"/brains/{BRAIN}/members/vera", json={"role": "viewer"}))
    viewer = open_session(browser, server, "brain-viewer", viewport={"width": 1280, "height": 900})
    try:
        viewer.page.goto(server.url + "/#brain/orchard-project")
        sign_in(viewer.page, vera.secret)
        expect(viewer.page.locator("#graph-title")).to_have_text("Orchard Project")
        expect(viewer.page.locator(".graph-entry")).to_have_count(2)
        for control in ("#graph-controls", "#graph-edit-button", "#graph-timeline-form"):
            expect(viewer.page.locator(control)).to_be_hidden()
        expect(viewer.page.locator("#graph-status")).to_be_hidden()
        viewer.page.get_by_role("link", name="← All pages").click()
        expect(viewer.page.locator(".graph-group[data-folder='people']")).to_contain_text("Ana")
        viewer.shot("viewer")
        viewer.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        viewer.page.context.close()
    with server.client(vera.secret) as api:
        refused = api.put(f"{DOCS}/orchard-project/truth", json={"truth": "Vera was here."})
        assert refused.status_code == 403


class _Tags(HTMLParser):
    """Every element and attribute of an HTML fragment, as a browser's parser reads them."""

    def __init__(self) -> None:
        super().__init__()
        self.elements: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.elements.append((tag, dict(attrs)))


def elements(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.elements


def test_the_rendered_truth_is_sanitized_and_only_typed_links_become_page_links(
    server: LiveServer,
) -> None:
    with server.client() as api:
        made(api.post("/brains", json={"name": BRAIN}))
        text = (
            HOSTILE_TRUTH + "\n\nSee [[page:ana-lopez|Ana]], [[evidence:ev-call|the call]], "
            "[[source:jamie:meeting:7|notes]], not `[[page:code]]`."
        )
        made(api.post(DOCS, json={"type": "note", "title": "Paste", "text": text}))
        page = made(api.get(f"{DOCS}/paste"))
    html = page["html"]
    found = elements(html)
    assert {tag for tag, _ in found} <= {"p", "a", "span", "code"}, found
    for tag, attrs in found:
        assert not [name for name in attrs if name.startswith("on")], (tag, attrs)
        assert not (attrs.get("href") or "").lower().startswith("javascript"), attrs
    links = [(a.get("class"), a.get("href"), a.get("data-graph-id")) for t, a in found if t == "a"]
    assert links == [
        ("graph-link graph-page", "#brain/ana-lopez", "ana-lopez"),  # the hostile label's link
        ("graph-link graph-page", "#brain/ana-lopez", "ana-lopez"),
        ("graph-link graph-evidence", "#brain/ev-call", "ev-call"),
    ]
    # The raw anchor stays as text; so does a link written in code.
    assert '&lt;a href="#" onclick="window.lociPwned=5"' in html
    assert "<code>[[page:code]]</code>" in html
    assert '<span class="graph-source" title="jamie:meeting:7">notes</span>' in html
    assert page["truth"] == text  # the Markdown itself is kept as written
