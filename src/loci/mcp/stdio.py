"""`loci mcp`: the server over stdio, as the local owner of the local data directory.

stdout is the protocol's wire, so nothing else may write there: logging goes to stderr. Added
documents are indexed in this process before a tool returns (as the CLI does), so an agent's
next search finds them even when no `loci serve` or `loci worker` is running.
"""

from __future__ import annotations

import anyio
from mcp.server.mcpserver import MCPServer

from loci.mcp.access import LocalCaller
from loci.mcp.common import settle_here
from loci.mcp.server import build_server
from loci.service import Loci


def local_server(loci: Loci, default_brain: str | None = None) -> MCPServer:
    caller = LocalCaller(loci, default_brain)
    return build_server(loci, lambda _: caller, settle_here, local_files=True)


def serve_stdio(loci: Loci, default_brain: str | None = None) -> None:
    anyio.run(local_server(loci, default_brain).run_stdio_async)
