"""MCP over streamable HTTP at /mcp on a real server (uvicorn on 127.0.0.1), with Loci tokens.

The client is the official `mcp` client; every request carries `Authorization: Bearer …`.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from loci.auth.secrets import hash_secret
from loci.embed.base import Embedder
from loci.service import Loci
from tests.support.live_server import LiveServer
from tests.support.mcp_http import ACCEPT, INITIALIZE, over_http
from tests.support.mcp_results import ok, text_of
from tests.support.oauth_flow import App, Browser
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.services import make_service


@pytest.mark.attack
def test_every_request_needs_a_valid_token(server: LiveServer) -> None:
    with httpx.Client(base_url=server.url, headers=ACCEPT, timeout=30) as http:
        assert http.post("/mcp", json=INITIALIZE).status_code == 401
        assert (
            http.post("/mcp", json=INITIALIZE, headers={"Authorization": "Basic eDp5"}).status_code
            == 401
        )
        wrong = http.post("/mcp", json=INITIALIZE, headers={"Authorization": "Bearer loci_nope"})
        assert wrong.status_code == 401 and wrong.headers["WWW-Authenticate"].startswith("Bearer")
        user = server.accounts.user("owner")
        issued = server.accounts.issue_token(user, name="agent")
        good = {"Authorization": f"Bearer {issued.secret}"}
        assert http.post("/mcp", json=INITIALIZE, headers=good).status_code == 200
        server.accounts.revoke(user, issued.token.id)
        assert http.post("/mcp", json=INITIALIZE, headers=good).status_code == 401
        # the session cookie of the web app is not a way in either
        cookie = {"Cookie": "loci_session=x"}
        assert http.post("/mcp", json=INITIALIZE, headers=cookie).status_code == 401


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_file_created_over_http_is_found_by_search(server: LiveServer, mode: str) -> None:
    async def steps(c: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        added = ok(await c.call_tool("create_file", {
            "name": "kiln.md", "content": "# Kiln\n\nThe kiln fires at 1240 degrees for stoneware.",
        }))  # fmt: skip
        found = ok(await c.call_tool("search", {"query": "kiln stoneware temperature"}))
        return added, found

    added, found = over_http(server, server.owner_token, steps, mode)
    assert added["searchable"] is True  # the server's worker indexed it before the reply
    assert found["hits"][0]["document_id"] == added["document"]["id"]
    assert "1240 degrees" in found["hits"][0]["text"]


# isolation: a token for brain A, and brain B next door ------------------------------------
CALLS: dict[str, dict[str, Any]] = {
    "search": {"query": "the secret plan"},
    "list_files": {},
    "read": {"document_id": 1},
    "related": {"document_id": 1},
    "ask": {"question": "What is the secret plan?"},
    "quiz": {},
    "flashcards": {},
    "brain_query": {"query": "secret plan"},
    "brain_get": {"page": "plan-b"},
    "brain_timeline": {},
    "brain_doctor": {},
    "digest": {},
    "list_sources": {},
    "list_versions": {"document_id": 1},
    "add_url": {"url": "https://example.org/"},
    "create_file": {"name": "intrusion.md", "content": "written from A's token"},
    "save": {"text": "written from A's token"},
    "brain_append_timeline": {"page": "plan-b", "text": "written from A's token"},
    "brain_link": {"page": "plan-b", "relation": "owned_by", "target": "plan-b"},
    "brain_rewrite": {"page": "plan-b", "truth": "written from A's token"},
}


def _plant_brain_b(loci: Loci) -> tuple[int, str]:
    b = loci.brain("b")
    secret = loci.library.add_note(
        b, "The secret plan of brain B is to repaint the lighthouse."
    ).document
    page = loci.graph.create(b, actor="test", doc_type="project", title="Plan B", text="Quiet.")
    loci.library.wait_for(b, [d.id for d in loci.library.documents(b, status="processing")])
    return secret.id, page.content_hash


def _token(server: LiveServer, issued: str, scope: str, brains: list[str] | None) -> str:
    """The owner's token: made by them, or got by an application through OAuth (for /mcp)."""
    user = server.accounts.user("owner")
    if issued == "made":
        brain_ids = [server.loci.store.get_brain(b).id for b in brains] if brains else None
        made = server.accounts.issue_token(user, name="agent", scope=scope, brain_ids=brain_ids)  # type: ignore[arg-type]
        return made.secret
    browser = Browser(server, "owner")
    try:
        return str(App(server).connect(browser, access=scope, brains=brains)["access_token"])
    finally:
        browser.close()


