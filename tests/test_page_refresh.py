"""A web page saved again: unchanged, it is the same document; changed, the same document
(same id, so links and citations to it hold) is refreshed with the new text. Never two copies."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.embed.base import Embedder
from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.loopback import Loopback, QuietHandler
from tests.support.services import make_service

URL = "https://example.org/allotment/rules"
BEFORE = "# Allotment rules\n\nBonfires are allowed on Sundays before ten in the morning."
AFTER = "# Allotment rules\n\nBonfires are banned all year; green waste goes to the council skip."


def texts_found(loci: Loci, brain: Brain, query: str) -> list[str]:
    return [h.text for h in loci.searching.search(brain, SearchRequest(query, mode="text"))]


@pytest.mark.both_backends
def test_a_changed_page_refreshes_its_document(loci: Loci, brain: Brain) -> None:
    first = loci.library.add_page_text(brain, URL, BEFORE, title="Allotment rules", tags=["garden"])
    loci.library.wait_for(brain, [first.document.id])
    again = loci.library.add_page_text(brain, URL, BEFORE, title="Allotment rules")
    assert again.deduped and not again.refreshed and again.document.id == first.document.id

    changed = loci.library.add_page_text(brain, URL, AFTER, title="Allotment rules", tags=["rules"])
    assert changed.refreshed and not changed.deduped
    assert changed.document.id == first.document.id and changed.document.status == "processing"
    (now,) = loci.library.wait_for(brain, [first.document.id])
    assert now.status == "ready" and now.tags == ("garden", "rules")
    assert [d.id for d in loci.library.documents(brain)] == [first.document.id]
    assert any("green waste" in t for t in texts_found(loci, brain, "bonfire green waste skip"))
    assert not any("Sundays" in t for t in texts_found(loci, brain, "bonfire Sundays morning"))
    # The old text is the page's version 1 now (its bytes kept, not found by search).
    assert loci.library.original(brain, now.id).decode().count("green waste") == 1
    (kept,) = loci.versions.list(brain, now.id).versions
    assert kept.content_hash == first.document.content_hash
    assert b"Sundays" in loci.versions.content(brain, now.id, 1)[1]


@pytest.mark.both_backends
def test_the_same_page_in_two_brains_is_two_documents(loci: Loci, brain: Brain) -> None:
    other = loci.brain("other")
    a = loci.library.add_page_text(brain, URL, BEFORE)
    b = loci.library.add_page_text(other, URL, AFTER)
    assert a.document.id != b.document.id and not b.refreshed
    # The other brain's copy is its own: refreshing it leaves this brain's page alone.
    loci.library.add_page_text(other, URL, BEFORE + "\n\nUpdated.")
    assert loci.library.document(brain, a.document.id).content_hash == a.document.content_hash


class Site(QuietHandler):
    version = 1

    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        if Site.version == 1:
            body = "<p>The hall opens at nine on weekdays for the seed swap.</p>"
        else:
            body = "<p>The hall now opens at eight; the seed swap moved to Saturdays.</p>"
        self.send(200, f"<html><head><title>Hall</title></head><body><article>{body}"
                       "</article></body></html>")  # fmt: skip


@pytest.fixture
def site() -> Iterator[str]:
    Site.version = 1
    with Loopback(Site) as web:
        yield web.url("/hall")


def test_adding_a_url_again_refreshes_it_from_the_cli(site: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32"}
    first = run_cli("add", site, "--json", home=home, env=env)
    assert first.returncode == 0, first.stderr
    (kept,) = json.loads(first.stdout)
    Site.version = 2
    second = run_cli("add", site, "--json", home=home, env=env)
    assert second.returncode == 0, second.stderr
    (refreshed,) = json.loads(second.stdout)
    assert refreshed["refreshed"] is True and refreshed["deduped"] is False
    assert refreshed["document"]["id"] == kept["document"]["id"]
    assert refreshed["document"]["status"] == "ready"
    human = run_cli("add", site, home=home, env=env)
    assert "already in this brain" in human.stdout  # unchanged since: nothing to do
    listed = json.loads(run_cli("list", "--json", home=home).stdout)
    assert len(listed) == 1
    found = run_cli("search", "when does the hall open", "--json", home=home)
    assert "Saturdays" in json.loads(found.stdout)["hits"][0]["text"]


def test_a_fetched_page_saved_again_by_the_extension_is_read_as_markdown(
    tmp_path: Path, embedder: Embedder, site: str
) -> None:
    """The extension sends Markdown for a page Loci once fetched as HTML: the refreshed
    document takes the new type, so it is parsed as what it now is."""
    loci = make_service(tmp_path / "home", embedder, fetch_allowed_networks=["127.0.0.1/32"])
    brain = loci.brain("default")
    fetched = loci.library.add_url(brain, site)
    (before,) = loci.library.wait_for(brain, [fetched.document.id])
    assert before.mime_type is not None and before.mime_type.startswith("text/html")
    markdown = "# Hall\n\n| day | opens |\n| --- | --- |\n| Saturday | eight |"
    saved = loci.library.add_page_text(brain, site, markdown, title="Hall")
    (now,) = loci.library.wait_for(brain, [saved.document.id])
    assert saved.refreshed and now.id == before.id
    assert now.mime_type == "text/markdown" and now.status == "ready"
    assert any("| Saturday | eight |" in t for t in texts_found(loci, brain, "Saturday eight"))
    loci.store.close()
