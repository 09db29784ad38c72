"""`loci import opml FILE`: the feeds a feed reader's OPML export lists become followed feeds
(sources the worker runs), not documents; a second import follows nothing new; a bad outline
fails alone; a file that is not OPML, or an XML entity trick, is refused whole and follows
nothing. The feeds followed then run against a real site on 127.0.0.1."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.imports.items import ExportRefused
from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.feeds import FeedSite, opml, rss

pytestmark = [pytest.mark.both_backends, pytest.mark.fetches_loopback]

HIVE = ("hive", "Hive checks", "<p>" + "Check the hive for queen cells every nine days. " * 30)
LOOPBACK = {"LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32"}


@pytest.fixture
def site() -> Iterator[FeedSite]:
    with FeedSite() as served:
        served.put("/bees.xml", rss([HIVE]))
        yield served


def test_the_feeds_of_an_opml_file_are_followed_once(
    loci: Loci, brain: Brain, site: FeedSite, tmp_path: Path
) -> None:
    export = tmp_path / "subscriptions.opml"
    export.write_text(
        opml(
            {
                "": [("Bees", site.url("/bees.xml"))],
                "Garden": [("Compost", site.url("/compost.xml")), ("Bees", site.url("/bees.xml"))],
                "Odd": [("Mail", "mailto:someone@example.org")],
            }
        )
    )
    dry = loci.importing.run(brain, "opml", export, dry_run=True)
    assert dry.counts == {"add": 2, "update": 0, "unchanged": 0, "fail": 1, "skip": 1}
    assert loci.sources.list(brain) == []  # a dry run follows nothing

    report = loci.importing.run(brain, "opml", export)
    assert report.counts["add"] == 2 and report.counts["fail"] == 1
    (bad,) = [o for o in report.outcomes if o.action == "fail"]
    assert bad.name == "Mail" and "mailto" in (bad.reason or "")
    followed = loci.sources.list(brain)
    assert sorted(s.path for s in followed) == [site.url("/bees.xml"), site.url("/compost.xml")]
    assert all(s.kind == "feed" and s.every_s == 3600 for s in followed)
    assert loci.library.documents(brain) == [] and site.count() == 0  # nothing fetched yet

    again = loci.importing.run(brain, "opml", export)
    assert again.counts["add"] == 0 and again.counts["unchanged"] == 2
    assert len(loci.sources.list(brain)) == 2

    ran = [loci.scheduled.run_due("worker") for _ in range(2)]  # both due at once
    assert loci.scheduled.run_due("worker") is None
    by_path = {r.path: r for r in ran if r is not None}
    assert by_path[site.url("/bees.xml")].added == 1
    assert "404" in (by_path[site.url("/compost.xml")].unreachable or "")


def test_the_cli_imports_opml(site: FeedSite, tmp_path: Path) -> None:
    export = tmp_path / "feeds.opml"
    export.write_text(opml({"": [("Bees", site.url("/bees.xml"))]}))
    home = tmp_path / "home"
    done = run_cli("import", "opml", str(export), "--json", home=home, env=LOOPBACK)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["added"] == 1 and report["items"][0]["source_id"] is not None
    (listed,) = json.loads(run_cli("sources", "list", "--json", home=home).stdout)
    assert listed["kind"] == "feed" and listed["path"] == site.url("/bees.xml")


@pytest.mark.parametrize(
    "hostile",
    [
        "not-opml",
        "billion-laughs",
        "external-entity",
    ],
)
def test_a_file_that_is_not_opml_or_plays_entity_tricks_follows_nothing(
    loci: Loci, brain: Brain, tmp_path: Path, hostile: str
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("https://attacker.example/feed")
    export = tmp_path / "bad.opml"
    if hostile == "not-opml":
        export.write_text('<?xml version="1.0"?><rss version="2.0"><channel/></rss>')
    elif hostile == "billion-laughs":
        # each level ten of the one below: &l9; would be ten billion "ha"s
        levels = "".join(f'<!ENTITY l{i} "{f"&l{i - 1};" * 10}">' for i in range(1, 10))
        export.write_text(
            f'<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY l0 "ha">{levels}]>'
            '<opml version="2.0"><body><outline text="&l9;" xmlUrl="https://x.example/&l9;"/>'
            "</body></opml>"
        )
    else:
        export.write_text(
            f'<?xml version="1.0"?><!DOCTYPE opml [<!ENTITY e SYSTEM "file://{secret}">]>'
            '<opml version="2.0"><body><outline text="x" xmlUrl="&e;"/></body></opml>'
        )
    try:
        report = loci.importing.run(brain, "opml", export)
    except ExportRefused as refused:
        assert "nothing was imported" in refused.message or "OPML" in refused.message
    else:  # read as written: the entity is not expanded, so nothing is followed
        assert report.counts["add"] == 0
    assert all("attacker" not in s.path and "haha" not in s.path for s in loci.sources.list(brain))
    assert loci.sources.list(brain) == []
