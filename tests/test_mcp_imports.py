"""The MCP tool `import_export`, through the official `mcp` client: a bookmarks export on this
computer imported by `loci mcp` (stdio's server, in memory here), its links fetched from a
loopback site; a dry run first; the tool absent over HTTP, where a path would name the
server's disk; Loci's own data directory never read as an export."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import anyio
import pytest
from mcp import Client
from mcp.server.mcpserver import MCPServer

from loci.auth.accounts import Accounts
from loci.embed.base import Embedder
from loci.mcp.access import TokenCaller
from loci.mcp.common import settle_here
from loci.mcp.server import build_server
from loci.mcp.stdio import local_server
from loci.service import Loci
from tests.support.bookmark_files import chrome_bookmarks, site, write
from tests.support.loopback import Loopback
from tests.support.mcp_results import ok, text_of
from tests.support.services import make_service, texts

T = TypeVar("T")


def session(server: MCPServer, steps: Callable[[Client], Awaitable[T]]) -> T:
    async def run() -> T:
        async with Client(server) as client:
            return await steps(client)

    return anyio.run(run)


@pytest.fixture
def pages() -> Iterator[Loopback]:
    with site() as served:
        yield served


@pytest.fixture
def fetching(tmp_path: Path, embedder: Embedder) -> Iterator[Loci]:
    loci = make_service(tmp_path / "home", embedder, fetch_allowed_networks=["127.0.0.1/32"])
    yield loci
    loci.store.close()


def test_an_agent_imports_bookmarks_after_a_dry_run(
    fetching: Loci, pages: Loopback, tmp_path: Path
) -> None:
    loci = fetching
    export = str(write(tmp_path, chrome_bookmarks(pages.url())))

    async def steps(c: Client) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        arguments = {"kind": "bookmarks", "path": export, "brain": "reading"}
        dry = ok(await c.call_tool("import_export", {**arguments, "dry_run": True}))
        assert pages.connections == []  # the dry run fetched nothing
        done = ok(await c.call_tool("import_export", {**arguments, "tags": ["moved-in"]}))
        again = ok(await c.call_tool("import_export", arguments))
        return dry, done, again

    loci.brain("reading")
    dry, done, again = session(local_server(loci), steps)
    assert dry["dry_run"] is True and (dry["added"], dry["skipped"]) == (6, 2)
    assert (done["added"], done["failed"], done["skipped"]) == (3, 3, 2)
    failed = {i["name"]: i["reason"] for i in done["items"] if i["action"] == "fail"}
    assert failed["A page that is gone"].endswith("answered HTTP 404 Not Found")
    assert (again["added"], again["unchanged"]) == (0, 3)
    brain = loci.brain("reading")
    documents = loci.library.documents(brain)
    assert {d.status for d in documents} == {"ready"}  # indexed before the tool returned
    assert all("moved-in" in d.tags for d in documents)
    assert any("eighty percent hydration" in t for t in texts(loci, brain, "ciabatta hydration"))


def test_a_path_that_is_not_an_export_here_is_refused(fetching: Loci, tmp_path: Path) -> None:
    loci = fetching
    data_file = tmp_path / "home" / "secret.key"
    data_file.write_text("not for agents")

    async def steps(c: Client) -> list[str]:
        said = []
        for path in ("bookmarks.html", str(tmp_path / "missing.html"), str(data_file)):
            result = await c.call_tool("import_export", {"kind": "bookmarks", "path": path})
            assert result.is_error
            said.append(text_of(result))
        return said

    relative, missing, fenced = session(local_server(loci), steps)
    assert "absolute path" in relative
    assert "not a file" in missing
    assert "Loci's own data directory" in fenced
    assert loci.library.documents(loci.brain()) == []


def test_over_http_there_is_no_tool_that_reads_a_path(loci: Loci) -> None:
    accounts = Accounts(loci.store)
    assert accounts.bootstrap_owner("owner") is not None
    owner = accounts.issue_token(accounts.user("owner"), name="agent")
    caller = TokenCaller(accounts.authenticate(owner.secret), accounts, "default", lambda: None)
    server = build_server(loci, lambda _: caller, settle_here)

    async def steps(c: Client) -> tuple[set[str], str]:
        names = {t.name for t in (await c.list_tools()).tools}
        result = await c.call_tool("import_export", {"kind": "bookmarks", "path": "/etc/hosts"})
        assert result.is_error
        return names, text_of(result)

    names, refused = session(server, steps)
    assert "import_export" not in names and "add_url" in names
    assert "import_export" in refused  # unknown to this server
