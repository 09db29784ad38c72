"""Loci as an MCP server: tools, document resources and a session-start prompt
for AI agents, over stdio (`loci mcp`) and streamable HTTP (`/mcp` on `loci serve`).

Thin over `loci.service.Loci`, as the CLI and the HTTP API are.
"""

from loci.mcp.server import build_server

__all__ = ["build_server"]