@pytest.mark.attack
@pytest.mark.parametrize("issued", ["made", "oauth"])
def test_a_token_for_brain_a_reaches_nothing_of_brain_b(server: LiveServer, issued: str) -> None:
    loci = server.loci
    a = loci.brain("a")
    loci.library.add_note(a, "Brain A keeps the garden rota.")
    b_doc, b_hash = _plant_brain_b(loci)
    before = [(d.id, d.content_hash) for d in loci.library.documents(loci.brain("b"))]
    token = _token(server, issued, "write", ["a"])

    async def steps(c: Client) -> dict[str, Any]:
        names = {t.name for t in (await c.list_tools()).tools}
        assert names == set(CALLS) | {"list_brains"}  # a new tool must join this matrix
        outcomes = {}
        for name, arguments in CALLS.items():
            explicit = await c.call_tool(name, {**arguments, "brain": "b"})
            assert explicit.is_error, name
            assert "not_found: no brain named 'b'" in text_of(explicit), (name, text_of(explicit))
            outcomes[name] = text_of(explicit)
        # without `brain` the token's one brain is meant: B's ids mean nothing there
        by_id = await c.call_tool("read", {"document_id": b_doc})
        assert by_id.is_error and "not_found" in text_of(by_id)
        kin = await c.call_tool("related", {"document_id": b_doc})
        assert kin.is_error and "not_found" in text_of(kin)
        history = await c.call_tool("list_versions", {"document_id": b_doc})
        assert history.is_error and "not_found" in text_of(history)
        by_page = await c.call_tool("brain_get", {"page": "plan-b"})
        assert by_page.is_error and "not_found" in text_of(by_page)
        hits = ok(await c.call_tool("search", {"query": "secret plan lighthouse"}))["hits"]
        assert all("lighthouse" not in h["text"] for h in hits)
        brains = ok(await c.call_tool("list_brains", {}))["brains"]
        assert [x["name"] for x in brains] == ["a"]
        with pytest.raises(Exception, match="not_found"):
            await c.read_resource(f"loci://b/docs/{b_doc}")
        with pytest.raises(Exception, match="not_found"):
            await c.read_resource(f"loci://a/docs/{b_doc}")
        prompt = await c.get_prompt("session_start", {})
        assert "lighthouse" not in str(prompt.messages)
        return outcomes

    outcomes = over_http(server, token, steps)
    assert all("lighthouse" not in text for text in outcomes.values())
    assert [(d.id, d.content_hash) for d in loci.library.documents(loci.brain("b"))] == before
    assert loci.graph.get(loci.brain("b"), "plan-b").summary.content_hash == b_hash


@pytest.mark.attack
@pytest.mark.parametrize(
    ("mode", "issued"), [("auto", "made"), ("legacy", "made"), ("auto", "oauth")]
)
def test_a_read_only_token_sees_and_runs_no_write_tool(
    server: LiveServer, mode: str, issued: str
) -> None:
    loci = server.loci
    loci.brain()
    token = _token(server, issued, "read", None)

    async def steps(c: Client) -> tuple[set[str], list[str]]:
        names = {t.name for t in (await c.list_tools()).tools}
        refusals = []
        for name in ("create_file", "save", "add_url", "brain_rewrite"):
            result = await c.call_tool(name, {**CALLS[name]})
            assert result.is_error, name
            refusals.append(text_of(result))
        return names, refusals

    names, refusals = over_http(server, token, steps, mode)
    assert names == {n for n in CALLS if n not in WRITES} | {"list_brains"}
    assert all("read-only" in r for r in refusals)
    assert loci.library.documents(loci.brain()) == []


WRITES = {"add_url", "create_file", "save", "brain_append_timeline", "brain_link", "brain_rewrite"}


# no secrets in any output ------------------------------------------------------------------
@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    scripted = ScriptedLLM(responder=lambda _: Reply("The kiln fires at 1240 degrees [1].")).start()
    yield scripted
    scripted.stop()


