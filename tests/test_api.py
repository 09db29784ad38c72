"""The HTTP API over a real server on 127.0.0.1: what a script or a Custom GPT sees."""

from __future__ import annotations

import json
from pathlib import Path

from loci.app import build_api
from tests.live_server import LiveServer

ROOT = Path(__file__).resolve().parent.parent


def test_health_needs_no_token_and_everything_else_does(server: LiveServer) -> None:
    with server.client("") as anonymous:
        assert anonymous.get("/health").json()["status"] == "ok"
        response = anonymous.get("/brains")
        assert response.status_code == 401
        assert response.json()["error"] == "unauthenticated"
        assert response.headers["www-authenticate"] == "Bearer"
    with server.client("loci_not-a-real-token") as wrong:
        assert wrong.get("/brains").status_code == 401


def test_upload_then_search_returns_cited_passage(server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "home"}).status_code == 201
        manual = (ROOT / "examples" / "boiler-manual.md").read_bytes()
        response = api.post("/brains/home/files", files={"files": ("boiler.md", manual)})
        assert response.status_code == 202
        (result,) = response.json()["results"]
        assert result["document"]["status"] == "processing" and not result["deduped"]
        doc = server.wait_ready(api, "home", result["document"]["id"])
        assert doc["status"] == "ready" and doc["chunk_count"] >= 1

        again = api.post("/brains/home/files", files={"files": ("copy.md", manual)}).json()
        assert again["results"][0]["deduped"] is True
        assert again["results"][0]["document"]["id"] == doc["id"]

        hits = api.post(
            "/brains/home/search", json={"query": "what pressure should the gauge read"}
        ).json()["hits"]
        top = hits[0]
        assert top["document_id"] == doc["id"] and top["name"] == "boiler.md"
        assert top["line_start"] is not None and "Pressure" in top["heading_path"]
        assert "**" in top["snippet"] and top["matched_by"] in ("text", "vector", "both")


def test_committed_openapi_matches_the_app(loci) -> None:  # type: ignore[no-untyped-def]
    committed = json.loads((ROOT / "openapi.json").read_text())
    current = build_api(loci, run_worker=False).openapi()
    assert current["openapi"].startswith("3.1")
    assert committed == json.loads(json.dumps(current)), (
        "the API changed: regenerate with `loci openapi > openapi.json` and commit the diff"
    )
