"""Phone capture: the web app is an installable PWA whose share target saves a link or text.

Over a real server: the manifest and its icons, the share page (which writes nothing), sharing
a link (kept as a web page from a loopback site), text (kept as an inbox capture) and a link
that cannot be fetched (kept as a capture with the reason), with the web session and its CSRF
token — and a share without them refused. In Chromium: a share opened while signed out asks to
sign in, then saves, and says where.
"""

from __future__ import annotations

import json
import struct
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import expect

from loci.embed.base import Embedder
from tests.support import text_files
from tests.support.browser import ARTIFACTS, chromium
from tests.support.live_server import LiveServer
from tests.support.loopback import Loopback, QuietHandler
from tests.support.services import make_service


class Site(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802 - stdlib's name
        if self.path.startswith("/article"):
            # Each address its own page (the same bytes would be one document).
            self.send(200, text_files.html_page().replace("</body>", f"<p>{self.path}</p></body>"))
        else:
            self.send(404, "not found")


@pytest.fixture(scope="module")
def site() -> Iterator[str]:
    with Loopback(Site) as web:
        yield web.url()


@pytest.fixture(scope="module")
def live(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[LiveServer]:
    # The shared pages are served on 127.0.0.1, which the fetcher refuses unless allowed.
    home = tmp_path_factory.mktemp("share") / "home"
    loci = make_service(home, embedder, fetch_allowed_networks=["127.0.0.1/32"])
    loci.brain("default")
    server = LiveServer(loci).start()
    yield server
    server.stop()
    loci.store.close()


@contextmanager
def signed_in(server: LiveServer) -> Iterator[tuple[httpx.Client, str]]:
    """A client holding the web session cookie (as the browser does), and its CSRF token."""
    with server.client("") as client:
        answer = client.post("/session", json={"token": server.owner_token})
        assert answer.status_code == 200
        yield client, answer.json()["csrf_token"]


def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])  # the IHDR chunk comes first
    return width, height


def test_the_manifest_makes_an_installable_app_with_a_share_target(live: LiveServer) -> None:
    with httpx.Client(base_url=live.url) as web:
        answer = web.get("/manifest.webmanifest")
        assert answer.status_code == 200
        assert answer.headers["content-type"].startswith("application/manifest+json")
        manifest = json.loads(answer.text)
        assert manifest["name"] == "Loci" and manifest["short_name"]
        assert (manifest["start_url"], manifest["scope"], manifest["display"]) == (
            "/", "/", "standalone",
        )  # fmt: skip
        # Files too: posted, so the service worker can keep them for the page (sw.js).
        assert manifest["share_target"] == {
            "action": "/share",
            "method": "POST",
            "enctype": "multipart/form-data",
            "params": {
                "title": "title",
                "text": "text",
                "url": "url",
                "files": [{"name": "files", "accept": ["*/*"]}],
            },
        }
        sizes = set()
        for icon in manifest["icons"]:
            got = web.get(icon["src"])
            assert got.status_code == 200, icon
            assert got.headers["content-type"].startswith(icon["type"]), icon
            if icon["type"] == "image/png":
                width, height = png_size(got.content)
                assert icon["sizes"] == f"{width}x{height}"
                sizes.add(width)
            else:
                assert b"<svg" in got.content
        assert {192, 512} <= sizes  # what Chrome asks of an installable app

        page = web.get("/")
        assert '<link rel="manifest" href="/manifest.webmanifest">' in page.text
        # The share target's page only loads the app: nothing is saved by a GET.
        shared = web.get("/share", params={"text": "a GET saves nothing", "url": ""})
        assert shared.status_code == 200 and shared.text == page.text
        assert shared.headers["cache-control"] == "no-store"
        # Posted while no service worker is there to keep files: the words are passed on to
        # the page, the files counted as dropped, nothing saved.
        posted = web.post(
            "/share",
            data={"title": "Recipe", "text": "lemon cake"},
            files={"files": ("cake.txt", b"flour, sugar, lemons")},
        )
        assert posted.status_code == 303
        assert posted.headers["location"] == "/share?title=Recipe&text=lemon+cake&dropped=1"
        worker = web.get("/sw.js")
        assert worker.status_code == 200 and "javascript" in worker.headers["content-type"]
        assert '"/static/app.js"' in worker.text and 'const VERSION = "' in worker.text
    with live.client() as api:
        assert api.get("/brains/default/graph/documents", params={"folder": "inbox"}).json() == []


