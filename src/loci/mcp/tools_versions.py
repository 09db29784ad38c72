"""`list_versions`: a document's earlier contents, for a model asked what a file said before
or when it changed. Reading only: restoring one is a person's act (the CLI, the HTTP API).
The answer is the HTTP API's `VersionListOut` (`loci versions list --json` prints it too)."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer

from loci.mcp.common import BrainArg, DocumentId, Toolkit, reading, tool_errors
from loci.wire.versions import VersionListOut


class VersionTools:
    """The versions tool, as a method over the server's toolkit; `register` offers it."""

    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit
        self.loci = kit.loci

    @tool_errors
    def list_versions(
        self, ctx: Context, document_id: DocumentId, brain: BrainArg = None
    ) -> VersionListOut:
        """List a document's versions: its current content and the earlier ones kept when
        the file was edited, the note rewritten or the page fetched again — each with its
        number, when it was saved and replaced, its size and SHA-256, newest first. Use it to
        tell when a document changed; `read` gives the current text."""
        target = self.kit.caller(ctx).brain(brain, "read")
        return VersionListOut.of(self.loci.versions.list(target, document_id), target)


def register(server: MCPServer, kit: Toolkit) -> None:
    tools = VersionTools(kit)
    server.add_tool(tools.list_versions, annotations=reading("List a document's versions"))
