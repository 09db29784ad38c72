"""What the `loci brain` command modules share: opening the graph, the actor they write as,
and waiting until a write is searchable."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from loci.cli.context import brain_to_fill, existing_brain, service
from loci.cli.waiting import index_now
from loci.models import Brain

if TYPE_CHECKING:
    from loci.graph.service import BrainGraph

ACTOR = "cli"
DirArg = Annotated[
    Path, typer.Argument(help="A directory of Markdown files.", file_okay=False, dir_okay=True)
]


def open_graph(brain: str | None, *, adding: bool = False) -> tuple[BrainGraph, Brain]:
    """The graph and the brain to work in: one that must exist, or with `adding` (commands
    that bring new pages) one created on first use."""
    loci = service()
    target = brain_to_fill(brain) if adding else existing_brain(brain)
    # The service's own graph: its searches expand links once, as the API's and MCP's do.
    return loci.graph, target


def settle(target: Brain, wait: bool | None) -> None:
    """Index what the write queued, so the next search finds it, as far as `wait` says
    (`loci.cli.waiting`; the worker would, later)."""
    if wait is False:
        return
    waiting = [
        d.id
        for d in service().library.documents(target, status="processing")
        if d.kind in ("page", "evidence")
    ]
    index_now(target, waiting, wait)
