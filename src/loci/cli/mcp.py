"""`loci mcp`: serve the brain to a local AI agent (Claude Code, Claude Desktop, …) over stdio."""

from __future__ import annotations

import typer

from loci.cli.context import BrainOption, service
from loci.cli.errors import exits_cleanly
from loci.names import check_name


def register(app: typer.Typer) -> None:
    @app.command("mcp")
    @exits_cleanly
    def mcp(brain: BrainOption = None) -> None:
        """Serve the MCP tools (search, ask, read, save, …) to a local AI agent over stdio.

        The agent acts as you on this data directory. Configure it as the command `loci mcp`;
        `--brain NAME` is the brain its tools use when they name none."""
        from loci.mcp.stdio import serve_stdio

        if brain is not None:
            check_name("brain", brain)
        serve_stdio(service(), brain)
