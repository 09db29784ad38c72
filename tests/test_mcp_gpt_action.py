"""Custom GPTs and other clients: `loci openapi --gpt` and the JSON answer a GPT Action calls."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.cli import run_cli
from tests.support.live_server import LiveServer
from tests.support.paths import REPO

GPT_NEEDS = {"search_brain", "answer", "capture", "list_files", "list_brains", "create_note"}


def _refs(value: Any) -> set[str]:
    if isinstance(value, dict):
        return {value["$ref"]} if "$ref" in value else set().union(*map(_refs, value.values()))
    if isinstance(value, list):
        return set().union(*map(_refs, value)) if value else set()
    return set()


def test_the_gpt_action_document_fits_a_gpt(tmp_path: Path) -> None:
    result = run_cli(
        "openapi", "--gpt", "--server-url", "https://brain.example.org/", home=tmp_path
    )
    assert result.returncode == 0, result.stderr
    spec = json.loads(result.stdout)
    assert spec["openapi"].startswith("3.1")
    assert spec["servers"] == [{"url": "https://brain.example.org"}]
    operations = [op for methods in spec["paths"].values() for op in methods.values()]
    assert {op["operationId"] for op in operations} >= GPT_NEEDS
    assert len(operations) <= 30  # a GPT Action's limit
    assert spec["components"]["securitySchemes"] == {
        "HTTPBearer": {
            "type": "http",
            "scheme": "bearer",
            "description": "A Loci API token: `loci_…`",
        }
    }
    for op in operations:
        assert 40 <= len(op["description"]) <= 300, op["operationId"]
        assert op["security"] == [{"HTTPBearer": []}], op["operationId"]
    schemas = spec["components"]["schemas"]
    for ref in _refs(spec["paths"]) | _refs(schemas):  # every schema it names is in it
        assert ref.removeprefix("#/components/schemas/") in schemas, ref


def test_gpt_without_a_server_url_is_refused(tmp_path: Path) -> None:
    result = run_cli("openapi", "--gpt", home=tmp_path)
    assert result.returncode != 0 and "--server-url" in result.stderr


def test_answer_is_one_json_reply_with_citations(server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "home"}).status_code == 201
        note = api.post("/brains/home/notes", json={
            "title": "Boiler", "text": "The boiler is serviced every October by Brightflow.",
        }).json()  # fmt: skip
        server.wait_ready(api, "home", note["document"]["id"])
        reply = api.post("/brains/home/answer", json={"question": "Who services the boiler?"})
        assert reply.status_code == 200 and reply.headers["content-type"] == "application/json"
        body = reply.json()
        assert "Brightflow" in body["answer"] and "[1]" in body["answer"]
        assert body["citations"][0]["name"] == note["document"]["name"]
        follow_up = api.post("/brains/home/answer", json={
            "question": "When?", "conversation_id": body["conversation_id"],
        })  # fmt: skip
        assert follow_up.status_code == 200
        assert follow_up.json()["conversation_id"] == body["conversation_id"]
        unknown = api.post("/brains/home/answer", json={"question": "x", "conversation_id": 999})
        assert unknown.status_code == 404
        assert api.post("/brains/home/answer", json={"question": " "}).status_code == 422


def test_printing_the_api_document_leaves_the_data_directory_alone(tmp_path: Path) -> None:
    home = tmp_path / "home"
    result = run_cli("openapi", home=home)
    assert result.returncode == 0, result.stderr
    committed = json.loads((REPO / "openapi.json").read_text())
    assert json.loads(result.stdout) == committed
    assert not home.exists()  # no database, key or owner token made just to print a schema
