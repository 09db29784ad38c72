"""A search that finds nothing close says so: "xylophone quantum zebra" still returns the nearest
passages, marked `weak` (with the closeness it was judged by) through the CLI, the HTTP API and
MCP alike; a real question is not weak."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from loci.models import Brain
from loci.search.weak import WEAK_CLOSENESS
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.mcp_http import over_http
from tests.support.mcp_results import ok
from tests.support.paths import REPO

EXAMPLES = REPO / "examples"
NONSENSE = "xylophone quantum zebra"
REAL = "how do I bring the boiler pressure back up"


def test_nonsense_is_weak_everywhere_and_a_real_question_is_not(
    loci: Loci, brain: Brain, server: LiveServer, tmp_path: Path
) -> None:
    ids = [loci.library.add_file(brain, p).document.id for p in sorted(EXAMPLES.iterdir())]
    loci.library.wait_for(brain, ids)
    home = tmp_path / "home"

    def cli(query: str) -> dict[str, Any]:
        done = run_cli("search", query, "--json", home=home)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)  # type: ignore[no-any-return]

    headers = {"Authorization": f"Bearer {server.owner_token}"}
    with httpx.Client(base_url=server.url + "/api/v1", headers=headers, timeout=60) as http:
        api = {q: http.post(f"/brains/{brain.name}/search", json={"query": q}).json()
               for q in (NONSENSE, REAL)}  # fmt: skip
        across = http.post("/search", json={"query": NONSENSE}).json()

    async def ask(c: Client) -> dict[str, dict[str, Any]]:
        return {q: ok(await c.call_tool("search", {"query": q})) for q in (NONSENSE, REAL)}

    mcp = over_http(server, server.owner_token, ask)

    for query, weak in ((NONSENSE, True), (REAL, False)):
        found = cli(query)
        assert found["hits"] and api[query]["hits"] and mcp[query]["hits"]  # nearest still shown
        assert found["weak"] is weak and api[query]["weak"] is weak and mcp[query]["weak"] is weak
    assert across["weak"] is True
    assert api[NONSENSE]["weak_closeness"] == WEAK_CLOSENESS == cli(NONSENSE)["weak_closeness"]
    human = run_cli("search", NONSENSE, home=home)
    assert human.stdout.startswith("no close match — the nearest passages:")
