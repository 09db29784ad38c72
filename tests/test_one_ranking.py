"""One search path: the same question on the same brain gives the same results, in the same order
and with the same scores, from the CLI, the HTTP API and MCP — for passages (`search`) and for the
brain's pages (`brain query`), where links between pages are followed exactly once."""

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
from tests.support.paths import REPO

EXAMPLES = REPO / "examples"
PASSAGE_QUESTION = "who runs the compost drive"
PAGE_QUESTION = "who keeps the shed keys for the compost drive"


def _fill(loci: Loci, brain: Brain) -> None:
    for path in sorted(EXAMPLES.iterdir()):
        loci.library.add_file(brain, path)
    graph = loci.graph
    graph.create(
        brain, actor="t", doc_type="project", title="Compost drive",
        text="The compost drive collects kitchen scraps for the allotment bins every Saturday. "
             "It is led by [[page:ana-lopez|Ana]] with [[page:ben-okafor|Ben]].",
    )  # fmt: skip
    graph.create(
        brain, actor="t", doc_type="person", title="Ana Lopez",
        text="Ana coordinates the volunteers and keeps the shed keys. See [[page:ben-okafor]].",
    )  # fmt: skip
    graph.create(
        brain, actor="t", doc_type="person", title="Ben Okafor",
        text="Ben fixes bikes and lends his trailer. He works with [[page:ana-lopez|Ana]].",
    )  # fmt: skip
    loci.library.add_note(brain, "The allotment committee meets on Mondays.", title="Committee")
    loci.library.wait_for(brain, [d.id for d in loci.library.documents(brain, status="processing")])


def _cli(home: Path, *args: str) -> dict[str, Any]:
    done = run_cli(*args, "--json", home=home)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def _rounded(score: float) -> float:
    # MCP gives an agent four decimals; the CLI and the API give the full float.
    return round(score, 4)


def test_search_and_brain_query_rank_the_same_through_cli_api_and_mcp(
    loci: Loci, brain: Brain, server: LiveServer, tmp_path: Path
) -> None:
    _fill(loci, brain)
    home = tmp_path / "home"  # the `loci` fixture's data directory: the CLI opens the same brain

    cli_hits = _cli(home, "search", PASSAGE_QUESTION, "--limit", "8")["hits"]
    cli_pages = _cli(home, "brain", "query", PAGE_QUESTION)["hits"]

    headers = {"Authorization": f"Bearer {server.owner_token}"}
    with httpx.Client(base_url=server.url + "/api/v1", headers=headers, timeout=60) as http:
        api = http.post(
            f"/brains/{brain.name}/search", json={"query": PASSAGE_QUESTION, "limit": 8}
        )
        api_pages = http.post(f"/brains/{brain.name}/graph/query", json={"query": PAGE_QUESTION})
    assert api.status_code == 200 and api_pages.status_code == 200, (api.text, api_pages.text)

    async def ask_mcp(c: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        found = await c.call_tool("search", {"query": PASSAGE_QUESTION, "limit": 8})
        pages = await c.call_tool("brain_query", {"query": PAGE_QUESTION})
        return ok(found), ok(pages)

    mcp_hits, mcp_pages = over_http(server, server.owner_token, ask_mcp)

    # passages: (document, passage index, score), best first, from every surface
    from_cli = [(h["document_id"], h["chunk_index"], _rounded(h["score"])) for h in cli_hits]
    from_api = [
        (h["document_id"], h["chunk_index"], _rounded(h["score"])) for h in api.json()["hits"]
    ]
    from_mcp = [(h["document_id"], h["passage"], _rounded(h["score"])) for h in mcp_hits["hits"]]
    assert len(from_cli) >= 3
    assert from_cli == from_api == from_mcp

    # pages: one hit per page, the links followed once (a linked page's score is the same)
    pages_cli = [(h["document"]["id"], _rounded(h["score"])) for h in cli_pages]
    pages_api = [(h["document"]["id"], _rounded(h["score"])) for h in api_pages.json()["hits"]]
    pages_mcp = [(h["page"]["id"], _rounded(h["score"])) for h in mcp_pages["hits"]]
    assert {"compost-drive", "ana-lopez", "ben-okafor"} <= {page for page, _ in pages_cli}
    assert pages_cli == pages_api == pages_mcp
