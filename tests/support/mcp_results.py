"""Reading what an MCP tool call returned, for the MCP tests over any transport."""

from __future__ import annotations

from typing import Any

from mcp.types import CallToolResult, TextContent


def text_of(result: CallToolResult) -> str:
    """The result's text parts, joined: what an agent reads (an error's message too)."""
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def ok(result: CallToolResult) -> dict[str, Any]:
    """The structured result of a call that must have succeeded (else its error fails the test)."""
    assert not result.is_error, text_of(result)
    assert isinstance(result.structured_content, dict)  # a JSON object, as the MCP spec says
    return result.structured_content
