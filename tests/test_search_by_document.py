"""Search results are documents: one long manual that matches in every section no longer fills
the page and buries the second document; its other passages are kept under its hit, in the
service, the HTTP API, MCP and `loci search --json` alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
from mcp import Client

from loci.models import Brain
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.mcp_http import over_http
from tests.support.mcp_results import ok

SECTIONS = ["Filling", "Bleeding radiators", "Error codes", "Annual service", "Frost", "Noise"]
MANUAL = "# Boiler manual\n\n" + "\n\n".join(
    f"## {title}\n\n"
    + f"The boiler pressure matters when {title.lower()} comes up. " * 3
    + "Read the gauge on the front panel before and after, and write the reading down. " * 4
    for title in SECTIONS
)
CONTRACT = (
    "# Heating contract\n\nMarsh Heating checks the boiler pressure once a year under the "
    "service contract, and comes out within a day when it drops."
)
QUERY = "boiler pressure"


def _documents(hits: list[dict[str, Any]]) -> list[str]:
    return [h["name"] for h in hits]


def test_hits_are_documents_with_their_other_passages_under_them(
    loci: Loci, brain: Brain, server: LiveServer, tmp_path: Path
) -> None:
    ids = [
        loci.library.add_bytes(brain, name, text.encode()).document.id
        for name, text in (("boiler-manual.md", MANUAL), ("contract.md", CONTRACT))
    ]
    loci.library.wait_for(brain, ids)
    assert len(loci.library.chunks(brain, ids[0])) >= 4  # the manual matches in many passages

    hits = loci.searching.search(brain, SearchRequest(QUERY, limit=5))
    names = [h.citation.name for h in hits]
    assert sorted(names[:2]) == ["boiler-manual.md", "contract.md"] and len(set(names)) == 2
    manual = next(h for h in hits if h.citation.name == "boiler-manual.md")
    assert len(manual.more) >= 2  # kept, not dropped: the manual's next passages, best first
    assert all(p.citation.document_id == ids[0] for p in manual.more)
    assert [p.score for p in manual.more] == sorted((p.score for p in manual.more), reverse=True)
    assert manual.chunk_id not in {p.chunk_id for p in manual.more}
    # An answer reads passages, as before: several of the manual's may come first.
    passages = loci.searching.search(brain, SearchRequest(QUERY, limit=5, by_document=False))
    assert len({h.citation.document_id for h in passages}) < len(passages)

    done = run_cli("search", QUERY, "--limit", "5", "--json", home=tmp_path / "home")
    assert done.returncode == 0, done.stderr
    cli = json.loads(done.stdout)["hits"]
    headers = {"Authorization": f"Bearer {server.owner_token}"}
    with httpx.Client(base_url=server.url + "/api/v1", headers=headers, timeout=60) as http:
        api = http.post(f"/brains/{brain.name}/search", json={"query": QUERY, "limit": 5})
        api_hits = api.json()["hits"]

    async def search(c: Client) -> dict[str, Any]:
        return ok(await c.call_tool("search", {"query": QUERY, "limit": 5}))

    mcp_hits = over_http(server, server.owner_token, search)["hits"]
    for found in (cli, api_hits, mcp_hits):
        assert sorted(_documents(found)) == ["boiler-manual.md", "contract.md"]
        under = next(h for h in found if h["name"] == "boiler-manual.md")["passages"]
        assert len(under) == len(manual.more) and all(p["snippet"] for p in under)
    assert cli == api_hits  # --json prints the API's shape

    human = run_cli("search", QUERY, "--limit", "5", home=tmp_path / "home").stdout
    assert human.count("also · ") == len(manual.more)
