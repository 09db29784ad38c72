"""`list_versions`: a document's earlier contents, for a model asked what a file said before
or when it changed. Reading only: restoring one is a person's act (the CLI, the HTTP API).
The answer is the HTTP API's `VersionListOut` (`loci versions list --json` prints it too)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

from loci.mcp.common import BrainArg, DocumentId, Toolkit, reading, tool_errors
from loci.wire.versions import VersionListOut


def register(server: MCPServer, kit: Toolkit) -> None:
    loci = kit.loci

    @tool_errors
    def list_versions(
        ctx: Context, document_id: DocumentId, brain: BrainArg = None
    ) -> VersionListOut:
        """List a document's versions: its current content and the earlier ones kept when
        the file was edited, the note rewritten or the page fetched again — each with its
        number, when it was saved and replaced, its size and SHA-256, newest first. Use it to
        tell when a document changed; `read` gives the current text."""
        target = kit.caller(ctx).brain(brain, "read")
        return VersionListOut.of(loci.versions.list(target, document_id), target)

    server.add_tool(list_versions, annotations=reading("List a document's versions"))
