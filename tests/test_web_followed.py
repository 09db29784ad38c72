"""Feeds and pages followed on a schedule, in the Sources panel of a real Chromium over a real
server whose worker runs them, against a real web site on 127.0.0.1: an admin follows a feed
from the form (by keyboard, a host the server does not allow is refused with the server's
reason), the worker's first check shows on the card — its kind, address, schedule, last and
next check and what the check did — "Check now" brings a new entry in at once and its words are
searchable; a feed that died shows why in plain words, its failed entries are listed as a
folder's failed files are, on a phone too; a check under way shows on its card and its end
arrives without a reload; a viewer sees the cards but no form and no buttons; the owner stops
following, removing what the feed brought. Each state passes axe's serious checks.

Screenshots land in $LOCI_TEST_ARTIFACTS/followed-*/.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, expect

from loci.embed.base import Embedder
from loci.service import Loci
from tests.support.accessibility import violations
from tests.support.browser import chromium
from tests.support.feeds import FeedSite, article, rss, rss_linking
from tests.support.live_server import LiveServer
from tests.support.services import make_service
from tests.support.web_app import HORIZONTAL_OVERFLOW, INDEXING_TIMEOUT_MS, open_session, sign_in

# The worker looks for due sources every few seconds: a first check is a state waited for.
RUN_TIMEOUT_MS = 30_000

HIVE = ("hive", "Hive checks", article("Hive checks", "Look for queen cells every nine days."))
SWARM = ("swarm", "Swarms", article("Swarms", "A swarm settles on a branch before it moves."))
HONEY = ("honey", "Honey", article("Honey", "Extract honey once the frames are capped."))
FOLLOWED = "/api/v1/brains/bees/followed"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as launched:
        yield launched


@pytest.fixture
def site() -> Iterator[FeedSite]:
    with FeedSite() as served:
        yield served


@pytest.fixture
def shared(tmp_path: Path, embedder: Embedder) -> Iterator[LiveServer]:
    """A server (with its worker) whose admins may follow feeds on 127.0.0.1 only, the test's
    site, and a brain "bees"."""
    loci: Loci = make_service(
        tmp_path / "home",
        embedder,
        job_retry_base_s=0.01,
        fetch_allowed_networks=["127.0.0.1/32"],
        sources_allowed_hosts=["127.0.0.1"],
    )
    live = LiveServer(loci).start()
    with live.client() as api:
        assert api.post("/brains", json={"name": "bees"}).status_code == 201
    yield live
    live.stop()
    loci.store.close()


def follow(page: Page, url: str, every: str = "3600", kind: str = "") -> None:
    """Fill in and send the form to follow a feed or page (opening it first if closed)."""
    details = page.locator("#follow-details")
    if details.get_attribute("open") is None:
        details.locator("summary").click()
    page.get_by_label("Address of the feed or page").fill(url)
    page.get_by_label("How often", exact=True).select_option(every)
    page.get_by_label("What it is", exact=True).select_option(kind)
    page.get_by_role("button", name="Follow feed or page").click()


def test_an_admin_follows_a_feed_checks_it_now_and_finds_its_entries(
    browser: Browser, shared: LiveServer, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([HIVE, SWARM]))
    url = site.url("/feed.xml")
    session = open_session(
        browser, shared, "followed-feed", viewport={"width": 1280, "height": 1000}
    )
    page = session.page
    try:
        page.goto(shared.url)
        sign_in(page, shared.owner_token)
        expect(page.locator("#sources-heading")).to_have_text("Sources this brain follows")
        expect(page.locator("#follow-details")).to_be_visible()

        # By keyboard, a host the server does not list: refused with the server's own reason,
        # the address kept as typed.
        elsewhere = url.replace("127.0.0.1", "localhost")
        page.locator("#follow-details summary").focus()
        page.keyboard.press("Enter")
        address = page.get_by_label("Address of the feed or page")
        expect(address).to_be_visible()
        address.focus()
        page.keyboard.type(elsewhere)
        page.keyboard.press("Enter")
        refusal = page.locator("#follow-error")
        expect(refusal).to_contain_text("is not among the hosts this server lets sources follow")
        expect(refusal).to_contain_text("LOCI_SOURCES_ALLOWED_HOSTS")
        expect(address).to_have_value(elsewhere)
        expect(address).to_be_focused()
        expect(page.locator(".source")).to_have_count(0)

        follow(page, url)
        expect(refusal).to_be_hidden()
        card = page.locator(".followed-source")
        expect(card).to_have_count(1)
        expect(card.locator(".source-kind")).to_have_text("Feed")
        expect(card.locator(".source-path")).to_have_text(url)
        expect(card.locator(".source-path")).to_be_focused()
        expect(card.locator(".source-schedule")).to_have_text("Checked every 1 h")
        # The worker's first check, followed by the panel to its end.
        counts = card.locator(".source-counts")
        expect(counts).to_have_text(
            "2 added · 0 updated · 0 removed · 0 unchanged · 0 failed", timeout=RUN_TIMEOUT_MS
        )
        expect(card.locator(".source-state")).to_contain_text("Last checked just now")
        expect(card.locator(".source-next")).to_have_text("Next check in 1 h")
        assert not violations(page), violations(page)
        session.shot("01-first-check")

        # A new entry: Check now brings it in at once, not in an hour.
        site.put("/feed.xml", rss([HIVE, SWARM, HONEY]))
        card.get_by_role("button", name=f"Check now: {url}").click()
        expect(page.locator("#sync-result")).to_have_text("Checked: 1 added, 2 unchanged.")
        expect(counts).to_have_text("1 added · 0 updated · 0 removed · 2 unchanged · 0 failed")
        expect(card.locator(".source-path")).to_be_focused()
        ready = page.locator('.doc-row[data-status="ready"]')
        expect(ready).to_have_count(3, timeout=INDEXING_TIMEOUT_MS)
        session.shot("02-checked-now")

        page.locator('.tab[data-panel="search"]').click()
        page.fill("#search-input", "capped frames")
        page.click("#search-form button[type=submit]")
        expect(page.locator(".hit").first).to_contain_text("Extract honey")

        # Stop following, removing what it brought: the dialog names the feed.
        page.locator('.tab[data-panel="files"]').click()
        page.get_by_role("button", name=f"Stop following {url}").click()
        expect(page.locator("#unfollow-title")).to_have_text("Stop following this feed?")
        expect(page.locator("#unfollow-cancel")).to_be_focused()
        assert not violations(page), violations(page)
        page.click("#unfollow-remove")
        expect(page.locator("#sources-empty")).to_be_visible()
        expect(page.locator(".doc-row")).to_have_count(0)
        session.watch.assert_clean(("GET", "/api/v1/me", 401), ("POST", FOLLOWED, 403))
    finally:
        session.shot("last")
        page.context.close()


def test_a_dead_feed_says_why_and_its_failed_entries_show_on_a_phone(
    browser: Browser, shared: LiveServer, site: FeedSite
) -> None:
    site.fail("/gone.xml", 404)
    # A feed whose one entry links to a page that is not there: that entry fails alone.
    site.put("/links.xml", rss_linking([("lost", "Lost page", site.url("/lost"))]))
    gone, links = site.url("/gone.xml"), site.url("/links.xml")
    phone = {"width": 390, "height": 844}
    session = open_session(browser, shared, "followed-dead", viewport=phone, is_mobile=True)
    page = session.page
    try:
        page.goto(shared.url)
        sign_in(page, shared.owner_token)
        # Told it is a feed, the address is not asked first: the check finds it dead.
        follow(page, gone, every="900", kind="feed")
        dead = page.locator(".followed-source", has=page.locator(".source-path", has_text=gone))
        expect(dead.locator(".source-schedule")).to_have_text("Checked every 15 min")
        expect(dead).to_have_attribute("data-state", "failing", timeout=RUN_TIMEOUT_MS)
        expect(dead.locator(".source-state")).to_have_text(
            "The last check failed just now: nothing is at this address any more:"
            " it may have moved or closed."
        )
        expect(dead.locator(".source-error-detail")).to_contain_text("HTTP 404")
        expect(dead.locator(".source-counts")).to_have_count(0)

        follow(page, links, every="86400")
        linked = page.locator(".followed-source", has=page.locator(".source-path", has_text=links))
        expect(linked.locator(".source-schedule")).to_have_text("Checked every 1 day")
        expect(linked.locator(".source-next")).to_have_text(
            "Next check in 1 day", timeout=RUN_TIMEOUT_MS
        )
        expect(linked.locator(".source-counts")).to_have_text(
            "0 added · 0 updated · 0 removed · 0 unchanged · 1 failed", timeout=RUN_TIMEOUT_MS
        )
        failures = linked.locator(".source-failures")
        expect(failures.locator("summary")).to_have_text("1 entry could not be taken")
        failures.locator("summary").click()
        expect(failures.locator(".source-file")).to_have_text("Lost page")
        expect(failures.locator(".reason")).to_contain_text("HTTP 404")

        assert page.evaluate(HORIZONTAL_OVERFLOW) <= 0, "the panel scrolls sideways on a phone"
        assert not violations(page), violations(page)
        session.shot("01-dead-and-failed")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        session.shot("last")
        page.context.close()


def test_a_check_under_way_shows_on_its_card_and_its_end_arrives_by_itself(
    browser: Browser, shared: LiveServer, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([HIVE]))
    url = site.url("/feed.xml")
    release = site.hold("/feed.xml")  # the worker's first check waits at the site
    loci = shared.loci
    loci.scheduled.add(loci.brain("bees"), url, 3600.0, kind="feed")
    session = open_session(
        browser, shared, "followed-running", viewport={"width": 1280, "height": 900}
    )
    page = session.page
    try:
        page.goto(shared.url)
        sign_in(page, shared.owner_token)
        card = page.locator(".followed-source")
        expect(card.locator(".source-state")).to_have_text(
            "Being checked right now…", timeout=RUN_TIMEOUT_MS
        )
        expect(card.get_by_role("button", name=f"Check now: {url}")).to_be_disabled()
        assert site.arrived["/feed.xml"].wait(30)  # the run is at the site, not yet done
        session.shot("01-running")
        release.set()
        expect(card.locator(".source-counts")).to_have_text(
            "1 added · 0 updated · 0 removed · 0 unchanged · 0 failed", timeout=RUN_TIMEOUT_MS
        )
        expect(card.get_by_role("button", name=f"Check now: {url}")).to_be_enabled()
        # The run's entry reaches the Files list without a reload.
        expect(page.locator(".doc-row")).to_have_count(1)
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        release.set()
        page.context.close()


def test_a_viewer_sees_the_cards_but_no_form_and_no_buttons(
    browser: Browser, shared: LiveServer, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([HIVE]))
    url = site.url("/feed.xml")
    loci = shared.loci
    brain = loci.brain("bees")
    loci.scheduled.add(brain, url, 6 * 3600.0, kind="feed")  # the worker checks it at once
    _, ana = shared.accounts.add_user("ana")
    with shared.client() as api:
        assert api.put("/brains/bees/members/ana", json={"role": "viewer"}).status_code < 300

    session = open_session(
        browser, shared, "followed-viewer", viewport={"width": 1280, "height": 900}
    )
    page = session.page
    try:
        page.goto(shared.url)
        sign_in(page, ana.secret)
        card = page.locator(".followed-source")
        expect(card.locator(".source-path")).to_have_text(url)
        expect(card.locator(".source-schedule")).to_have_text("Checked every 6 h")
        expect(card.locator(".source-counts")).to_have_text(
            "1 added · 0 updated · 0 removed · 0 unchanged · 0 failed", timeout=RUN_TIMEOUT_MS
        )
        expect(card.get_by_role("button")).to_have_count(0)
        expect(page.locator("#follow-details")).to_be_hidden()
        expect(page.locator("#source-form")).to_be_hidden()
        expect(page.locator("#sync-button")).to_be_hidden()
        assert not violations(page), violations(page)
        session.shot("01-viewer")
        session.watch.assert_clean(("GET", "/api/v1/me", 401))
    finally:
        page.context.close()
