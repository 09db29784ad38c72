"""One shape per thing: a document, a search hit, a preflight item and a graph page are the same
JSON — the same field names, and the same values — from `loci … --json` and the HTTP API, and
an MCP dry run's item has the API's fields too. MCP's search hits, files and graph pages and
hits say less, but what they say is the API's: each field they share with the API's object has
the API's value (scores to four places). Nothing internal (a brain's row id) leaks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from mcp import Client

from loci.models import Brain
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.mcp_http import over_http
from tests.support.mcp_results import ok
from tests.support.paths import REPO

BOILER = REPO / "examples" / "boiler-manual.md"
QUESTION = "how do I reset the boiler"


def _cli(home: Path, *args: str) -> Any:
    done = run_cli(*args, "--json", home=home)
    assert done.returncode == 0, done.stderr
    assert '"brain_id"' not in done.stdout
    return json.loads(done.stdout)


def _scores_rounded(hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # The CLI and the server each load the embedding model: the last digits of a score may differ.
    return [{**h, "score": round(h["score"], 4)} for h in hits]


def test_the_cli_json_and_the_api_give_the_same_shapes(
    loci: Loci, brain: Brain, server: LiveServer, tmp_path: Path
) -> None:
    added = loci.library.add_file(brain, BOILER, tags=("home",))
    loci.graph.create(
        brain, actor="t", doc_type="project", title="Boiler service",
        text="The boiler is serviced every autumn; see the manual.",
    )  # fmt: skip
    loci.library.wait_for(brain, [d.id for d in loci.library.documents(brain, status="processing")])
    doc_id = added.document.id
    home = tmp_path / "home"  # the `loci` fixture's data directory: the CLI opens the same brain

    shown = _cli(home, "show", str(doc_id), "--chunks")
    listed = _cli(home, "list")
    found = _cli(home, "search", QUESTION)
    planned = _cli(home, "add", "--dry-run", str(BOILER))
    page = _cli(home, "brain", "get", "boiler-service")
    pages = _cli(home, "brain", "query", "when is the boiler serviced")

    with server.client() as api:
        base = f"/brains/{brain.name}"
        api_doc = api.get(f"{base}/files/{doc_id}").json()
        api_chunks = api.get(f"{base}/files/{doc_id}/chunks").json()
        api_list = api.get(f"{base}/files").json()
        api_found = api.post(f"{base}/search", json={"query": QUESTION}).json()
        upload = [("files", (BOILER.name, BOILER.read_bytes(), "text/markdown"))]
        api_planned = api.post(f"{base}/preflight/files", files=upload).json()
        api_page = api.get(f"{base}/graph/documents/boiler-service").json()
        api_pages = api.post(f"{base}/graph/query", json={"query": "when is the boiler serviced"})

    assert shown["document"] == api_doc and api_doc["brain"] == "default"
    assert shown["chunks"] == api_chunks
    assert sorted(listed, key=lambda d: d["id"]) == sorted(api_list, key=lambda d: d["id"])

    assert found["hits"] and found["hits"][0]["name"] == BOILER.name
    assert _scores_rounded(found["hits"]) == _scores_rounded(api_found["hits"])

    # the file was given by its path to the CLI, by its name to the API: all else is the same
    [item], [api_item] = planned["items"], api_planned["items"]
    assert item["outcome"] == "duplicate" and item["duplicate_of"]["id"] == doc_id
    assert {**item, "source": BOILER.name} == api_item
    assert planned.keys() == api_planned.keys() and planned["totals"] == api_planned["totals"]

    assert page == api_page and page["document"]["id"] == "boiler-service"
    assert _scores_rounded(pages["hits"]) == _scores_rounded(api_pages.json()["hits"])

    async def dry_run(c: Client) -> dict[str, Any]:
        args = {"name": BOILER.name, "content": BOILER.read_text(), "dry_run": True}
        return ok(await c.call_tool("create_file", args))

    mcp_item = over_http(server, server.owner_token, dry_run)["preflight"]["item"]
    assert mcp_item.keys() == api_item.keys()
    assert mcp_item["outcome"] == "duplicate" and mcp_item["duplicate_of"]["id"] == doc_id

    async def reads(c: Client) -> dict[str, Any]:
        return {
            "search": ok(await c.call_tool("search", {"query": QUESTION, "limit": 10})),
            "files": ok(await c.call_tool("list_files", {})),
            "query": ok(await c.call_tool("brain_query", {"query": "when is the boiler serviced"})),
            "page": ok(await c.call_tool("brain_get", {"page": "boiler-service"})),
        }

    mcp = over_http(server, server.owner_token, reads)
    assert mcp["search"]["hits"] and len(mcp["search"]["hits"]) == len(api_found["hits"])
    for hit, api_hit in zip(mcp["search"]["hits"], api_found["hits"], strict=True):
        uri = f"loci://default/docs/{api_hit['document_id']}"
        _same_as_the_api(hit, api_hit, passage=api_hit["chunk_index"], uri=uri)
        for more, api_more in zip(hit["passages"], api_hit["passages"], strict=True):
            _same_as_the_api(more, api_more, passage=api_more["chunk_index"])
    api_by_id = {d["id"]: d for d in api_list}
    assert {f["id"] for f in mcp["files"]["files"]} == set(api_by_id)
    for info in mcp["files"]["files"]:
        _same_as_the_api(info, api_by_id[info["id"]], uri=f"loci://default/docs/{info['id']}")
    [graph_hit] = [h for h in mcp["query"]["hits"] if h["page"]["id"] == "boiler-service"]
    [api_graph_hit] = [
        h for h in api_pages.json()["hits"] if h["document"]["id"] == "boiler-service"
    ]
    _same_as_the_api(graph_hit["page"], api_graph_hit["document"])
    _same_as_the_api(graph_hit, api_graph_hit, page=graph_hit["page"], linked=graph_hit["linked"])
    mcp_page = mcp["page"]
    _same_as_the_api(mcp_page["page"], api_page["document"])
    assert mcp_page["links"] == api_page["links"] and mcp_page["truth"] == api_page["truth"]
    for entry, api_entry in zip(mcp_page["timeline"], api_page["timeline"], strict=True):
        _same_as_the_api(entry, api_entry)


def _same_as_the_api(shown: dict[str, Any], api: dict[str, Any], **own: Any) -> None:
    """Every field of an MCP object is the API's, of the same name, with the same value — but
    those MCP alone has (`own`) and the score, which MCP rounds to four places."""
    expected = {k: own[k] if k in own else api[k] for k in shown if k != "passages"}
    if "score" in expected:
        expected["score"] = round(api["score"], 4)
    assert {k: v for k, v in shown.items() if k != "passages"} == expected
