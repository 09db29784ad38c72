"""Pages that need JavaScript: rendered in headless Chromium under the plain fetcher's rules.

A fixture site on 127.0.0.1 (allowed by the tests' allow-list, as in test_web_add.py) serves app
shells whose scripts build the page; a second server on 127.0.0.2 (loopback too, but not allowed)
stands for an intranet address, and counts every connection it gets: there must be none.
"""

from __future__ import annotations

import contextlib
import json
import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from playwright.sync_api import sync_playwright

from loci.embed.base import Embedder
from loci.errors import BlockedAddress, ChallengePage, FetchError
from loci.ingest.chromium import Chromium
from loci.service import Loci
from tests.support.browser import CHROMIUM, require_chromium
from tests.support.cli import run_cli
from tests.support.loopback import Loopback, QuietHandler
from tests.support.services import make_service

ARTICLE_JS = """
const root = document.getElementById("root");
const h1 = document.createElement("h1");
h1.textContent = "How axolotls regrow their limbs";
root.appendChild(h1);
for (let i = 0; i < 12; i++) {
  const p = document.createElement("p");
  p.textContent = "An axolotl regrows a lost limb from a blastema, a bud of dedifferentiated " +
    "cells that forms at the wound within days and rebuilds bone, muscle and nerve in order.";
  root.appendChild(p);
}
"""

SHELL = """<!doctype html><html><head><title>Reader</title>
<script defer src="/{script}"></script></head><body>
<noscript>You need to enable JavaScript to run this app.</noscript><div id="root"></div>
</body></html>"""

# Builds the article, then tries to read an intranet address and to show what it got.
PEEK_JS = (
    ARTICLE_JS
    + """
fetch("http://127.0.0.2:{port}/secret").then((r) => r.text())
  .then((t) => { root.insertAdjacentHTML("beforeend", "<p>leaked: " + t + "</p>"); })
  .catch(() => { document.title = "Reader (peek failed)"; });
const img = document.createElement("img");
img.src = "/to-intranet.png";
root.appendChild(img);
"""
)

WALL_JS = """
document.title = "Just a moment...";
document.getElementById("root").innerHTML =
  "<h2>Verify you are human</h2><p>Complete the security check to continue.</p>";
"""

LEAVE_JS = 'location.href = "http://127.0.0.2:{port}/secret";'

HUGE_JS = 'document.getElementById("root").textContent = "blastema ".repeat(40000);'

# Not an app shell by its visible text (a menu and a footer), but its article is all script.
THIN = """<!doctype html><html><head><title>Field notes</title></head><body>
<nav><a href="/">Home</a> <a href="/animals">Animals</a> <a href="/plants">Plants</a>
<a href="/about">About these field notes</a> <a href="/contact">Contact the editors</a></nav>
<main><div id="root"></div></main><script src="/article.js"></script>
<footer>Field notes is written by volunteers who walk the same riverbank every week of the year
and write down what lives there. Text and photographs may be reused with credit.</footer>
</body></html>"""

# Runs for ever once the page has loaded: every later Playwright call would wait on it.
SPIN_JS = ARTICLE_JS + 'window.addEventListener("load", () => setTimeout(() => { for (;;) {} }));'


@dataclass
class Site:
    url: str
    intranet_port: int
    intranet_connections: list[str]


def _handler(intranet_port: int) -> type[QuietHandler]:
    scripts = {
        "/article.js": ARTICLE_JS,
        "/peek.js": PEEK_JS.replace("{port}", str(intranet_port)),
        "/wall.js": WALL_JS,
        "/leave.js": LEAVE_JS.replace("{port}", str(intranet_port)),
        "/spin.js": SPIN_JS,
        "/huge.js": HUGE_JS,
    }

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 - stdlib's name
            path = self.path.split("?", 1)[0]
            if path in scripts:
                self._send(200, "text/javascript", scripts[path])
            elif path == "/slow.js":
                time.sleep(6)
                self._send(200, "text/javascript", ARTICLE_JS)
            elif path == "/to-intranet.png":
                self.send_response(302)
                self.send_header("Location", f"http://127.0.0.2:{intranet_port}/pixel.png")
                self.end_headers()
            elif path.startswith("/shell-"):
                script = path.removeprefix("/shell-") + ".js"
                self._send(200, "text/html; charset=utf-8", SHELL.replace("{script}", script))
            elif path == "/thin":
                self._send(200, "text/html; charset=utf-8", THIN)
            elif path == "/secret":
                self._send(200, "text/plain", "the intranet's secret")
            else:
                self._send(404, "text/plain", "not found")

        def _send(self, status: int, content_type: str, body: str) -> None:
            self.send(status, body, content_type)

    return Handler


@pytest.fixture
def site() -> Iterator[Site]:
    require_chromium()
    with (
        Loopback(_handler(0), host="127.0.0.2") as intranet,
        Loopback(_handler(intranet.port)) as public,
    ):
        yield Site(public.url(), intranet.port, intranet.connections)


