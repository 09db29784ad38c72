"""`loci mcp`: serve the brain to a local AI agent (Claude Code, Claude Desktop, …) over stdio."""

from __future__ import annotations

import typer

from loci.cli.context import service
from loci.cli.errors import exits_cleanly


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    @exits_cleanly
    def mcp() -> None:
        """Serve the MCP tools (search, ask, read, save, …) over stdio for a local agent; it
        acts as you on this data directory. Configure it as the command `loci mcp`."""
        from loci.mcp.stdio import serve_stdio

        serve_stdio(service())
