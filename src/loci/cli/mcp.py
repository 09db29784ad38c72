"""`loci mcp`: serve the brain to a local AI agent (Claude Code, Claude Desktop, …) over stdio;
`loci recall`: the same session-start context as a command, for an agent's SessionStart hook."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from loci.cli.context import BrainOption, JsonOption, existing_brain, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json
from loci.names import check_name
from loci.recall import LIMIT, gather, to_markdown


def register(app: typer.Typer) -> None:
    app.command("mcp")(exits_cleanly(mcp))
    app.command("recall")(exits_cleanly(recall))


def mcp(brain: BrainOption = None) -> None:
    """Serve the MCP tools (search, ask, read, save, …) to a local AI agent over stdio.

    The agent acts as you on this data directory. Configure it as the command `loci mcp`;
    `--brain NAME` is the brain its tools use when they name none."""
    from loci.mcp.stdio import serve_stdio

    if brain is not None:
        check_name("brain", brain)
    serve_stdio(service(), brain)


def recall(
    brain: BrainOption = None,
    limit: Annotated[
        int,
        typer.Option(
            "--limit",
            min=1,
            max=100,
            help="Items per section (the timeline shows twice as many).",
        ),
    ] = LIMIT,
    topic: Annotated[
        str | None,
        typer.Option("--topic", help="Also the passages on this (loads the search model)."),
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Print the brain's recent context as Markdown: timeline, pages changed last, latest
    notes, captures and files — what the MCP `session_start` prompt gives.

    Made for an agent's session-start hook, whose output becomes the session's context."""
    recalled = gather(service(), existing_brain(brain), topic, limit)
    if json_:
        emit_json(recalled)
    else:
        sys.stdout.write(to_markdown(recalled))
