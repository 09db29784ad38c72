"""Web pages on loopback for `loci add URL`: an article, a bot challenge, a redirect to a private
address and a slow page."""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from tests.support.loopback import Loopback, QuietHandler

ARTICLE = """<!doctype html><html><head><title>How kelp forests grow</title></head><body>
<nav>Home | Science | Subscribe</nav>
<article><h1>How kelp forests grow</h1>
<p>Giant kelp can grow up to sixty centimetres a day in cold, nutrient-rich water along
rocky coasts.
Sea otters protect kelp forests by eating the urchins that would otherwise graze them bare.</p>
<p>When urchin populations explode, a forest can turn into an urchin barren within a few seasons,
and recovery takes years even after the otters return to the coast.</p></article>
<footer>Cookie preferences · Terms of use</footer></body></html>"""

CHALLENGE = """<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>
<div id="challenge-platform">Checking your browser before accessing the site.</div>
<noscript>Enable JavaScript and cookies to continue</noscript></body></html>"""


class Handler(QuietHandler):
    def do_GET(self) -> None:  # noqa: N802
        if self.path == "/kelp":
            self.send(200, ARTICLE)
        elif self.path == "/challenge":
            self.send(503, CHALLENGE)
        elif self.path == "/to-private":
            address = self.server.server_address
            assert isinstance(address, tuple)  # an IP server's (host, port)
            port = address[1]
            self.send(302, "", headers={"Location": f"http://127.0.0.2:{port}/kelp"})
        elif self.path == "/slow":
            time.sleep(4)
            self.send(200, ARTICLE)
        else:
            self.send(404, "not found")


@pytest.fixture
def site() -> Iterator[str]:
    with Loopback(Handler) as web:
        yield web.url()
