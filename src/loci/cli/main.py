"""The `loci` command: a thin layer over `loci.service`, one module per command group.

Each module is imported only when one of its commands runs (`loci.cli.lazy`): `loci --version`
and `loci --help` import none of them, `loci list` only its own.
"""

from __future__ import annotations

import logging
import os

import typer

from loci import __version__
from loci.cli.lazy import Entry, LazyGroup

# Every top-level command, in the order `loci --help` lists them: the modules whose `register`
# make it, and the first paragraph of its help (tests/test_cli_startup.py holds them to the
# commands' own help, so a changed docstring fails there until it is copied here).
COMMANDS: dict[str, Entry] = {
    "add": Entry(
        ("add",), "Add files, folders (recursively) and web pages to a brain, then index them."
    ),
    "note": Entry(("add",), "Save a Markdown note; it is searched together with files."),
    "list": Entry(
        ("documents",),
        "List the documents of a brain with status, chunk count and size, oldest first.",
    ),
    "ls": Entry(
        ("documents",),
        "List the documents of a brain with status, chunk count and size, oldest first.",
        hidden=True,
    ),
    "show": Entry(
        ("documents",),
        "Show one document: metadata, status and, on request, its text, chunks or versions.",
    ),
    "rm": Entry(
        ("documents",),
        "Delete documents with their chunks, and their blobs when nothing else uses them.",
    ),
    "reprocess": Entry(
        ("documents",), "Re-parse, re-chunk and re-embed documents from their stored originals."
    ),
    "reindex": Entry(
        ("documents",),
        "Rebuild a brain's chunks, vectors and text index from the stored originals.",
    ),
    "search": Entry(
        ("search",), "Find passages with hybrid search (BM25 + vectors), each with its citation."
    ),
    "find": Entry(
        ("search",),
        "Find passages with hybrid search (BM25 + vectors), each with its citation.",
        hidden=True,
    ),
    "related": Entry(("search",), "Other documents about what this one is about, closest first."),
    "ask": Entry(("ask",), "Answer from the brain with numbered citations."),
    "quiz": Entry(
        ("study",), "Multiple-choice questions from your documents, each with its source."
    ),
    "flashcards": Entry(("study",), "Flashcards (front, back, source) from your documents."),
    "status": Entry(
        ("status",), "Documents by status, the job queue, the embedder identity and disk use."
    ),
    "worker": Entry(
        ("status",),
        "Run a standalone ingestion worker (several may run at once); it also watches the\n"
        "registered folders (LOCI_SOURCES_WATCH), each by one worker or server at a time, and\n"
        "runs the followed feeds and pages as they fall due.",
    ),
    "eval": Entry(
        ("evaluate",),
        "Measure retrieval: your own questions against a brain (--questions), or a BEIR\n"
        "corpus indexed into a scratch brain (--beir: nDCG@10, recall, MRR and latency).",
    ),
    "serve": Entry(
        ("server",), "Serve the HTTP API (/api/v1), the web app (/) and an ingestion worker."
    ),
    "openapi": Entry(
        ("server",),
        "Print the API's OpenAPI 3.1 document (the committed openapi.json is this output).",
    ),
    # `loci save` and `loci brain ingest-item` are made by loci.cli.capture, into the
    # `loci brain` group that loci.cli.graph makes.
    "save": Entry(
        ("graph", "capture"),
        "Keep something in the brain now, as an inbox draft; curation finds its home.",
    ),
    "mcp": Entry(
        ("mcp",),
        "Serve the MCP tools (search, ask, read, save, …) to a local AI agent over stdio.",
    ),
    "recall": Entry(
        ("mcp",),
        "Print the brain's recent context as Markdown: timeline, pages changed last, latest\n"
        "notes, captures and files — what the MCP `session_start` prompt gives.",
    ),
    "migrate": Entry(
        ("migrate",),
        "Copy this data directory's SQLite database into PostgreSQL and verify the counts.",
    ),
    "digest": Entry(
        ("digest",),
        "What you added, wrote, captured and changed over a period, what failed, and the\n"
        "themes of the new material, with a short recap citing the documents.",
    ),
    "sync": Entry(
        ("sources",),
        "Bring every followed folder up to date once: added, updated, renamed, removed.",
    ),
    "import": Entry(
        ("imports",),
        "Import what another tool exported: each item a document, cited at its own place.\n"
        "Running it again adds nothing; an item edited since updates its document.",
    ),
    "conversations": Entry(("ask",), "Conversations kept by `loci ask`."),
    "users": Entry(("accounts",), "People who can sign in to `loci serve`."),
    "tokens": Entry(("accounts",), "API tokens: create, list, revoke."),
    "brains": Entry(
        ("brains",),
        "List, create, rename and delete brains, the separate collections Loci keeps"
        " (`loci brain` works on the graph pages inside one).",
    ),
    "brain": Entry(
        ("graph", "capture"),
        "The graph inside one brain: Markdown pages and evidence with typed links and a"
        " timeline (`loci brains` lists, creates, renames and deletes brains).",
    ),
    "slack": Entry(("slack",), "Slack capture: link Slack users to a Loci user and brain."),
    "webhooks": Entry(("webhooks",), "Signed webhooks: secrets a provider signs its pushes with."),
    "sources": Entry(
        ("sources",),
        "Folders a brain follows: `loci sync` keeps their documents in step with the files.",
    ),
    "versions": Entry(("versions",), "A document's earlier contents: list, diff, restore, save."),
    "models": Entry(("models",), "The local embedding models a brain can use."),
}


class LociGroup(LazyGroup):
    entries = COMMANDS


app = typer.Typer(
    name="loci",
    help="Loci — a self-hosted second brain. Add files, pages and notes; find the passage.",
    cls=LociGroup,
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


def run() -> None:
    logging.basicConfig(
        level=os.environ.get("LOCI_LOG_LEVEL", "WARNING").upper(),
        format="%(levelname)s %(name)s: %(message)s",
    )
    app()
