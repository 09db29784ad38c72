"""`loci add URL`: a page is indexed with its title and address; junk is refused with a reason."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.cli import run_cli
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


def test_pages_are_indexed_and_junk_refused(site: str, tmp_path: Path) -> None:
    home = tmp_path / "home"
    env = {"LOCI_FETCH_ALLOWED_NETWORKS": "127.0.0.1/32", "LOCI_FETCH_TIMEOUT_S": "1.5"}
    result = run_cli(
        "add",
        f"{site}/kelp",
        f"{site}/challenge",
        f"{site}/to-private",
        f"{site}/slow",
        f"{site}/missing",
        "--json",
        home=home,
        env=env,
    )
    assert result.returncode == 4, result.stderr
    outcomes = {o["source"].rsplit("/", 1)[1]: o for o in json.loads(result.stdout)}
    kelp = outcomes["kelp"]["document"]
    assert kelp["status"] == "ready" and kelp["kind"] == "web"
    assert kelp["title"] == "How kelp forests grow" and kelp["source_url"] == f"{site}/kelp"
    assert "challenge" in outcomes["challenge"]["error"].lower()
    assert "127.0.0.2" in outcomes["to-private"]["error"]
    assert "timed out" in outcomes["slow"]["error"]
    assert "404" in outcomes["missing"]["error"]
    assert all(
        outcomes[k]["document"] is None for k in ("challenge", "to-private", "slow", "missing")
    )

    found = json.loads(run_cli("search", "what do sea otters eat", "--json", home=home).stdout)
    hit = found["hits"][0]
    assert hit["source_url"] == f"{site}/kelp" and "urchins" in hit["text"]
    text = json.loads(run_cli("show", str(kelp["id"]), "--text", "--json", home=home).stdout)[
        "text"
    ]
    assert "Cookie preferences" not in text


def test_loopback_is_refused_by_default(site: str, tmp_path: Path) -> None:
    result = run_cli("add", f"{site}/kelp", "--json", home=tmp_path / "home")
    assert result.returncode == 1
    [outcome] = json.loads(result.stdout)
    assert "127.0.0.1" in outcome["error"] and outcome["document"] is None
