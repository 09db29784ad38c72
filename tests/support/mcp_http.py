"""MCP over streamable HTTP against a live server: a client session with a bearer token, and
the raw initialize request."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TypeVar

import anyio
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from tests.support.live_server import LiveServer

T = TypeVar("T")

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}

ACCEPT = {"Accept": "application/json, text/event-stream"}


def over_http(
    server: LiveServer, token: str, steps: Callable[[Client], Awaitable[T]], mode: str = "auto"
) -> T:
    """`mode` "auto" speaks the current protocol; "legacy" the initialize handshake of 2025
    clients (Claude Desktop, Claude Code today)."""

    async def run() -> T:
        headers = {"Authorization": f"Bearer {token}"}
        http = httpx2.AsyncClient(headers=headers, timeout=120)
        transport = streamable_http_client(server.url + "/mcp", http_client=http)
        async with http, Client(transport, mode=mode) as c:
            return await steps(c)

    return anyio.run(run)
