"""A JSON body nested 100,000 levels deep (`[[[[…`) is a 4xx at every entry point that reads
JSON — the API's own bodies, provider webhooks, MCP over HTTP, the CLI's item import — never a
`RecursionError` (500 or a traceback), and the server answers normally afterwards. (Slack's
signed deliveries: tests/test_slack.py.)"""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from tests.support.cli import run_cli
from tests.support.live_server import LiveServer

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

DEEP = b"[" * 100_000
JSON = {"Content-Type": "application/json"}


@pytest.fixture
def deep_server(server: LiveServer) -> LiveServer:
    with server.client() as api:
        assert api.post("/brains", json={"name": "deep"}).status_code == 201
    return server


def _still_serves(server: LiveServer) -> None:
    with server.client() as api:
        assert api.get("/health").json()["status"] == "ok"
        note = api.post("/brains/deep/notes", json={"text": "Still here after the storm."})
        assert note.status_code == 201, note.text


@pytest.mark.parametrize(
    ("path", "token"),
    [
        ("/session", ""),  # unauthenticated
        ("/search", None),
        ("/brains/deep/notes", None),
        ("/brains/deep/graph/query", None),
        ("/brains/deep/sources/jamie", None),  # a provider's webhook, with a token
        ("/brains/deep/sources/jamie", ""),  # …and unsigned: refused before it is read
    ],
)
def test_a_deeply_nested_api_body_is_a_4xx(
    deep_server: LiveServer, path: str, token: str | None
) -> None:
    with deep_server.client(token) as api:
        response = api.post(path, content=DEEP, headers=JSON)
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"]
    _still_serves(deep_server)


def test_a_deeply_nested_mcp_request_is_a_4xx(deep_server: LiveServer) -> None:
    server = deep_server
    headers = {
        **JSON,
        "Accept": "application/json, text/event-stream",
        "Authorization": f"Bearer {server.owner_token}",
    }
    with httpx.Client(base_url=server.url, timeout=30) as http:
        response = http.post("/mcp", content=DEEP, headers=headers)
    assert 400 <= response.status_code < 500, response.text
    _still_serves(server)


def test_the_cli_refuses_a_deeply_nested_item_file_and_a_nul_with_a_reason(
    tmp_path: Path,
) -> None:
    home = tmp_path / "home"
    deep = tmp_path / "deep.json"
    deep.write_bytes(DEEP)
    result = run_cli("brain", "ingest-item", str(deep), "--provider", "jamie", home=home)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "nests too deeply" in result.stderr
    note = run_cli("note", "-", home=home, stdin="a note with a \x00 in it")
    assert note.returncode != 0 and "Traceback" not in note.stderr
    assert "the note contains a NUL character" in note.stderr
