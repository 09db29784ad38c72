"""A NUL character (U+0000) in any text a request carries is a 400 that names the field, on
both backends — PostgreSQL cannot store one, and SQLite must not accept what PostgreSQL would
refuse — while a file whose extracted text holds one is kept, with the NUL dropped.

The matrix is generated from the app's own OpenAPI document: every operation, every string in
its path, query and body (nested ones and free-form keys too) gets a request with a NUL in that
one place, so a new route or field is covered the day it is added.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import anyio
import httpx
import pytest
from mcp import Client

from loci.embed.base import Embedder
from loci.mcp.stdio import local_server
from loci.service import Loci
from tests.support.live_server import LiveServer
from tests.support.mcp_results import text_of
from tests.support.services import BACKENDS, served_world

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

NUL_TEXT = "before\x00after"
BRAIN = "nul"
PROBLEM = "contains a NUL character"


@dataclass
class World:
    server: LiveServer
    ids: dict[str, Any]  # a real value for each path parameter

    def client(self) -> httpx.Client:
        return self.server.client()


@pytest.fixture(scope="module", params=BACKENDS)
def world(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, request: pytest.FixtureRequest
) -> Iterator[World]:
    with served_world(tmp_path_factory, embedder, request, "nul") as (loci, server):
        with server.client() as api:
            assert api.post("/brains", json={"name": BRAIN}).status_code == 201
            note = api.post(f"/brains/{BRAIN}/notes", json={"text": "# Seed\n\nA seeded note."})
            assert note.status_code == 201, note.text
            page = api.post(
                f"/brains/{BRAIN}/graph/documents", json={"type": "project", "title": "Seed page"}
            )
            assert page.status_code == 201, page.text
            token_id = api.get("/me").json()["token"]["id"]
        ids = {
            "brain": BRAIN,
            "user": "owner",
            "document_id": note.json()["document"]["id"],
            "doc_id": page.json()["id"],
            "token_id": token_id,
            "conversation_id": 1,
            "message_id": 1,
        }
        yield World(server, ids)


# generating requests from the schema ---------------------------------------------------------
Path = tuple[Any, ...]  # where a string sits in a body: keys, list indexes, ("key", name)


class FreeForm(dict[str, Any]):
    """An object whose keys the client chooses (`additionalProperties`): its keys are text too."""


def _resolve(schema: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
    """`schema`, with a `$ref` (`#/components/schemas/X`, `#/$defs/X`) looked up in `spec`."""
    while "$ref" in schema:
        target: Any = spec
        for part in schema["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        schema = target
    return schema


def _sample(schema: dict[str, Any], spec: dict[str, Any]) -> Any:
    """A value of the schema's shape, with every optional property present (each string is a
    place to put a NUL)."""
    schema = _resolve(schema, spec)
    for key in ("anyOf", "oneOf", "allOf"):
        if key in schema:
            options = [s for s in schema[key] if _resolve(s, spec).get("type") != "null"]
            return _sample(options[0], spec)
    if "enum" in schema:
        return schema["enum"][0]
    if "const" in schema:
        return schema["const"]
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        value = {name: _sample(s, spec) for name, s in schema.get("properties", {}).items()}
        extra = schema.get("additionalProperties")
        if "properties" not in schema and extra is not False:
            return FreeForm(title=_sample(extra, spec) if isinstance(extra, dict) else "text")
        return value
    if kind == "array":
        return [_sample(schema.get("items", {"type": "string"}), spec)]
    if kind == "integer":
        return 1
    if kind == "number":
        return 0.5
    if kind == "boolean":
        return False
    if schema.get("format") == "date":
        return "2024-01-01"
    return "text"


def _strings(value: Any, path: Path = ()) -> Iterator[Path]:
    """Every string in `value`, and every key of an object (a key is text a client chose)."""
    if isinstance(value, str):
        yield path
    elif isinstance(value, dict):
        for key, inner in value.items():
            if isinstance(value, FreeForm):
                yield (*path, ("key", key))
            yield from _strings(inner, (*path, key))
    elif isinstance(value, list):
        for i, inner in enumerate(value):
            yield from _strings(inner, (*path, i))


def _with_nul(value: Any, path: Path) -> Any:
    if not path:
        return NUL_TEXT
    head, rest = path[0], path[1:]
    if isinstance(head, tuple):  # ("key", name): the key itself
        copy = dict(value)
        copy[NUL_TEXT] = copy.pop(head[1])
        return copy
    if isinstance(value, dict):
        return {**value, head: _with_nul(value[head], rest)}
    return [_with_nul(v, rest) if i == head else v for i, v in enumerate(value)]


def _name(path: Path) -> str:
    """The field as the error names it: `filters.tags[0]`."""
    name = ""
    for part in path:
        if isinstance(part, tuple):
            return f"{name.lstrip('.')} (a key)"
        name += f"[{part}]" if isinstance(part, int) else f".{part}"
    return name.lstrip(".")


@dataclass(frozen=True)
class Case:
    operation_id: str
    method: str
    field: str  # what the error must name
    path: str
    params: dict[str, str]
    body: dict[str, Any] | None
    form: dict[str, str] | None
    uploads: tuple[str, ...] = ()  # the form's file fields

    def send(self, api: httpx.Client) -> httpx.Response:
        if self.form is not None:
            files = {name: ("a.md", b"# A\n\ntext\n", "text/markdown") for name in self.uploads}
            return api.request(
                self.method, self.path, params=self.params, data=self.form, files=files
            )
        return api.request(self.method, self.path, params=self.params, json=self.body)


def _url(template: str, in_path: dict[str, Any], ids: dict[str, Any], nul_in: str = "") -> str:
    path = template.removeprefix("/api/v1")
    for name, param in in_path.items():
        value = NUL_TEXT if name == nul_in else ids.get(name, param["schema"].get("enum", [1])[0])
        path = path.replace("{" + name + "}", quote(str(value), safe=""))
    return path


def _operation_cases(
    template: str, method: str, op: dict[str, Any], spec: dict[str, Any], ids: dict[str, Any]
) -> Iterator[Case]:
    params = op.get("parameters", [])
    in_path = {p["name"]: p for p in params if p["in"] == "path"}
    in_query = [p["name"] for p in params if p["in"] == "query"]
    content = op.get("requestBody", {}).get("content", {})
    form = "multipart/form-data" in content
    body: Any = None
    uploads: tuple[str, ...] = ()
    if "application/json" in content:
        body = _sample(content["application/json"]["schema"], spec)
    elif form:
        schema = _resolve(content["multipart/form-data"]["schema"], spec)
        uploads = tuple(
            name
            for name, field in schema.get("properties", {}).items()
            if "contentMediaType" in field or "contentMediaType" in field.get("items", {})
        )
        fields = _sample(schema, spec)
        # the files are bytes, sent as files
        body = {k: v for k, v in fields.items() if isinstance(v, str) and k not in uploads}

    def case(field: str, path: str, params: dict[str, str], sent: Any) -> Case:
        json_body, form_body = (None, sent) if form else (sent, None)
        return Case(
            op["operationId"], method.upper(), field, path, params, json_body, form_body, uploads
        )

    url = _url(template, in_path, ids)
    for name, param in in_path.items():
        if _resolve(param["schema"], spec).get("type") == "string":
            yield case(name, _url(template, in_path, ids, name), {}, body)
    for name in in_query:
        yield case(name, url, {name: NUL_TEXT}, body)
    # a parameter the route does not take is read by nothing, but still refused
    yield case("stray", url, {"stray": NUL_TEXT}, body)
    if body is None or op["operationId"] == "slack_events":
        return  # Slack's body is read only once its signature checks (tests/test_slack.py)
    for where in _strings(body):
        yield case(_name(where), url, {}, _with_nul(body, where))


def cases(spec: dict[str, Any], ids: dict[str, Any]) -> list[Case]:
    return [
        case
        for template, methods in spec["paths"].items()
        for method, op in methods.items()
        for case in _operation_cases(template, method, op, spec, ids)
    ]


# the tests ------------------------------------------------------------------------------------
def test_every_string_of_every_route_refuses_a_nul_with_a_400_naming_it(world: World) -> None:
    with world.client() as api:
        spec = api.get("/openapi.json").json()
        generated = cases(spec, world.ids)
        assert len({c.operation_id for c in generated}) == sum(
            len(m) for m in spec["paths"].values()
        )
        wrong = []
        for case in generated:
            response = case.send(api)
            body = (
                response.json()
                if response.headers.get("content-type") == "application/json"
                else {}
            )
            message = str(body.get("message", ""))
            if (
                response.status_code != 400
                or body.get("error") != "invalid_input"
                or not message.startswith(f"{case.field} {PROBLEM}")
            ):
                status = response.status_code
                wrong.append(f"{case.operation_id} {case.field}: {status} {response.text[:200]}")
        assert not wrong, "\n".join(wrong)
        # nothing of it was stored, and the server still answers
        notes = api.get(f"/brains/{BRAIN}/notes").json()
        assert [n["id"] for n in notes] == [world.ids["document_id"]]
        assert api.get("/health").json()["status"] == "ok"


def test_a_question_with_a_nul_is_a_400_not_an_empty_answer_stream(world: World) -> None:
    with world.client() as api:
        response = api.post(f"/brains/{BRAIN}/ask", json={"question": "why\x00 not?"})
        assert response.status_code == 400
        assert response.headers["content-type"] == "application/json"
        assert response.json()["message"].startswith(f"question {PROBLEM}")


def test_signing_in_with_a_nul_in_the_token_is_a_400(world: World) -> None:
    with world.server.client("") as anonymous:
        response = anonymous.post("/session", json={"token": "loci_\x00"})
        assert response.status_code == 400
        assert response.json() == {
            "error": "invalid_input",
            "message": "token contains a NUL character (\\u0000), which Loci does not store;"
            " remove it",
        }


def test_a_file_with_a_nul_in_its_text_is_kept_without_it(world: World) -> None:
    # A NUL byte alone makes a text file binary; after a byte-order mark, a stray one in
    # enough real text is read (as a PDF's text layer can carry one too).
    filler = b"Every entry is checked twice by the night clerk before it is filed.\n" * 3
    data = b"\xef\xbb\xbf# Ledger\n\nThe quarterly\x00 ledger balances at dawn.\n\n" + filler
    with world.client() as api:
        uploaded = api.post(
            f"/brains/{BRAIN}/files", files={"files": ("ledger.md", data, "text/markdown")}
        )
        assert uploaded.status_code == 202, uploaded.text
        doc_id = uploaded.json()["results"][0]["document"]["id"]
        doc = world.server.wait_ready(api, BRAIN, doc_id)
        assert doc["status"] == "ready", doc
        text = api.get(f"/brains/{BRAIN}/files/{doc_id}/text").json()["text"]
        assert "The quarterly ledger balances at dawn." in text
        chunks = api.get(f"/brains/{BRAIN}/files/{doc_id}/chunks").json()
        assert chunks and all("\x00" not in json.dumps(c) for c in chunks)
        hits = api.post(
            f"/brains/{BRAIN}/search", json={"query": "quarterly ledger", "mode": "text"}
        ).json()["hits"]
        assert hits and hits[0]["document_id"] == doc_id
        # the file itself is kept as it came
        assert api.get(f"/brains/{BRAIN}/files/{doc_id}/download").content == data


@pytest.mark.both_backends
def test_every_string_argument_of_every_mcp_tool_refuses_a_nul(loci: Loci) -> None:
    async def run() -> tuple[int, list[str]]:
        tried, wrong = 0, []
        async with Client(local_server(loci)) as client:
            for tool in (await client.list_tools()).tools:
                schema = tool.input_schema
                arguments = _sample(schema, schema)
                for where in _strings(arguments):
                    tried += 1
                    result = await client.call_tool(tool.name, _with_nul(arguments, where))
                    text = text_of(result)
                    if not (result.is_error and text.startswith(f"invalid_input: {_name(where)}")):
                        wrong.append(f"{tool.name} {_name(where)}: {text[:200]}")
        return tried, wrong

    tried, wrong = anyio.run(run)
    assert tried > 30 and not wrong, "\n".join(wrong)
    brain = loci.brain("default")
    assert loci.library.documents(brain) == []  # no tool ran