def test_a_shared_link_is_kept_as_a_page_and_text_as_a_capture(live: LiveServer, site: str) -> None:
    with signed_in(live) as (client, csrf):

        def post(body: dict[str, str]) -> httpx.Response:
            return client.post("/brains/default/share", json=body, headers={"X-CSRF-Token": csrf})

        link = post({"title": "Kelp", "url": f"{site}/article/kelp"})
        assert link.status_code == 201, link.text
        page = link.json()
        assert page["saved_as"] == "page" and page["brain"] == "default"
        assert page["document"]["kind"] == "web"
        assert page["document"]["source_url"] == f"{site}/article/kelp"
        assert page["fetch_error"] is None

        # Chrome on Android sends the address in `text`; a line around it is still a link.
        in_text = post({"title": "Otters", "text": f"Look at this {site}/article/otters"})
        assert in_text.json()["saved_as"] == "page"
        assert in_text.json()["document"]["source_url"] == f"{site}/article/otters"

        note = post({"text": "Ana says the garden needs compost bins by May"})
        assert note.status_code == 201, note.text
        captured = note.json()
        assert captured["saved_as"] == "capture" and captured["document"]["kind"] == "item"
        assert captured["draft"]["path"].startswith("inbox/")

        broken = post({"title": "Gone", "url": f"{site}/missing"})
        assert broken.status_code == 201, broken.text
        kept = broken.json()
        assert kept["saved_as"] == "capture" and "404" in kept["fetch_error"]

        empty = post({"title": "Only a title"})
        assert empty.status_code == 400 and "nothing was shared" in empty.json()["message"]

        ready = live.wait_ready(client, "default", page["document"]["id"])
        assert ready["status"] == "ready" and ready["title"]
        inbox = client.get("/brains/default/graph/documents", params={"folder": "inbox"}).json()
        texts = [
            client.get(f"/brains/default/graph/documents/{d['id']}").json()["content"]
            for d in inbox
        ]
        assert any("compost bins by May" in t for t in texts)
        assert any(f"{site}/missing" in t for t in texts)  # the unfetchable link is not lost


def test_a_share_without_the_session_or_its_csrf_token_is_refused(live: LiveServer) -> None:
    # Which documents there are (the pages the test before shared may still be indexed
    # meanwhile, changing their state, not their number).
    def documents() -> list[int]:
        return sorted(d.id for d in live.loci.library.documents(live.loci.brain("default")))

    before = documents()
    body = {"text": "planted from another site"}
    with live.client("") as anonymous:
        assert anonymous.post("/brains/default/share", json=body).status_code == 401
    with signed_in(live) as (client, _):
        # What a page on another site can send with the cookie: a form post, no CSRF header.
        forged = client.post(
            "/brains/default/share",
            data=body,
            headers={"Origin": "https://evil.example", "Referer": "https://evil.example/"},
        )
        assert forged.status_code == 403 and "X-CSRF-Token" in forged.json()["message"]
        as_json = client.post("/brains/default/share", json=body)
        assert as_json.status_code == 403
    assert documents() == before


def test_sharing_while_signed_out_asks_to_sign_in_then_saves(live: LiveServer, site: str) -> None:
    shots = ARTIFACTS / "share"
    shots.mkdir(parents=True, exist_ok=True)
    errors: list[str] = []
    with chromium() as browser:
        context = browser.new_context(viewport={"width": 390, "height": 844})
        context.set_default_timeout(20_000)
        page = context.new_page()
        page.on("pageerror", lambda error: errors.append(str(error)))
        url = f"{site}/article/from-the-phone"
        page.goto(f"{live.url}/share?title=Phone&text={url}")
        expect(page.locator("#signin")).to_be_visible()
        expect(page.locator("#signin-share")).to_be_visible()
        assert page.evaluate("location.pathname + location.search") == "/"  # out of the address
        page.fill("#signin-token", live.owner_token)
        page.click("#signin-form button[type=submit]")
        expect(page.locator("#toasts")).to_contain_text("Saved to default.")
        expect(page.locator(".doc-name", has_text="from-the-phone").first).to_be_visible()
        page.screenshot(path=str(Path(shots) / "saved.png"))

        # A reload does not share it again; a second share, signed in, saves at once.
        page.reload()
        expect(page.locator("#workspace")).to_be_visible()
        page.goto(f"{live.url}/share?text=Remember+the+otters+need+kelp")
        expect(page.locator("#toasts")).to_contain_text("Saved to default.")
        context.close()
    assert not errors
    with live.client() as api:
        files = api.get("/brains/default/files").json()
        assert [f["source_url"] for f in files].count(url) == 1
        inbox = api.get("/brains/default/graph/documents", params={"folder": "inbox"}).json()
        assert any("otters" in d["title"].lower() for d in inbox)
