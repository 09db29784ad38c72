"""Match highlighting is data: every surface returns the snippet as plain text and the matches as
`highlights` ([start, end] offsets into it), so a passage's own Markdown bold (a timeline's
dates) is never taken for a match, and a match is never hidden inside `**`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.mcp_http import over_http
from tests.support.mcp_results import ok

TIMELINE = (
    "# Health\n\n"
    "- **3 Feb. 2027** — next check-up with Dr. Osei, the dentist, at 10.30.\n"
    "- **12 Aug. 2026** — filling replaced, paid 85 EUR.\n"
)


def _marked(hit: dict[str, Any]) -> list[str]:
    return [hit["snippet"][a:b] for a, b in hit["highlights"]]


def test_highlights_are_offsets_in_every_surface(
    loci: Loci, brain: Brain, server: LiveServer, tmp_path: Path
) -> None:
    doc = loci.library.add_bytes(brain, "health.md", TIMELINE.encode()).document
    loci.library.wait_for(brain, [doc.id])

    done = run_cli("search", "dentist check-up", "--json", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)["hits"][0]
    headers = {"Authorization": f"Bearer {server.owner_token}"}
    with httpx.Client(base_url=server.url + "/api/v1", headers=headers, timeout=60) as http:
        api = http.post(f"/brains/{brain.name}/search", json={"query": "dentist check-up"})
        api_hit = api.json()["hits"][0]

    async def search(c: Client) -> dict[str, Any]:
        return ok(await c.call_tool("search", {"query": "dentist check-up"}))

    mcp_hit = over_http(server, server.owner_token, search)["hits"][0]
    for hit in (cli, api_hit, mcp_hit):
        assert "**3 Feb. 2027**" in hit["snippet"]  # the note's own bold, shown as written
        assert _marked(hit) == ["check", "dentist"]

    human = run_cli("search", "dentist check-up", home=tmp_path / "home")
    assert "**3 Feb. 2027** — next check-up with Dr. Osei, the dentist" in human.stdout
