"""The `loci` command: a thin layer over `loci.service`, one module per command group."""

from __future__ import annotations

import logging
import os

import typer

from loci import __version__
from loci.cli import (
    accounts,
    add,
    ask,
    brains,
    capture,
    digest,
    documents,
    evaluate,
    graph,
    imports,
    mcp,
    migrate,
    models,
    search,
    server,
    slack,
    sources,
    status,
    study,
    versions,
    webhooks,
)

app = typer.Typer(
    name="loci",
    help="Loci — a self-hosted second brain. Add files, pages and notes; find the passage.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"loci {__version__}")
        raise typer.Exit()


@app.callback()
def main(
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Show the version and exit."
    ),
) -> None:
    """Loci keeps what you give it and answers with citations to the exact passage."""


for module in (
    add, documents, search, ask, study, status, evaluate, server, accounts, brains, graph, capture,
    mcp, migrate, slack, webhooks, digest, sources, versions, imports, models,
):  # fmt: skip
    module.register(app)


def run() -> None:
    logging.basicConfig(
        level=os.environ.get("LOCI_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
    app()
