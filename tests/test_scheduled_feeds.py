"""Feeds and web pages followed on a schedule, against a real web site on 127.0.0.1 whose feed
and pages change between runs: new entries become searchable documents, an unchanged feed is
one conditional request answered 304 that re-embeds nothing, a removed entry's document is
removed (or marked gone when the source keeps what is deleted), a feed that died (HTML, 404, a
redirect loop) is the source's last error and removes nothing, failures back off, a moved feed
is followed at its new address, and a re-checked page refreshes its document only when it
changed. On both backends: the schedule, its leases and its state are rows."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.errors import Forbidden, InvalidInput
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.service.sync_report import SourceSync
from tests.support.feeds import HTML, JSON_FEED, FeedSite, article, page, rss, rss_linking
from tests.support.services import make_service

pytestmark = [pytest.mark.both_backends, pytest.mark.fetches_loopback]

HOUR = 3600.0
OWNER = "test-worker"

TOMATOES = ("tomatoes", "Tomatoes", article("Tomatoes", "Pinch out tomato side shoots weekly."))
GARLIC = ("garlic", "Garlic", article("Garlic", "Plant garlic cloves before the first frost."))
LEEKS = ("leeks", "Leeks", article("Leeks", "Earth up leeks to blanch their stems."))


@pytest.fixture
def site() -> Iterator[FeedSite]:
    with FeedSite() as served:
        yield served


def found(loci: Loci, brain: Brain, query: str) -> list[str]:
    return [h.text for h in loci.searching.search(brain, SearchRequest(query, mode="text"))]


def run(loci: Loci, brain: Brain, source_id: int) -> SourceSync:
    """Run the source now, then index what it queued, as the worker would."""
    result = loci.scheduled.run_now(brain, source_id, OWNER)
    if result.queued:
        loci.library.wait_for(brain, result.queued)
    return result


def jobs(loci: Loci, brain: Brain) -> int:
    return len(loci.store.list_jobs(brain.id, 10_000))


def test_a_feed_s_entries_become_searchable_and_an_unchanged_feed_costs_one_304(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([TOMATOES, GARLIC]))
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR)
    assert source.kind == "feed" and source.every_s == HOUR  # told by what it answered

    first = run(loci, brain, source.id)
    assert (first.added, first.unreachable, first.failed) == (2, None, [])
    assert any("side shoots" in t for t in found(loci, brain, "tomato side shoots"))
    titles = sorted(d.title or "" for d in loci.library.documents(brain))
    assert titles == ["Garlic", "Tomatoes"]

    before_jobs, before_requests = jobs(loci, brain), len(site.requests)
    again = run(loci, brain, source.id)
    assert again.unchanged == 2 and again.added == again.updated == again.removed == 0
    assert site.requests[before_requests:] == [site.requests[-1]]  # one request ...
    assert site.requests[-1].conditional and site.requests[-1].status == 304  # ... a 304
    assert jobs(loci, brain) == before_jobs  # nothing parsed or embedded again

    site.put("/feed.xml", rss([LEEKS, TOMATOES, GARLIC]))
    third = run(loci, brain, source.id)
    assert (third.added, third.unchanged, third.updated) == (1, 2, 0)
    assert any("blanch" in t for t in found(loci, brain, "earth up leeks blanch"))
    shown = loci.sources.get(brain, source.id)
    assert shown.last_error is None and shown.failures == 0
    assert shown.last_report is not None and shown.last_report["added"] == 1


def test_an_edited_entry_refreshes_its_document_and_a_removed_one_is_removed(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([TOMATOES, GARLIC]))
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR, kind="feed")
    run(loci, brain, source.id)
    garlic = next(d for d in loci.library.documents(brain) if d.title == "Garlic")

    edited = ("garlic", "Garlic", article("Garlic", "Plant garlic in October, pointy end up."))
    site.put("/feed.xml", rss([edited]))  # garlic edited, tomatoes gone
    result = run(loci, brain, source.id)
    assert (result.updated, result.removed, result.added) == (1, 1, 0)
    (left,) = loci.library.documents(brain)
    assert left.id == garlic.id  # the same document, refreshed in place
    assert any("pointy end" in t for t in found(loci, brain, "garlic pointy end"))
    assert not found(loci, brain, "tomato side shoots")
    assert len(loci.versions.list(brain, left.id).versions) == 1  # the old text kept


def test_with_keep_an_entry_gone_upstream_is_marked_gone_and_comes_back(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([TOMATOES, GARLIC]))
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR, on_delete="keep")
    run(loci, brain, source.id)
    site.put("/feed.xml", rss([GARLIC]))
    result = run(loci, brain, source.id)
    assert (result.gone, result.removed) == (1, 0)
    gone = {d.title: d.gone_at for d in loci.library.documents(brain)}
    assert gone["Tomatoes"] is not None and gone["Garlic"] is None

    site.put("/feed.xml", rss([TOMATOES, GARLIC]))
    back = run(loci, brain, source.id)
    assert back.returned == 1 and back.added == 0
    assert all(d.gone_at is None for d in loci.library.documents(brain))


def test_entries_without_their_text_are_fetched_as_the_pages_they_link_to(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/a", page("Compost", "Turn the compost heap every fortnight in summer."), HTML)
    site.put("/b", page("Mulch", "Mulch fruit bushes with bark in late winter."), HTML)
    feed = rss_linking([("a", "Compost", site.url("/a")), ("b", "Mulch", site.url("/b"))])
    site.put("/links.xml", feed)
    source = loci.scheduled.add(brain, site.url("/links.xml"), HOUR)
    assert run(loci, brain, source.id).added == 2
    assert site.count("/a") == 1 and site.count("/b") == 1
    assert any("fortnight" in t for t in found(loci, brain, "compost heap fortnight"))
    (compost,) = [d for d in loci.library.documents(brain) if d.title == "Compost"]
    assert compost.source_url == site.url("/a") and compost.kind == "web"

    run(loci, brain, source.id)  # the feed answers 304: no page is asked for again
    assert site.count("/a") == 1 and site.count("/b") == 1


def test_a_json_feed_is_read_too(loci: Loci, brain: Brain, site: FeedSite) -> None:
    feed = (
        '{"version": "https://jsonfeed.org/version/1.1", "title": "Bees", "items": ['
        '{"id": "1", "title": "Swarms", "content_text": "A swarm in May is worth a load of hay."}'
        "]}"
    )
    site.put("/feed.json", feed, JSON_FEED)
    source = loci.scheduled.add(brain, site.url("/feed.json"), HOUR)
    assert source.kind == "feed" and run(loci, brain, source.id).added == 1
    assert any("load of hay" in t for t in found(loci, brain, "swarm in May hay"))


@pytest.mark.parametrize("death", ["html", "404", "410", "loop", "garbage"])
def test_a_feed_that_died_is_the_last_error_and_removes_nothing(
    loci: Loci, brain: Brain, site: FeedSite, death: str
) -> None:
    site.put("/feed.xml", rss([TOMATOES, GARLIC]))
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR)
    run(loci, brain, source.id)
    if death == "html":
        site.put("/feed.xml", page("Domain for sale", "This domain is for sale."), HTML)
    elif death in ("404", "410"):
        site.fail("/feed.xml", int(death))
    elif death == "loop":
        site.redirect("/feed.xml", site.url("/elsewhere.xml"), 302)
        site.redirect("/elsewhere.xml", site.url("/feed.xml"), 302)
    else:
        site.put("/feed.xml", "<rss><channel><item>unclosed", "application/rss+xml")
    result = run(loci, brain, source.id)
    expected = {
        "html": "HTML page, not a feed",
        "404": "HTTP 404",
        "410": "HTTP 410",
        "loop": "too many redirects",
        "garbage": "not a feed Loci can read",
    }[death]
    assert result.unreachable is not None and expected in result.unreachable
    shown = loci.sources.get(brain, source.id)
    assert shown.last_error is not None and expected in shown.last_error
    assert shown.failures == 1
    assert len(loci.library.documents(brain)) == 2  # nothing removed
    assert all(d.gone_at is None for d in loci.library.documents(brain))


def test_failures_in_a_row_wait_longer_each_time_and_a_success_resets_them(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.fail("/feed.xml", 503)
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR, kind="feed")
    waits = []
    for failures in (1, 2, 3):
        loci.scheduled.run_now(brain, source.id, OWNER)
        shown = loci.sources.get(brain, source.id)
        assert shown.failures == failures and shown.next_run_at is not None
        waits.append(shown.next_run_at - loci.store.source_clock())
    assert waits[0] > HOUR and waits[1] > 1.9 * waits[0] and waits[2] > 1.9 * waits[1]

    site.put("/feed.xml", rss([GARLIC]))
    assert run(loci, brain, source.id).added == 1
    shown = loci.sources.get(brain, source.id)
    assert shown.failures == 0 and shown.last_error is None and shown.next_run_at is not None
    assert HOUR - 60 < shown.next_run_at - loci.store.source_clock() <= HOUR


def test_a_feed_moved_for_good_is_followed_at_its_new_address(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/new.xml", rss([GARLIC]))
    site.redirect("/old.xml", site.url("/new.xml"), 301)
    source = loci.scheduled.add(brain, site.url("/old.xml"), HOUR, kind="feed")
    result = run(loci, brain, source.id)
    assert result.added == 1
    moved = loci.sources.get(brain, source.id)
    assert moved.path == site.url("/new.xml")
    assert moved.last_report is not None and moved.last_report["moved_to"] == site.url("/new.xml")
    asked = site.count("/old.xml")
    run(loci, brain, source.id)
    assert site.count("/old.xml") == asked  # asked at its new address only
    assert site.requests[-1].path == "/new.xml" and site.requests[-1].status == 304


def test_a_page_is_refreshed_when_it_changes_and_costs_one_request_when_not(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/rota", page("Watering rota", "Amal waters the greenhouse on Mondays."), HTML)
    source = loci.scheduled.add(brain, site.url("/rota"), HOUR)
    assert source.kind == "page"
    assert run(loci, brain, source.id).added == 1
    (doc,) = loci.library.documents(brain)

    before_jobs, before = jobs(loci, brain), len(site.requests)
    assert run(loci, brain, source.id).unchanged == 1
    assert len(site.requests) == before + 1 and site.requests[-1].status == 304
    assert jobs(loci, brain) == before_jobs

    site.put("/rota", page("Watering rota", "Bea waters the greenhouse on Mondays now."), HTML)
    assert run(loci, brain, source.id).updated == 1
    (now,) = loci.library.documents(brain)
    assert now.id == doc.id and len(loci.versions.list(brain, now.id).versions) == 1
    assert any("Bea waters" in t for t in found(loci, brain, "Bea waters greenhouse"))


def test_a_page_without_validators_sent_again_unchanged_re_embeds_nothing(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/plain", page("Seed swap", "The seed swap is in the village hall."), HTML, False)
    site.put("/other", page("Tools", "Return borrowed tools to the shed."), HTML, False)
    source = loci.scheduled.add(
        brain, site.url("/plain"), HOUR, kind="page", options={"urls": [site.url("/other")]}
    )
    assert run(loci, brain, source.id).added == 2
    before_jobs = jobs(loci, brain)
    again = run(loci, brain, source.id)
    assert again.unchanged == 2 and jobs(loci, brain) == before_jobs

    site.fail("/other", 500)  # one page failing fails alone and keeps its document
    third = run(loci, brain, source.id)
    assert third.unreachable is None and [f.path for f in third.failed] == [site.url("/other")]
    assert len(loci.library.documents(brain)) == 2


def test_the_schedule_and_its_state_survive_a_restart(
    tmp_path: Path, embedder: Embedder, database_url: str | None, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([GARLIC]))
    home = tmp_path / "restart"
    first = make_service(home, embedder, database_url, fetch_allowed_networks=["127.0.0.1/32"])
    brain = first.brain("default")
    source = first.scheduled.add(brain, site.url("/feed.xml"), HOUR)
    assert first.scheduled.run_due(OWNER) is not None  # due at once after it is added
    assert first.scheduled.run_due(OWNER) is None  # next due in an hour
    first.store.close()

    second = make_service(home, embedder, database_url, fetch_allowed_networks=["127.0.0.1/32"])
    try:
        brain = second.brain("default")
        kept = second.sources.get(brain, source.id)
        assert (kept.kind, kept.every_s, kept.failures) == ("feed", HOUR, 0)
        assert kept.next_run_at is not None and kept.next_run_at > second.store.source_clock()
        assert kept.state.get("etag")  # the validators the next run sends
        assert second.scheduled.run_due(OWNER) is None
        again = second.scheduled.run_now(brain, source.id, OWNER)
        assert again.unchanged == 1 and site.requests[-1].status == 304
    finally:
        second.store.close()


def test_a_followed_feed_is_removed_with_its_documents_or_without(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([TOMATOES, GARLIC]))
    source = loci.scheduled.add(brain, site.url("/feed.xml"), HOUR)
    run(loci, brain, source.id)
    _, removed = loci.sources.remove(brain, source.id, keep_documents=False)
    assert removed == 2 and loci.library.documents(brain) == []
    assert loci.sources.list(brain) == []


def test_bad_sources_are_refused_with_their_reason(
    loci: Loci, brain: Brain, site: FeedSite
) -> None:
    site.put("/feed.xml", rss([GARLIC]))
    with pytest.raises(InvalidInput, match="at most every 60"):
        loci.scheduled.add(brain, site.url("/feed.xml"), 5)
    with pytest.raises(InvalidInput, match="no source kind"):
        loci.scheduled.add(brain, site.url("/feed.xml"), HOUR, kind="gopher")
    with pytest.raises(InvalidInput, match="content"):
        loci.scheduled.add(
            brain, site.url("/feed.xml"), HOUR, kind="feed", options={"content": "x"}
        )
    with pytest.raises(Forbidden, match="LOCI_SOURCES_ALLOWED_HOSTS"):
        loci.scheduled.add(brain, site.url("/feed.xml"), HOUR, confined=True)
    loci.scheduled.add(brain, site.url("/feed.xml"), HOUR)
    with pytest.raises(InvalidInput, match="already source"):
        loci.scheduled.add(brain, site.url("/feed.xml"), HOUR)
    assert len(loci.sources.list(brain)) == 1
