"""The MCP server in process, through the official `mcp` client: what an agent sees and gets.

Each test talks to the real server (`loci.mcp`) over the SDK's in-memory transport, on a real
SQLite data directory with the real local embedding model.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.types import CallToolResult, TextContent

from loci.auth.accounts import Accounts
from loci.embed.base import Embedder
from loci.llm.client import ChatSettings, OpenAICompatibleChat
from loci.mcp.access import TokenCaller
from loci.mcp.common import settle_here
from loci.mcp.server import build_server
from loci.mcp.stdio import local_server
from loci.service import Loci
from tests.support import text_files
from tests.support.loopback import Loopback
from tests.support.mcp_results import ok, text_of
from tests.support.paths import REPO
from tests.support.scripted_llm import AnswerSteps, Reply, ScriptedLLM
from tests.support.services import make_service

T = TypeVar("T")
EXAMPLES = REPO / "examples"

PLAN = """# Zebra project

## Storage decision

We chose SQLite for the zebra project because it is embedded and needs no server.
The decision was taken on 12 March by the platform team.
"""


def session(server: MCPServer, steps: Callable[[Client], Awaitable[T]]) -> T:
    async def run() -> T:
        async with Client(server) as client:
            return await steps(client)

    return anyio.run(run)


@pytest.fixture
def server(loci: Loci) -> MCPServer:
    return local_server(loci)


def test_tools_are_described_bounded_and_annotated(server: MCPServer) -> None:
    tools = session(server, lambda c: c.list_tools()).tools
    by_name = {t.name: t for t in tools}
    expected_reads = {
        "list_brains", "search", "list_files", "read", "related", "ask", "quiz", "flashcards",
        "digest", "brain_query", "brain_get", "brain_timeline", "brain_doctor", "list_sources",
        "list_versions",
    }  # fmt: skip
    expected_writes = {
        "add_url", "create_file", "save", "brain_append_timeline", "brain_link", "brain_rewrite",
        "import_export",
    }  # fmt: skip
    assert set(by_name) == expected_reads | expected_writes
    for tool in tools:
        assert tool.description and len(tool.description) > 60, tool.name
        assert tool.output_schema is not None, tool.name  # structured output
        assert tool.annotations is not None and tool.annotations.title, tool.name
        read_only = tool.name in expected_reads
        assert tool.annotations.read_only_hint is read_only, tool.name
        if tool.name != "list_brains":  # every other tool works on a chosen brain
            assert "brain" in tool.input_schema["properties"], tool.name
    assert by_name["brain_rewrite"].annotations.destructive_hint is True  # type: ignore[union-attr]
    assert by_name["create_file"].annotations.destructive_hint is False  # type: ignore[union-attr]
    for name in ("add_url", "create_file"):
        assert by_name[name].input_schema["properties"]["dry_run"]["type"] == "boolean"
        assert "dry_run" in (by_name[name].description or ""), name
    templates = session(server, lambda c: c.list_resource_templates()).resource_templates
    assert [t.uri_template for t in templates] == ["loci://{brain}/docs/{doc_id}"]
    prompts = session(server, lambda c: c.list_prompts()).prompts
    assert [p.name for p in prompts] == ["session_start"]
    assert {a.name for a in prompts[0].arguments or []} == {"brain", "topic"}
    query = by_name["search"].input_schema["properties"]["query"]
    assert query["maxLength"] == 2000 and query["minLength"] == 1
    limit = by_name["search"].input_schema["properties"]["limit"]
    assert (limit["minimum"], limit["maximum"]) == (1, 30)


def test_a_created_file_is_found_read_and_cited(server: MCPServer, loci: Loci) -> None:
    async def steps(c: Client) -> None:
        added = ok(await c.call_tool("create_file", {"name": "zebra.md", "content": PLAN}))
        assert added["searchable"] is True and added["deduped"] is False
        doc_id = added["document"]["id"]
        again = ok(await c.call_tool("create_file", {"name": "copy.md", "content": PLAN}))
        assert again["deduped"] is True and again["document"]["id"] == doc_id

        found = ok(await c.call_tool("search", {"query": "which database did zebra choose"}))
        best = found["hits"][0]
        assert best["document_id"] == doc_id and best["name"] == "zebra.md"
        assert "SQLite" in best["text"] and best["heading_path"][-1] == "Storage decision"
        assert best["line_start"] is not None and best["uri"] == f"loci://default/docs/{doc_id}"

        other = {"name": "other.md", "content": "# Other\n\nSQLite is also used by the yak team."}
        ok(await c.call_tool("create_file", {**other, "tags": ["yak"]}))
        only = {"query": "SQLite", "file": "zeb*.md"}
        assert {h["name"] for h in ok(await c.call_tool("search", only))["hits"]} == {"zebra.md"}
        tagged = {"query": "SQLite", "tag": "yak"}
        assert {h["name"] for h in ok(await c.call_tool("search", tagged))["hits"]} == {"other.md"}

        page = ok(await c.call_tool("read", {"document_id": doc_id, "max_chars": 100}))
        assert page["text"].startswith("Zebra project") and page["next_offset"] == 100
        rest = ok(await c.call_tool("read", {"document_id": doc_id, "offset": 100}))
        assert page["text"] + rest["text"] == loci.library.document_text(loci.brain(), doc_id)
        assert rest["next_offset"] is None

        passage = ok(await c.call_tool("read", {"document_id": doc_id, "passage": best["passage"]}))
        assert "SQLite" in passage["text"] and passage["line_start"] == best["line_start"]

        listed = ok(await c.call_tool("list_files", {"limit": 1}))
        assert [f["name"] for f in listed["files"]] == ["other.md"]  # newest first

        kin = ok(await c.call_tool("related", {"document_id": doc_id, "limit": 3}))
        assert [r["document"]["name"] for r in kin["related"]] == ["other.md"]  # all it has
        assert "SQLite" in kin["related"][0]["excerpt"] and kin["related"][0]["passage"] == 0
        assert 0 < kin["related"][0]["score"] <= 1  # named as the HTTP API names it
        assert listed["total"] == 2 and listed["next_offset"] == 1
        older = ok(await c.call_tool("list_files", {"offset": 1}))
        assert [f["name"] for f in older["files"]] == ["zebra.md"] and older["next_offset"] is None

        resource = await c.read_resource(f"loci://default/docs/{doc_id}")
        assert "SQLite" in resource.contents[0].text  # type: ignore[union-attr]

    session(server, steps)


def test_ask_answers_with_citations_without_a_model(server: MCPServer) -> None:
    async def steps(c: Client) -> dict[str, Any]:
        ok(await c.call_tool("create_file", {"name": "zebra.md", "content": PLAN}))
        return ok(await c.call_tool("ask", {"question": "Why did we choose SQLite?"}))

    answer = session(server, steps)
    assert "embedded" in answer["answer"] and "[1]" in answer["answer"]
    assert answer["citations"][0]["name"] == "zebra.md"
    assert answer["from_model"] is False


def test_ask_takes_filters_and_other_brains(server: MCPServer, loci: Loci) -> None:
    loci.brain("work")

    async def steps(c: Client) -> list[dict[str, Any]]:
        ok(await c.call_tool("create_file", {"name": "zebra.md", "content": PLAN}))
        other = "# Yak\n\nThe yak project chose SQLite too, for its embedded tests."
        ok(await c.call_tool("create_file", {"name": "yak.md", "content": other, "brain": "work"}))
        question = "Why did the projects choose SQLite?"
        both = ok(await c.call_tool("ask", {"question": question, "also_brains": ["work"]}))
        notes = ok(await c.call_tool("ask", {"question": question, "kinds": ["note"]}))
        refused = await c.call_tool("ask", {"question": question, "also_brains": ["nowhere"]})
        bad_date = await c.call_tool("ask", {"question": question, "after": "2025-13-40"})
        assert refused.is_error and "no brain named 'nowhere'" in text_of(refused)
        assert bad_date.is_error and "not a date" in text_of(bad_date)
        return [both, notes]

    both, notes = session(server, steps)
    assert {(c["brain"], c["name"]) for c in both["citations"]} == {
        ("default", "zebra.md"), ("work", "yak.md")
    }  # fmt: skip
    assert notes["citations"] == [] and "I found nothing" in notes["answer"]


@pytest.fixture
def llm() -> Iterator[ScriptedLLM]:
    scripted = ScriptedLLM().start()
    yield scripted
    scripted.stop()


_MODEL_STEPS = AnswerSteps(
    Reply("The platform team chose SQLite on 12 March [1]."),
    rewritten="zebra storage decision",
    queries=["zebra storage decision"],
)


def test_ask_uses_the_configured_model_and_leaks_no_key(
    loci: Loci, llm: ScriptedLLM, embedder: Any
) -> None:
    key = "sk-scripted-SECRET-9f3a"
    llm.responder = _MODEL_STEPS
    settings = ChatSettings(base_url=llm.base_url, api_key=key, model="scripted", timeout_s=5.0)
    with_model = Loci(
        store=loci.store,
        blobs=loci.blobs,
        embedder=lambda: embedder,
        settings=loci.settings,
        chat=lambda: OpenAICompatibleChat(settings),
    )

    async def steps(c: Client) -> dict[str, Any]:
        ok(await c.call_tool("create_file", {"name": "zebra.md", "content": PLAN}))
        return ok(await c.call_tool("ask", {"question": "Who chose SQLite and when?"}))

    answer = session(local_server(with_model), steps)
    assert answer["answer"] == "The platform team chose SQLite on 12 March [1]."
    assert answer["from_model"] is True and answer["citations"][0]["name"] == "zebra.md"
    assert any(r["_authorization"] == f"Bearer {key}" for r in llm.requests)
    assert key not in json.dumps(answer)


def test_save_keeps_a_note_and_the_session_prompt_recalls_it(server: MCPServer) -> None:
    async def steps(c: Client) -> tuple[dict[str, Any], dict[str, Any], str]:
        saved = ok(await c.call_tool("save", {"text": "Decided: the zebra beta ships on Friday."}))
        again = ok(await c.call_tool("save", {"text": "Decided: the zebra beta ships on Friday."}))
        prompt = await c.get_prompt("session_start", {"topic": "zebra beta"})
        content = prompt.messages[0].content
        assert isinstance(content, TextContent)
        return saved, again, content.text

    saved, again, recalled = session(server, steps)
    assert saved["deduped"] is False and again["deduped"] is True
    assert saved["draft"]["path"].startswith("inbox/")
    assert "zebra beta ships on Friday" in recalled
    assert "quoted material" in recalled  # the brief tells the model it is context, not orders


def test_graph_tools_read_and_edit_pages(server: MCPServer, loci: Loci) -> None:
    brain = loci.brain()
    loci.graph.create(brain, actor="test", doc_type="project", title="Zebra", text="A beta.")
    loci.graph.create(brain, actor="test", doc_type="person", title="Ada Byron", text="Lead.")
    loci.library.wait_for(brain, [d.id for d in loci.library.documents(brain, status="processing")])

    async def steps(c: Client) -> None:
        hits = ok(await c.call_tool("brain_query", {"query": "zebra beta"}))["hits"]
        assert hits[0]["page"]["id"] == "zebra"
        page = ok(await c.call_tool("brain_get", {"page": "Zebra"}))
        assert page["truth"].strip() == "A beta." and page["page"]["type"] == "project"

        entry = {"page": "zebra", "text": "Beta opened to ten users.", "at": "2026-11-02"}
        written = ok(await c.call_tool("brain_append_timeline", entry))
        assert written["changed"] is True
        assert ok(await c.call_tool("brain_append_timeline", entry))["changed"] is False
        timeline = ok(await c.call_tool("brain_timeline", {"since": "2026-11-01"}))
        assert [(e["doc_id"], e["at"]) for e in timeline["entries"]] == [("zebra", "2026-11-02")]

        link = {"page": "ada-byron", "relation": "works_on", "target": "zebra"}
        assert ok(await c.call_tool("brain_link", link))["changed"] is True
        backlinks = ok(await c.call_tool("brain_get", {"page": "zebra"}))["backlinks"]
        assert {"source": "ada-byron", "target": "zebra", "type": "works_on"} in backlinks

        stale = "0" * 64
        refused = await c.call_tool(
            "brain_rewrite", {"page": "zebra", "truth": "Replaced.", "expected_hash": stale}
        )
        assert refused.is_error and "conflict" in text_of(refused)
        current = ok(await c.call_tool("brain_get", {"page": "zebra"}))["page"]["content_hash"]
        rewritten = ok(
            await c.call_tool(
                "brain_rewrite",
                {"page": "zebra", "truth": "A public beta.", "expected_hash": current},
            )
        )
        assert rewritten["content_hash"] != current
        assert ok(await c.call_tool("brain_get", {"page": "zebra"}))["truth"].strip() == (
            "A public beta."
        )

    session(server, steps)


def test_quiz_and_flashcards_cite_their_passages(server: MCPServer) -> None:
    manual = (EXAMPLES / "boiler-manual.md").read_text(encoding="utf-8")

    async def steps(c: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        ok(await c.call_tool("create_file", {"name": "boiler-manual.md", "content": manual}))
        quiz = ok(await c.call_tool("quiz", {"topic": "boiler pressure", "count": 2}))
        cards = ok(await c.call_tool("flashcards", {"topic": "boiler pressure", "count": 2}))
        return quiz, cards

    quiz, cards = session(server, steps)
    assert quiz["questions"] and cards["cards"]
    for q in quiz["questions"]:
        assert len(q["choices"]) == 4 and 0 <= q["answer"] < 4
        assert q["source"]["name"] == "boiler-manual.md"
        # the blanked sentence, with the right choice put back, is in the cited passage
        filled = q["question"].removeprefix("Fill in the blank: ")
        assert filled.replace("_____", q["choices"][q["answer"]]) in " ".join(manual.split())
    assert all(card["source"]["name"] == "boiler-manual.md" for card in cards["cards"])


@pytest.mark.parametrize(
    ("tool", "arguments", "expected"),
    [
        ("search", {"query": "x", "limit": 1000}, "limit"),
        ("search", {"query": ""}, "query"),
        ("search", {}, "query"),
        ("search", {"query": "x", "brain": "no-such-brain"}, "no brain named 'no-such-brain'"),
        ("search", {"query": "x", "brain": "../etc"}, "brain"),
        ("read", {"document_id": 0}, "document_id"),
        ("read", {"document_id": 424242}, "not_found: no document 424242"),
        ("create_file", {"name": "report.pdf", "content": "text"}, "binary format"),
        ("create_file", {"name": "a.md", "content": "   "}, "content"),
        ("add_url", {"url": "file:///etc/passwd"}, "url"),
        ("add_url", {"url": "http://127.0.0.1:9/x"}, "blocked"),
        ("brain_get", {"page": "nobody"}, "not_found"),
        ("brain_timeline", {"since": "last week"}, "since"),
        ("brain_link", {"page": "a", "relation": "Works At", "target": "b"}, "relation"),
        ("quiz", {"count": 99}, "count"),
    ],
)
def test_bad_arguments_are_clear_tool_errors(
    server: MCPServer, tool: str, arguments: dict[str, Any], expected: str
) -> None:
    result = session(server, lambda c: c.call_tool(tool, arguments))
    assert result.is_error
    assert expected in text_of(result), text_of(result)
    assert "pydantic.dev" not in text_of(result)  # the rule broken, without library links


def test_a_read_only_token_is_not_offered_write_tools(loci: Loci) -> None:
    accounts = Accounts(loci.store)
    assert accounts.bootstrap_owner("owner") is not None
    user = accounts.user("owner")
    read_only = accounts.issue_token(user, name="reader", scope="read")
    principal = accounts.authenticate(read_only.secret)
    loci.brain()  # the default brain exists
    caller = TokenCaller(principal, accounts, "default", lambda: None)
    server = build_server(loci, lambda _: caller, settle_here)

    async def steps(c: Client) -> tuple[set[str], CallToolResult]:
        names = {t.name for t in (await c.list_tools()).tools}
        refused = await c.call_tool("create_file", {"name": "a.md", "content": "hello"})
        dry = {"name": "a.md", "content": "hello", "dry_run": True}
        assert "read-only" in text_of(await c.call_tool("create_file", dry))
        return names, refused

    names, refused = session(server, steps)
    assert names == {
        "list_brains", "search", "list_files", "read", "related", "ask", "quiz", "flashcards",
        "digest", "brain_query", "brain_get", "brain_timeline", "brain_doctor", "list_sources",
        "list_versions",
    }  # fmt: skip
    assert refused.is_error and "read-only" in text_of(refused)
    assert loci.library.documents(loci.brain()) == []


LONG = "\n\n".join(f"## Part {i}\n\n" + text_files.prose(180, seed=i) for i in range(6))


def test_a_dry_run_of_create_file_predicts_its_chunks_and_writes_nothing(
    server: MCPServer, loci: Loci
) -> None:
    async def steps(c: Client) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        args = {"name": "long.md", "content": LONG, "tags": ["kelp"]}
        dry = ok(await c.call_tool("create_file", {**args, "dry_run": True}))
        found = ok(await c.call_tool("search", {"query": "Part 3", "mode": "text"}))
        assert found["hits"] == []
        assert loci.library.documents(loci.brain()) == [] and loci.blobs.disk_usage() == 0
        real = ok(await c.call_tool("create_file", args))
        return dry, found, real

    dry, _, real = session(server, steps)
    assert dry["dry_run"] is True and dry["document"] is None and dry["searchable"] is False
    flight = dry["preflight"]
    assert (flight["status"], flight["errors"], flight["existing_rows"]) == ("ok", [], 0)
    item = flight["item"]
    assert item["outcome"] == "add" and item["kind"] == "file" and item["parser"] == "markdown"
    assert item["name"] == "long.md" and item["size_bytes"] == len(LONG.encode())
    assert item["duplicate_of"] is None and item["over_limit"] is None and item["ocr"] is False
    assert item["chunks"] >= 3 and item["chunks_exact"] is True and item["seconds"] > 0
    # the prediction is what the real add then does
    assert real["dry_run"] is False and real["preflight"] is None
    stored = loci.library.document(loci.brain(), real["document"]["id"])
    assert stored.status == "ready" and stored.chunk_count == item["chunks"]


def test_a_dry_run_names_the_document_it_duplicates(server: MCPServer, loci: Loci) -> None:
    async def steps(c: Client) -> tuple[dict[str, Any], dict[str, Any]]:
        first = ok(await c.call_tool("create_file", {"name": "zebra.md", "content": PLAN}))
        again = {"name": "zebra-copy.md", "content": PLAN, "dry_run": True}
        return first, ok(await c.call_tool("create_file", again))

    first, dry = session(server, steps)
    doc_id = first["document"]["id"]
    flight = dry["preflight"]
    assert flight["status"] == "warning" and flight["existing_rows"] == 1
    assert flight["item"]["outcome"] == "duplicate" and flight["item"]["chunks"] == 0
    assert flight["item"]["duplicate_of"] == {
        "id": doc_id,
        "name": "zebra.md",
        "status": "ready",
        "reason": None,
    }
    assert f"#{doc_id} zebra.md" in flight["warnings"][0]
    assert dry["deduped"] is True and dry["document"] is None
    assert [d.id for d in loci.library.documents(loci.brain())] == [doc_id]


def test_a_dry_run_add_url_refuses_a_loopback_address_without_connecting(
    server: MCPServer, loci: Loci, page_server: Loopback
) -> None:
    url = page_server.url("/article")
    dry = session(server, lambda c: c.call_tool("add_url", {"url": url, "dry_run": True}))
    flight = ok(dry)["preflight"]
    assert flight["status"] == "error" and flight["item"]["outcome"] == "refuse"
    assert "loopback address" in flight["item"]["error"] and flight["errors"]
    assert page_server.connections == []
    assert loci.library.documents(loci.brain()) == []


def test_a_dry_run_add_url_fetches_an_allowed_page_and_predicts_the_add(
    tmp_path: Path, embedder: Embedder, page_server: Loopback
) -> None:
    loci = make_service(tmp_path / "home", embedder, fetch_allowed_networks=["127.0.0.1/32"])
    url = page_server.url("/article")
    try:

        async def steps(c: Client) -> tuple[dict[str, Any], list[int], dict[str, Any]]:
            dry = ok(await c.call_tool("add_url", {"url": url, "dry_run": True}))
            ids = [d.id for d in loci.library.documents(loci.brain())]
            return dry, ids, ok(await c.call_tool("add_url", {"url": url}))

        dry, ids_after_dry_run, real = session(local_server(loci), steps)
        stored = loci.library.document(loci.brain(), real["document"]["id"])
    finally:
        loci.store.close()
    item = dry["preflight"]["item"]
    assert dry["preflight"]["status"] == "ok" and ids_after_dry_run == []
    assert item["kind"] == "web" and item["parser"] == "html" and item["address"] == "127.0.0.1"
    assert item["media_type"] == "text/html" and item["chunks"] >= 1
    assert stored.status == "ready" and stored.chunk_count == item["chunks"]
