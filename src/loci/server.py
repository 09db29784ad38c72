"""The server `loci serve` runs: the HTTP API and the web app (`loci.api`) with the MCP server
(`loci.mcp`) mounted beside them at /mcp.

It is assembled here, above both surfaces, so that neither imports the other: the API serves
whatever endpoints it is given, and MCP calls down into the service as the API does.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loci.auth.accounts import Accounts
from loci.auth.user_models import UserModels
from loci.service import Loci

if TYPE_CHECKING:
    from fastapi import FastAPI

MCP_PATH = "/mcp"


def create_server(
    loci: Loci,
    accounts: Accounts,
    user_models: UserModels,
    *,
    public_url: str | None = None,
    **options: Any,
) -> FastAPI:
    """`loci.api.create_app` with MCP at /mcp, for agents, taking the API's tokens (and the ones
    OAuth issues). `options` are `create_app`'s."""
    from loci.api.app import create_app
    from loci.mcp.http import McpEndpoint

    mcp = McpEndpoint(loci, accounts, user_models, public_url)
    return create_app(
        loci, accounts, user_models, public_url=public_url, endpoints={MCP_PATH: mcp}, **options
    )