@pytest.mark.attack
def test_no_tool_output_contains_a_token_or_key(
    tmp_path: Path, embedder: Embedder, llm: ScriptedLLM
) -> None:
    live = LiveServer(
        make_service(tmp_path / "home", embedder, fetch_allowed_networks=["127.0.0.1/32"])
    ).start()
    try:
        user = live.accounts.user("owner")
        key = "sk-own-model-SECRET-51c0"
        live.user_models.save(user, base_url=llm.base_url, model="scripted", api_key=key)
        other = live.accounts.issue_token(user, name="other", scope="read").secret
        sealed = (tmp_path / "home" / "secret.key").read_bytes()
        outputs = over_http(live, live.owner_token, _every_tool)
    finally:
        live.stop()
    assert any(r["_authorization"] == f"Bearer {key}" for r in llm.requests)  # the key was used
    assert "The kiln fires at 1240 degrees [1]." in outputs  # the tools did run
    for secret in (live.owner_token, other, key, hash_secret(live.owner_token), hash_secret(other)):
        assert secret not in outputs
    assert sealed.decode("latin-1").strip() not in outputs


async def _every_tool(c: Client) -> str:
    seen: list[str] = []

    async def call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await c.call_tool(name, arguments)
        seen.append(json.dumps(result.model_dump(mode="json")))
        return result.structured_content or {}

    added = await call(
        "create_file", {"name": "kiln.md", "content": "# Kiln\n\nThe kiln fires at 1240 degrees."}
    )
    doc = added["document"]["id"]
    await call("save", {"text": "Order more clay for the kiln."})
    page = (await call("brain_query", {"query": "clay kiln"}))["hits"][0]["page"]["id"]
    for name, arguments in {
        "list_brains": {}, "search": {"query": "kiln"}, "list_files": {},
        "read": {"document_id": doc}, "ask": {"question": "How hot does the kiln fire?"},
        "quiz": {}, "flashcards": {}, "brain_get": {"page": page}, "brain_timeline": {},
        "add_url": {"url": "http://127.0.0.1:9/unreachable"},
        "brain_append_timeline": {"page": page, "text": "Clay ordered."},
        "brain_link": {"page": page, "relation": "about", "target": page},
        "brain_rewrite": {"page": page, "truth": "Clay is on order."},
        "search_nothing": {},
    }.items():  # fmt: skip
        await call(name, arguments)  # errors too: their messages must not leak either
    resource = await c.read_resource(f"loci://default/docs/{doc}")
    prompt = await c.get_prompt("session_start", {"topic": "kiln"})
    seen += [resource.model_dump_json(), prompt.model_dump_json()]
    return "\n".join(seen)


@pytest.mark.attack
def test_a_token_revoked_mid_session_stops_working_at_once(server: LiveServer) -> None:
    user = server.accounts.user("owner")
    issued = server.accounts.issue_token(user, name="agent")

    async def steps(c: Client) -> None:
        ok(await c.call_tool("list_brains", {}))
        server.accounts.revoke(user, issued.token.id)
        with pytest.raises(Exception, match="error response"):  # the HTTP 401
            await c.call_tool("create_file", {"name": "late.md", "content": "after revocation"})

    over_http(server, issued.secret, steps, "legacy")
    assert server.loci.library.documents(server.loci.brain()) == []


@pytest.mark.attack
def test_a_prompt_on_an_unreadable_brain_is_a_clear_error_without_a_traceback(
    server: LiveServer, caplog: pytest.LogCaptureFixture
) -> None:
    loci = server.loci
    a = loci.brain("a")
    loci.brain("b")
    user = server.accounts.user("owner")
    token = server.accounts.issue_token(user, name="a-only", brain_ids=[a.id]).secret

    async def steps(c: Client) -> str:
        with pytest.raises(Exception) as refused:
            await c.get_prompt("session_start", {"brain": "b"})
        return str(refused.value)

    caplog.set_level(logging.DEBUG)
    for _ in range(2):
        assert "not_found: no brain named 'b'" in over_http(server, token, steps)
    tracebacks = [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    assert tracebacks == []
    refusals = [r for r in caplog.records if r.name.startswith("loci.mcp")]
    assert len(refusals) == 2 and all(r.levelno == logging.INFO for r in refusals)