def _service(tmp_path: Path, embedder: Embedder, **overrides: object) -> Loci:
    settings: dict[str, object] = {
        "fetch_allowed_networks": ["127.0.0.1/32"],
        "browser_path": str(CHROMIUM),
        "browser_timeout_s": 20.0,
        "job_retry_base_s": 0.01,
    }
    return make_service(tmp_path / "home", embedder, None, **(settings | overrides))


def test_a_javascript_built_article_is_added_and_found(
    site: Site, tmp_path: Path, embedder: Embedder
) -> None:
    home = tmp_path / "home"
    env = {"LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32", "LOCI_BROWSER_PATH": str(CHROMIUM)}
    added = run_cli("add", f"{site.url}/shell-article", "--json", home=home, env=env)
    assert added.returncode == 0, added.stderr + added.stdout
    [outcome] = json.loads(added.stdout)
    document = outcome["document"]
    assert document["status"] == "ready" and document["kind"] == "web"
    assert document["title"] == "Reader"
    # how it was read is kept with the document (the JSON shows what the API shows)
    loci = _service(tmp_path, embedder)
    stored = loci.library.document(loci.brain(), document["id"])
    loci.store.close()
    assert stored.metadata["rendered"]["engine"] == "chromium"

    found = run_cli("search", "how does an axolotl regrow a limb", "--json", home=home)
    hit = json.loads(found.stdout)["hits"][0]
    assert "blastema" in hit["text"]
    assert hit["source_url"] == f"{site.url}/shell-article"


def test_requests_to_disallowed_addresses_are_blocked(
    site: Site, tmp_path: Path, embedder: Embedder
) -> None:
    loci = _service(tmp_path, embedder)
    brain = loci.brain()
    added = loci.library.add_url(brain, f"{site.url}/shell-peek")
    [document] = loci.library.wait_for(brain, [added.document.id])
    assert document.status == "ready"
    text = loci.library.document_text(brain, document.id) or ""
    assert "blastema" in text and "secret" not in text
    blocked = document.metadata["rendered"]["blocked_requests"]
    # The script's fetch and the image's redirect: both refused, neither connected.
    assert any(f"127.0.0.2:{site.intranet_port}/secret" in b for b in blocked)
    assert any(f"127.0.0.2:{site.intranet_port}/pixel.png" in b for b in blocked)
    assert all("loopback" in b for b in blocked)
    assert site.intranet_connections == []


def test_a_script_navigating_to_a_disallowed_address_is_refused(
    site: Site, tmp_path: Path, embedder: Embedder
) -> None:
    loci = _service(tmp_path, embedder)
    with pytest.raises(BlockedAddress, match="127.0.0.2"):
        loci.library.add_url(loci.brain(), f"{site.url}/shell-leave")
    assert site.intranet_connections == []
    assert loci.library.documents(loci.brain()) == []


def test_a_challenge_after_rendering_is_refused(
    site: Site, tmp_path: Path, embedder: Embedder
) -> None:
    loci = _service(tmp_path, embedder)
    with pytest.raises(ChallengePage, match="Cloudflare challenge page.*even after rendering"):
        loci.library.add_url(loci.brain(), f"{site.url}/shell-wall")
    assert loci.library.documents(loci.brain()) == []


@pytest.mark.parametrize("page", ["shell-slow", "shell-spin"])
def test_the_time_limit_gives_a_clear_error(
    site: Site, tmp_path: Path, embedder: Embedder, page: str
) -> None:
    loci = _service(tmp_path, embedder, browser_timeout_s=3.0)
    started = time.monotonic()
    with pytest.raises(FetchError, match=r"in the browser took longer than 3 s"):
        loci.library.add_url(loci.brain(), f"{site.url}/{page}")
    # Chromium's start is not part of the budget; a hung page must not hold on much longer.
    assert time.monotonic() - started < 3.0 + 15
    assert loci.library.documents(loci.brain()) == []


def test_without_a_browser_an_app_shell_is_refused_with_what_to_do(
    site: Site, tmp_path: Path, embedder: Embedder
) -> None:
    off = _service(tmp_path, embedder, browser_render=False)
    with pytest.raises(ChallengePage, match="enable JavaScript.*turned off"):
        off.library.add_url(off.brain(), f"{site.url}/shell-article")
    missing = _service(tmp_path / "2", embedder, browser_path=str(tmp_path / "no-chromium"))
    with pytest.raises(ChallengePage, match="needs Chromium, not found"):
        missing.library.add_url(missing.brain(), f"{site.url}/shell-article")


def test_a_page_whose_article_is_all_script_is_rendered(
    site: Site, tmp_path: Path, embedder: Embedder
) -> None:
    loci = _service(tmp_path, embedder)
    web = loci.library.fetch_page(f"{site.url}/thin")
    assert web.rendered and web.why_rendered == "little text without its scripts"
    assert b"blastema" in web.page.body


