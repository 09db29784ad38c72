"""Documents as MCP resources: `loci://{brain}/docs/{id}` is a document's text as search sees
it, read with the same access checks as the tools."""

from __future__ import annotations

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from loci.errors import LociError
from loci.mcp.common import Toolkit

DOCUMENT_URI = "loci://{brain}/docs/{doc_id}"


class Resources:
    """The resources, as methods over the server's toolkit; `register` offers them."""

    def __init__(self, kit: Toolkit) -> None:
        self.kit = kit
        self.loci = kit.loci

    def document(self, brain: str, doc_id: str, ctx: Context) -> str:
        if not doc_id.isdigit() or not 1 <= int(doc_id) <= 2**53 - 1:
            raise ResourceError(f"a document id is a positive number, got {doc_id!r}")
        try:
            target = self.kit.caller(ctx).brain(brain, "read")
            found = self.loci.library.document(target, int(doc_id))
            text = self.loci.library.document_text(target, found.id)
        except LociError as error:
            raise ResourceError(f"{error.code}: {error.message}") from error
        if text is None:
            raise ResourceError(f"document {doc_id} has no text yet ({found.status})")
        return text


def register(server: MCPServer, kit: Toolkit) -> None:
    resources = Resources(kit)
    server.resource(
        DOCUMENT_URI,
        name="document",
        title="A document's text",
        description="The extracted text of a document in a brain (ids come from search and "
        "list_files; each result's `uri` is this address).",
        mime_type="text/plain",
    )(resources.document)
