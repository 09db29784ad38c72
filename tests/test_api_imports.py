"""`POST /brains/{brain}/imports` over real HTTP: a bookmarks export uploaded and imported (its
links fetched from a loopback site), reported item by item, unchanged the second time; a dry
run that writes and fetches nothing; a viewer refused; an oversized upload or an export Loci
cannot read refused whole. The uploaded export is never left behind in the data directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from loci.embed.base import Embedder
from loci.service import Loci
from tests.support.bookmark_files import chrome_bookmarks, site
from tests.support.live_server import LiveServer
from tests.support.loopback import Loopback
from tests.support.services import make_service

FILE_CAP = int(0.01 * 1024 * 1024)


@pytest.fixture
def pages() -> Iterator[Loopback]:
    with site() as served:
        yield served


@pytest.fixture
def server(tmp_path: Path, embedder: Embedder, database_url: str | None) -> Iterator[LiveServer]:
    loci = make_service(
        tmp_path / "home",
        embedder,
        database_url,
        fetch_allowed_networks=["127.0.0.1/32"],
        max_file_mb=0.01,
    )
    live = LiveServer(loci).start()
    with live.client() as owner:
        assert owner.post("/brains", json={"name": "reading"}).status_code == 201
    yield live
    live.stop()
    loci.store.close()


def scratch_files(loci: Loci) -> list[Path]:
    folder = loci.settings.scratch_dir
    assert folder is not None
    return [p for p in folder.rglob("*")] if folder.exists() else []


def _import(client: httpx.Client, export: str, **form: str) -> httpx.Response:
    return client.post(
        "/brains/reading/imports",
        data={"kind": "bookmarks", **form},
        files={"file": ("bookmarks.html", export.encode(), "text/html")},
    )


def _items(report: dict[str, Any]) -> dict[str, tuple[str, str | None]]:
    return {i["name"]: (i["action"], i["reason"]) for i in report["items"]}


@pytest.mark.both_backends
def test_an_uploaded_export_is_imported_and_reported(server: LiveServer, pages: Loopback) -> None:
    export = chrome_bookmarks(pages.url())
    with server.client() as owner:
        kinds = owner.get("/imports/kinds")
        assert kinds.status_code == 200
        assert "bookmarks" in [k["name"] for k in kinds.json()]

        dry = _import(owner, export, dry_run="true")
        assert dry.status_code == 200, dry.text
        assert dry.json()["dry_run"] is True
        assert (dry.json()["added"], dry.json()["skipped"]) == (6, 2)
        assert pages.connections == [] and owner.get("/brains/reading/files").json() == []

        done = _import(owner, export, tags="from-chrome")
        assert done.status_code == 200, done.text
        report = done.json()
        assert (report["added"], report["failed"], report["skipped"]) == (3, 3, 2)
        items = _items(report)
        assert items["A page that is gone"] == (
            "fail",
            f"{pages.url('/gone')} answered HTTP 404 Not Found",
        )
        assert items["Show title"][0] == "skip"

        ids = [i["document_id"] for i in report["items"] if i["action"] == "add"]
        documents = [server.wait_ready(owner, "reading", i) for i in ids]
        assert {d["status"] for d in documents} == {"ready"}
        titles = {d["title"]: set(d["tags"]) for d in documents}
        assert titles["Sourdough starter guide"] == {
            "Baking", "bread", "fermentation", "Sea", "from-chrome",
        }  # fmt: skip
        assert titles["Tide notes"] == {"Sea", "from-chrome"}

        again = _import(owner, export).json()
        assert (again["added"], again["updated"], again["unchanged"]) == (0, 0, 3)
        assert len(owner.get("/brains/reading/files").json()) == 3
    assert scratch_files(server.loci) == []


def test_a_viewer_cannot_import_into_the_brain(server: LiveServer, pages: Loopback) -> None:
    _, bob = server.accounts.add_user("bob")  # a user with no part in the brain
    _, viewer = server.accounts.add_user("vera")
    with server.client() as owner:
        role = owner.put("/brains/reading/members/vera", json={"role": "viewer"})
        assert role.status_code == 200, role.text
    with server.client(viewer.secret) as vera:
        assert vera.get("/brains/reading/files").status_code == 200  # she reads it
        refused = _import(vera, chrome_bookmarks(pages.url()))
        assert refused.status_code == 403, refused.text
    with server.client(bob.secret) as stranger:
        assert _import(stranger, chrome_bookmarks(pages.url())).status_code == 404
    with server.client() as owner:
        assert owner.get("/brains/reading/files").json() == []
    assert pages.connections == []
    assert scratch_files(server.loci) == []


def test_an_oversized_or_unreadable_export_is_refused_whole(
    server: LiveServer, pages: Loopback
) -> None:
    with server.client() as owner:
        padding = "<!-- " + "x" * FILE_CAP + " -->"
        big = _import(owner, chrome_bookmarks(pages.url()) + padding)
        assert big.status_code == 413 and big.json()["error"] == "file_too_large"
        assert "bookmarks.html" in big.json()["message"]

        notes = _import(owner, "<html><body><p>my notes</p></body></html>")
        assert notes.status_code == 400 and notes.json()["error"] == "export_refused"
        assert "not a bookmarks export" in notes.json()["message"]

        unknown = _import(owner, chrome_bookmarks(pages.url()), kind="delicious")
        assert unknown.status_code == 400 and "no importer for 'delicious'" in unknown.text
        assert owner.get("/brains/reading/files").json() == []
    assert pages.connections == []
    assert scratch_files(server.loci) == []


OPML = """<?xml version="1.0" encoding="UTF-8"?>
<opml version="2.0"><head><title>Feeds</title></head><body>
<outline text="Bees" type="rss" xmlUrl="{url}/bees.xml"/>
</body></opml>"""


def test_an_opml_upload_follows_feeds_only_for_an_admin_and_only_on_allowed_hosts(
    server: LiveServer, pages: Loopback
) -> None:
    """An OPML file makes the server fetch its feeds on a schedule: over HTTP that is an
    admin's act within LOCI_SOURCES_ALLOWED_HOSTS, as following one feed is."""
    opml = OPML.format(url=pages.url())
    _, writer = server.accounts.add_user("wanda")
    with server.client() as owner:
        role = owner.put("/brains/reading/members/wanda", json={"role": "editor"})
        assert role.status_code == 200, role.text
    with server.client(writer.secret) as wanda:
        refused = wanda.post(
            "/brains/reading/imports",
            data={"kind": "opml"},
            files={"file": ("feeds.opml", opml.encode(), "text/x-opml")},
        )
        assert refused.status_code == 403, refused.text
    with server.client() as owner:  # the owner is an admin; 127.0.0.1 is not an allowed host
        report = owner.post(
            "/brains/reading/imports",
            data={"kind": "opml"},
            files={"file": ("feeds.opml", opml.encode(), "text/x-opml")},
        )
        assert report.status_code == 200, report.text
        [item] = report.json()["items"]
        assert item["action"] == "fail" and "LOCI_SOURCES_ALLOWED_HOSTS" in item["reason"]
        assert owner.get("/brains/reading/folders").json() == []
    assert pages.connections == []
