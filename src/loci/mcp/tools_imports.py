"""`import_export`: an export of another tool on this computer imported into a brain, as
`loci import KIND PATH` does, for an agent helping someone move their notes or bookmarks in.

A path names a file where the server runs, so the tool is offered only by `loci mcp` (stdio),
which runs as the local owner and could read the file anyway; over HTTP it does not exist (a
token holder must never make the server read its own disk: they upload the export to
`POST /brains/{brain}/imports` instead). Even locally, Loci's own data directory is never
read as an export. The reply is the HTTP API's `ImportReportOut`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from mcp.server.mcpserver import Context, MCPServer
from pydantic import Field

from loci.errors import InvalidInput, NotFound
from loci.imports.readers import KINDS
from loci.mcp.common import BrainArg, Toolkit, tool_errors, writing
from loci.wire.imports import ImportReportOut

KindArg = Annotated[
    str,
    Field(
        min_length=1,
        max_length=40,
        description="What the export is: " + "; ".join(f"{k.name} ({k.what})" for k in KINDS),
    ),
]
PathArg = Annotated[
    str,
    Field(
        min_length=1,
        max_length=4096,
        description="The export's absolute path on this computer (a file or a zip).",
    ),
]
DryRunArg = Annotated[
    bool,
    Field(description="true: write and fetch nothing, only report what the import would do."),
]
Tags = Annotated[
    list[Annotated[str, Field(min_length=1, max_length=64)]],
    Field(max_length=20, description="Tags for every imported document (optional)."),
]


class ImportTools:
    """The import tool, as a method over the server's toolkit; `register` offers it."""

    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit
        self.loci = kit.loci

    @tool_errors
    def import_export(
        self,
        kind: KindArg,
        path: PathArg,
        ctx: Context,
        dry_run: DryRunArg = False,
        brain: BrainArg = None,
        tags: Tags = [],  # noqa: B006 - pydantic copies defaults
    ) -> ImportReportOut:
        """Import what another tool exported (browser bookmarks, Kindle clippings, …) into the
        brain: each item becomes a document known by its place in that tool, so importing the
        same export again adds nothing and an item edited since updates its document. Returns
        what happened to each item (added, updated, unchanged, failed or skipped, with the
        reason). Run it with `dry_run` first to show the user what it would add. Bookmarks
        are fetched from the web now, so a large export takes a while."""
        target = self.kit.caller(ctx).brain(brain, "write")
        file = Path(path).expanduser()
        if not file.is_absolute():
            raise InvalidInput(f"give the export's absolute path, not {path!r}")
        if not file.is_file():
            raise NotFound(f"{path} is not a file on this computer")
        if self.loci.settings.fence.around(file.resolve().parent) is not None:
            raise InvalidInput(f"{path} is in Loci's own data directory, which is never imported")
        report = self.loci.importing.run(target, kind, file, dry_run=dry_run, tags=tags)
        written = [
            o.document_id
            for o in report.outcomes
            if o.document_id is not None and o.action in ("add", "update")
        ]
        if written and not report.dry_run:
            self.kit.settle(self.loci, target, written)  # searchable when the agent next searches
        return ImportReportOut.of(report)


def register(server: MCPServer, kit: Toolkit) -> None:
    tools = ImportTools(kit)
    server.add_tool(
        tools.import_export,
        annotations=writing("Import another tool's export", idempotent=True, open_world=True),
    )
