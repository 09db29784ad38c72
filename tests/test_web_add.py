"""`loci add URL`: a page is indexed with its title and address; junk is refused with a reason."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import run_cli
from tests.support.web_pages import site

__all__ = ["site"]  # the fixture (tests/support/web_pages.py): pytest finds it here


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
