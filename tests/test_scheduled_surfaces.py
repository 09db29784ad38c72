"""Feeds and pages followed on a schedule, as a person and an agent reach them: `loci sources
add URL --every 1h`, `loci sources sync ID` and `loci sources list` (kind, last run, next run,
counts, the last error, within 80 columns); over the HTTP API an admin follows a feed on an
allowed host and runs it, a member who is not an admin and a host not allowed are refused and
nothing is stored; MCP's `list_sources` shows the new fields."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp import Client

from loci.embed.base import Embedder
from loci.service import Loci
from tests.support.cli import run_cli, run_cli_process
from tests.support.feeds import HTML, FeedSite, page, rss
from tests.support.live_server import LiveServer
from tests.support.mcp_http import over_http
from tests.support.mcp_results import ok
from tests.support.services import make_service

LOOPBACK = {"LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32"}
HIVE = ("hive", "Hive checks", "<p>" + "Check the hive for queen cells every nine days. " * 30)


@pytest.fixture
def site() -> Iterator[FeedSite]:
    with FeedSite() as served:
        served.put("/feed.xml", rss([HIVE]))
        yield served


def test_the_cli_follows_a_feed_runs_it_and_lists_it_in_80_columns(
    site: FeedSite, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    added = run_cli(
        "sources", "add", site.url("/feed.xml"), "--every", "1h", "--json", home=home, env=LOOPBACK
    )
    assert added.returncode == 0, added.stderr
    row = json.loads(added.stdout)
    assert (row["kind"], row["every_s"], row["next_run_at"] is not None) == ("feed", 3600, True)

    synced = run_cli("sources", "sync", str(row["id"]), "--json", home=home, env=LOOPBACK)
    assert synced.returncode == 0, synced.stderr
    assert json.loads(synced.stdout)["added"] == 1
    found = run_cli("search", "queen cells", "--json", home=home)
    assert "queen cells" in json.loads(found.stdout)["hits"][0]["text"]

    site.fail("/feed.xml", 404)
    failed = run_cli("sources", "sync", str(row["id"]), home=home, env=LOOPBACK)
    assert failed.returncode != 0 and "404" in failed.stdout

    (listed,) = json.loads(run_cli("sources", "list", "--json", home=home).stdout)
    assert listed["kind"] == "feed" and listed["failures"] == 1
    assert "HTTP 404" in listed["last_error"] and listed["last_sync_at"]
    table = run_cli_process("sources", "list", home=home, env={"COLUMNS": "80"}).stdout
    assert all(len(line) <= 80 for line in table.splitlines()), table
    assert "feed" in table and "failing" in table and "HTTP 404" in table

    refused = run_cli("sources", "add", site.url("/feed.xml"), home=home, env=LOOPBACK)
    assert refused.returncode != 0 and "--every" in refused.stderr
    wrong = run_cli("sources", "add", site.url("/x"), "--every", "soon", home=home, env=LOOPBACK)
    assert wrong.returncode != 0 and "not a period" in wrong.stderr


def test_the_cli_tells_a_page_from_a_feed(site: FeedSite, tmp_path: Path) -> None:
    home = tmp_path / "home"
    site.put("/rules", page("Hive rules", "Wear a veil near the hives."), HTML)
    added = run_cli(
        "sources", "add", site.url("/rules"), "--every", "1d", "--json", home=home, env=LOOPBACK
    )
    assert added.returncode == 0, added.stderr
    assert json.loads(added.stdout)["kind"] == "page"


@pytest.fixture(params=["sqlite", "postgres"])
def shared(
    tmp_path: Path, embedder: Embedder, request: pytest.FixtureRequest, site: FeedSite
) -> Iterator[LiveServer]:
    """A server whose admins may follow feeds on 127.0.0.1 only (the test's site)."""
    url = None
    if request.param == "postgres":
        url = request.getfixturevalue("postgres_server").new_database()
    service: Loci = make_service(
        tmp_path / "shared",
        embedder,
        url,
        fetch_allowed_networks=["127.0.0.1/32"],
        sources_allowed_hosts=["127.0.0.1"],
    )
    live = LiveServer(service).start()
    yield live
    live.stop()
    service.store.close()


def test_over_the_api_an_admin_follows_a_feed_on_an_allowed_host_and_runs_it(
    shared: LiveServer, site: FeedSite
) -> None:
    with shared.client() as api:
        assert api.post("/brains", json={"name": "bees"}).status_code == 201
        made = api.post("/brains/bees/followed", json={"url": site.url("/feed.xml")})
        assert made.status_code == 201, made.text
        source = made.json()
        assert source["kind"] == "feed" and source["every_s"] == 3600
        ran = api.post(f"/brains/bees/followed/{source['id']}/sync")
        assert ran.status_code == 200, ran.text
        assert ran.json()["added"] == 1
        (listed,) = api.get("/brains/bees/folders").json()
        assert listed["counts"]["added"] == 1 and listed["last_error"] is None
        assert listed["next_run_at"] is not None

        elsewhere = site.url("/feed.xml").replace("127.0.0.1", "localhost")
        refused = api.post("/brains/bees/followed", json={"url": elsewhere})
        assert refused.status_code == 403 and "ALLOWED_HOSTS" in refused.json()["message"]

    read = shared.accounts.issue_token(shared.accounts.user("owner"), name="agent", scope="read")

    async def steps(c: Client) -> dict[str, Any]:
        return ok(await c.call_tool("list_sources", {"brain": "bees"}))

    (shown,) = over_http(shared, read.secret, steps)["sources"]
    assert shown["kind"] == "feed" and shown["counts"]["added"] == 1
    assert shown["path"] == site.url("/feed.xml") and shown["last_sync_at"]


def test_a_member_who_is_not_an_admin_cannot_follow_a_feed(
    shared: LiveServer, site: FeedSite
) -> None:
    _, dana = shared.accounts.add_user("dana")
    with shared.client(dana.secret) as api:
        assert api.post("/brains", json={"name": "danas"}).status_code == 201  # she owns it
        refused = api.post("/brains/danas/followed", json={"url": site.url("/feed.xml")})
        assert refused.status_code == 403 and "admin" in refused.json()["message"]
        assert api.get("/brains/danas/folders").json() == []
    assert shared.loci.sources.list() == []
    assert site.count() == 0  # nothing was even fetched


def test_worker_once_runs_the_due_feeds_then_indexes_them(site: FeedSite, tmp_path: Path) -> None:
    home = tmp_path / "home"
    added = run_cli(
        "sources", "add", site.url("/feed.xml"), "--every", "1h", home=home, env=LOOPBACK
    )
    assert added.returncode == 0, added.stderr
    once = run_cli("worker", "--once", home=home, env=LOOPBACK)
    assert once.returncode == 0, once.stderr
    assert "ran 1 scheduled sources" in once.stderr
    found = run_cli("search", "queen cells", "--json", home=home)
    assert "queen cells" in json.loads(found.stdout)["hits"][0]["text"]
    again = run_cli("worker", "--once", home=home, env=LOOPBACK)  # not due for an hour
    assert "scheduled" not in again.stderr and site.count("/feed.xml") == 2  # detect + run
