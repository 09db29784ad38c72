"""The brain graph made and drawn in a real Chromium over a real server: a person creates pages
and a link, renames, moves and merges them — refused as the API refuses (an id taken, a folder
name it does not take, a stale version) — and "Links to pages" names each page once; the graph
view draws the pages and links, filters them by type and folder, and opens a page on a click.

Screenshots land in $LOCI_TEST_ARTIFACTS/graph-*/.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from playwright.sync_api import Browser, Page, expect

from tests.support.browser import chromium
from tests.support.live_server import LiveServer, made
from tests.support.web_app import open_session, sign_in

BRAIN = "garden"
DOCS = f"/brains/{BRAIN}/graph/documents"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


def new_page(page: Page, kind: str, title: str, folder: str = "", text: str = "") -> None:
    page.click("#new-page-button")
    page.select_option("#page-type", kind)
    page.fill("#page-title", title)
    page.fill("#page-folder", folder)
    page.fill("#page-text", text)
    page.click("#page-form button[type=submit]")


def open_organize(page: Page) -> None:
    organize = page.locator("#graph-organize")
    if not organize.evaluate("details => details.open"):
        organize.locator("summary").click()


def test_a_person_creates_links_renames_moves_and_merges_pages(
    browser: Browser, server: LiveServer
) -> None:
    with server.client() as api:
        made(api.post("/brains", json={"name": BRAIN}))
    session = open_session(browser, server, "graph-edit", viewport={"width": 1280, "height": 900})
    page = session.page
    try:
        page.goto(server.url + "/#brain")
        sign_in(page, server.owner_token)
        expect(page.locator("#graph-summary")).to_contain_text("No pages yet")

        new_page(page, "person", "Ana López")
        expect(page.locator("#graph-title")).to_have_text("Ana López")
        expect(page).to_have_url(f"{server.url}/#brain/ana-lopez")
        expect(page.locator("#graph-meta")).to_contain_text("people/ana-lopez.md")
        # The same title again is the same id: refused with the API's reason, nothing made.
        new_page(page, "person", "Ana López")
        expect(page.locator("#page-error")).to_contain_text("ana-lopez")
        page.locator("#page-dialog").get_by_role("button", name="Close").click()
        # A folder name the API does not take is refused the same way.
        new_page(page, "project", "Orchard", folder="Bad Folder")
        expect(page.locator("#page-error")).to_be_visible()
        page.fill("#page-folder", "")
        page.fill("#page-text", "Led by [[page:ana-lopez|Ana]].")
        page.click("#page-form button[type=submit]")
        expect(page.locator("#graph-title")).to_have_text("Orchard")

        # A typed link to the page the text already links to: listed once, with its relation.
        open_organize(page)
        page.fill("#graph-link-relation", "led_by")
        page.fill("#graph-link-target", "ana-lopez")
        page.get_by_role("button", name="Add link").click()
        links = page.locator("#graph-links li")
        expect(links).to_have_count(1)
        expect(links.first).to_contain_text("Ana López")
        expect(links.first).to_contain_text("led_by")
        with server.client() as api:
            edges = made(api.get(f"{DOCS}/orchard"))["links"]
            assert sorted(e["type"] for e in edges if e["target"] == "ana-lopez") == [
                "led_by",
                "wiki_link",
            ]

        # Renamed, then moved to another folder and id: links from other pages follow.
        open_organize(page)
        page.fill("#graph-rename-title", "Orchard Project")
        page.get_by_role("button", name="Rename").click()
        expect(page.locator("#graph-title")).to_have_text("Orchard Project")
        page.fill("#graph-move-folder", "projects/2026")
        page.fill("#graph-move-id", "orchard-2026")
        page.get_by_role("button", name="Move").click()
        expect(page).to_have_url(f"{server.url}/#brain/orchard-2026")
        expect(page.locator("#graph-meta")).to_contain_text("projects/2026/orchard-2026.md")
        session.shot("01-moved")

        # Someone changes the page meanwhile: the next edit here is refused as stale.
        with server.client() as api:
            current = made(api.get(f"{DOCS}/orchard-2026"))["document"]
            made(
                api.patch(
                    f"{DOCS}/orchard-2026/fields",
                    json={
                        "fields": {"title": "Orchard (edited)"},
                        "expected_hash": current["content_hash"],
                    },
                )
            )
        open_organize(page)
        page.fill("#graph-rename-title", "Orchard Plan")
        page.get_by_role("button", name="Rename").click()
        expect(page.locator("#graph-organize-error")).to_contain_text("Open the page again")

        # A duplicate person merged into the first: the duplicate points at the survivor.
        new_page(page, "person", "Ana Lopez dup")
        expect(page.locator("#graph-title")).to_have_text("Ana Lopez dup")
        open_organize(page)
        page.fill("#graph-merge-into", "ana-lopez")
        page.locator("#graph-merge-form").get_by_role("button", name="Merge").click()
        page.click("#confirm-yes")
        expect(page).to_have_url(f"{server.url}/#brain/ana-lopez")
        expect(page.locator("#graph-meta")).to_contain_text("Ana Lopez dup")  # kept as an alias
        with server.client() as api:
            dup = made(api.get(f"{DOCS}/ana-lopez-dup"))["document"]
            assert dup["status"] == "merged" and dup["merged_into"] == "ana-lopez"
        session.shot("02-merged")
        session.watch.assert_clean(
            ("GET", "/api/v1/me", 401),
            ("POST", f"/api/v1{DOCS}", 409),  # the id taken
            ("POST", f"/api/v1{DOCS}", 422),  # the folder name
            ("PATCH", f"/api/v1{DOCS}/orchard-2026/fields", 409),  # the stale version
        )
    finally:
        page.context.close()


TYPES = ("person", "project", "concept")


def test_the_graph_view_draws_filters_and_opens_pages(browser: Browser, server: LiveServer) -> None:
    # 30 pages in three folders, each linking to the next two; ten of each type.
    with server.client() as api:
        made(api.post("/brains", json={"name": BRAIN}))
        for n in range(30):
            links = " ".join(f"[[page:p{(n + k) % 30:02}|next]]" for k in (1, 2))
            made(
                api.post(
                    DOCS,
                    json={
                        "type": TYPES[n % 3],
                        "title": f"Page {n:02}",
                        "id": f"p{n:02}",
                        "folder": f"area-{n % 3}",
                        "text": links,
                    },
                )
            )
    session = open_session(browser, server, "graph-view", viewport={"width": 1280, "height": 900})
    page = session.page
    try:
        page.goto(server.url + "/#brain")
        sign_in(page, server.owner_token)
        page.click("#graph-show-graph")
        canvas = page.locator("#graph-canvas")
        expect(canvas).to_have_attribute("data-nodes", "30")
        expect(canvas).to_have_attribute("data-links", "60")
        expect(canvas).to_have_attribute("data-settled", "true")
        expect(page.locator("#graph-canvas-summary")).to_have_text("30 pages and 60 links drawn.")
        session.shot("01-graph")

        page.select_option("#graph-type-filter", "person")
        expect(canvas).to_have_attribute("data-nodes", "10")
        page.select_option("#graph-type-filter", "")
        page.select_option("#graph-folder-filter", "area-1")
        expect(canvas).to_have_attribute("data-nodes", "10")
        page.select_option("#graph-folder-filter", "")
        page.click("#graph-zoom-in")
        page.click("#graph-zoom-reset")

        # A click on a node opens its page.
        page.wait_for_timeout(400)  # the zoom's animation (200 ms) ends
        canvas.scroll_into_view_if_needed()
        at = page.evaluate("window.lociGraphNode('p07')")
        box = canvas.bounding_box()
        assert at and box
        page.mouse.click(box["x"] + at["x"], box["y"] + at["y"])
        expect(page.locator("#graph-title")).to_have_text("Page 07")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        page.context.close()


def test_the_graph_view_names_its_pages_and_says_what_to_do_when_empty(
    browser: Browser, server: LiveServer
) -> None:
    with server.client() as api:
        made(api.post("/brains", json={"name": BRAIN}))
    session = open_session(browser, server, "graph-labels", viewport={"width": 1280, "height": 900})
    page = session.page
    try:
        page.goto(server.url + "/#brain")
        sign_in(page, server.owner_token)
        page.click("#graph-show-graph")
        empty = page.locator("#graph-canvas-empty")
        expect(empty).to_be_visible()
        expect(empty).to_contain_text("This brain has no pages yet")
        expect(empty).to_contain_text("New page")
        expect(page.locator("#graph-canvas")).to_be_hidden()  # no blank canvas
        session.shot("01-empty")

        # 20 pages, a few of them linked: each drawn with its title, spread over the canvas.
        with server.client() as api:
            for n in range(20):
                links = f"[[page:g{(n + 1) % 20:02}|next]]" if n % 4 == 0 else "No links yet."
                made(
                    api.post(
                        DOCS,
                        json={"type": TYPES[n % 3], "title": f"Topic {n:02}", "id": f"g{n:02}",
                              "text": links},
                    )
                )  # fmt: skip
        page.reload()
        page.click("#graph-show-graph")
        canvas = page.locator("#graph-canvas")
        expect(canvas).to_have_attribute("data-nodes", "20")
        expect(canvas).to_have_attribute("data-settled", "true")
        expect(empty).to_be_hidden()
        labelled = page.evaluate("window.lociGraphLabels()")
        assert len(labelled) >= 18, labelled  # titles at the zoom it opens with
        spots = [page.evaluate(f"window.lociGraphNode('g{n:02}')") for n in range(20)]
        xs, ys = [s["x"] for s in spots], [s["y"] for s in spots]
        assert max(xs) - min(xs) > 100 and max(ys) - min(ys) > 100  # a plane, not a line
        session.shot("02-twenty-pages")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        page.context.close()