def test_a_rendered_page_over_the_size_cap_is_refused(
    site: Site, tmp_path: Path, embedder: Embedder
) -> None:
    loci = _service(tmp_path, embedder, fetch_max_mb=0.1)
    with pytest.raises(FetchError, match="rendered page is larger than"):
        loci.library.add_url(loci.brain(), f"{site.url}/shell-huge")


def test_a_dry_run_of_a_javascript_page_says_it_will_be_rendered(
    site: Site, tmp_path: Path, embedder: Embedder
) -> None:
    loci = _service(tmp_path, embedder)
    url = f"{site.url}/shell-article"
    flight = loci.library.preflight(None, urls=[url])
    [item] = flight.items
    assert item.outcome == "add" and item.rendered and item.parser == "html"
    assert loci.library.documents(loci.brain()) == []
    added = loci.library.add_url(loci.brain(), url)
    [document] = loci.library.wait_for(loci.brain(), [added.document.id])
    assert document.chunk_count == item.chunks >= 1


# Tries every way out of the page that routing does not see, aimed at a UDP port on loopback:
# STUN and TURN from the page and from a fresh child frame, WebTransport (QUIC) from the page
# and from a worker. The title says which attempts the page's scripts could even start.
WEBRTC_JS = (
    ARTICLE_JS
    + """
const ice = {iceServers: [
  {urls: "stun:127.0.0.1:{udp}"},
  {urls: "turn:127.0.0.1:{udp}?transport=udp", username: "u", credential: "p"},
]};
function offer(RTC) {
  const pc = new RTC(ice);
  pc.createDataChannel("leak");
  pc.createOffer().then((o) => pc.setLocalDescription(o));
}
const started = [];
try { offer(RTCPeerConnection); started.push("page"); } catch (e) {}
const frame = document.createElement("iframe");
document.body.appendChild(frame);
try { offer(frame.contentWindow.RTCPeerConnection); started.push("frame"); } catch (e) {}
const quic = 'new WebTransport("https://127.0.0.1:{udp}/").ready.catch(() => {});';
try { eval(quic); started.push("webtransport"); } catch (e) {}
new Worker(URL.createObjectURL(new Blob(["try { " + quic + " } catch (e) {}"])));
document.title = "Reader (started: " + (started.join(", ") || "nothing") + ")";
"""
)


@pytest.fixture
def udp_trap() -> Iterator[socket.socket]:
    """A UDP port on 127.0.0.1 that a page's script will aim at; it must receive nothing."""
    trap = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    trap.bind(("127.0.0.1", 0))
    trap.setblocking(False)
    yield trap
    trap.close()


def _datagrams(trap: socket.socket) -> list[bytes]:
    received: list[bytes] = []
    with contextlib.suppress(BlockingIOError):
        while True:
            received.append(trap.recv(2048))
    return received


@pytest.mark.attack
def test_a_page_script_cannot_send_udp_by_webrtc_or_webtransport(
    udp_trap: socket.socket, tmp_path: Path, embedder: Embedder
) -> None:
    require_chromium()
    script = WEBRTC_JS.replace("{udp}", str(udp_trap.getsockname()[1]))

    class Handler(QuietHandler):
        def do_GET(self) -> None:  # noqa: N802 - stdlib's name
            if self.path == "/webrtc.js":
                self.send(200, script, "text/javascript")
            else:
                self.send(200, SHELL.replace("{script}", "webrtc.js"))

    with Loopback(Handler) as site:
        loci = _service(tmp_path, embedder)
        web = loci.library.fetch_page(site.url("/reader"))
    # The page still rendered: its article is there, built by its script.
    assert web.rendered and b"blastema" in web.page.body
    # Nothing the scripts tried, from any frame or worker, reached the port. (Chromium has been
    # killed by now, so anything it sent is already in the socket.)
    assert _datagrams(udp_trap) == []
    # They found no WebRTC or WebTransport to try with, in the page or in a child frame.
    assert b"<title>Reader (started: nothing)</title>" in web.page.body


@pytest.mark.attack
def test_chromium_itself_sends_no_webrtc_udp_even_to_a_script_that_has_the_api(
    udp_trap: socket.socket,
) -> None:
    """The second layer: a frame where the init script did not run still has no UDP."""
    port = udp_trap.getsockname()[1]
    gather = """async (port) => {
      const pc = new RTCPeerConnection({iceServers: [{urls: `stun:127.0.0.1:${port}`}]});
      pc.createDataChannel("leak");
      const done = new Promise((resolve) => {
        pc.onicegatheringstatechange = () => pc.iceGatheringState === "complete" && resolve();
        setTimeout(resolve, 5000);
      });
      await pc.setLocalDescription(await pc.createOffer());
      await done;
      return pc.iceGatheringState;
    }"""
    with Chromium(str(require_chromium())) as browser, sync_playwright() as playwright:
        connected = playwright.chromium.connect_over_cdp(browser.ws_url)
        page = connected.new_context().new_page()
        state = page.evaluate(gather, port)
        connected.close()
    assert _datagrams(udp_trap) == []
    assert state == "complete"  # ICE gathering ran to its end: there was nothing to wait for
