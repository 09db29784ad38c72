"""The MCP server over streamable HTTP, mounted at `/mcp` by `loci serve`.

Every request must carry a Loci API token (`Authorization: Bearer loci_…`), checked here before
the protocol sees it: no token, or a revoked or expired one, or one an OAuth application holds
for another resource, is a 401 and nothing runs. The 401 names the endpoint's protected
resource metadata (RFC 9728), where an MCP client discovers how to get a token by OAuth. The
caller is that token's user narrowed by the token — its brains, its scope — exactly as on the
HTTP API. The transport is stateless (a JSON response per POST), so each request is
authenticated on its own and a revoked token stops working at once, mid-session too.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.transport_security import TransportSecuritySettings
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from loci.auth.access import Principal
from loci.auth.accounts import Accounts
from loci.auth.oauth.resources import Resources, challenge
from loci.auth.user_models import UserModels
from loci.errors import Unauthenticated
from loci.mcp.access import TokenCaller
from loci.mcp.common import settle_within
from loci.mcp.server import build_server
from loci.service import Loci

PRINCIPAL_KEY = "loci.principal"  # where the authenticated caller rides in the ASGI scope
SETTLE_S = 20.0  # how long an adding tool waits for indexing before answering "processing"


class McpEndpoint:
    """An ASGI app for `/mcp`; `running()` must wrap the host application's lifespan."""

    def __init__(
        self,
        loci: Loci,
        accounts: Accounts,
        user_models: UserModels,
        public_url: str | None = None,
    ) -> None:
        self.loci = loci
        self.public_url = public_url
        self.accounts = accounts
        self.user_models = user_models
        self.server = build_server(loci, self._caller, settle_within(SETTLE_S))
        self._running = False

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        # A session manager runs once; each run of the host app builds a fresh one.
        self.server.streamable_http_app(
            stateless_http=True,
            json_response=True,
            # Rebinding protection checks Host against a list; behind any proxy that list is
            # unknowable here, and a page in a browser cannot present the bearer token anyway.
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
        async with self.server.session_manager.run():
            self._running = True
            try:
                yield
            finally:
                self._running = False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self._running:
            await JSONResponse({"error": "unavailable"}, status_code=503)(scope, receive, send)
            return
        headers = Headers(scope=scope)
        resources = Resources(self.public_url or str(Request(scope).base_url))
        try:
            principal = await anyio.to_thread.run_sync(self._authenticate, headers, resources.mcp)
        except Unauthenticated as error:
            body = {"error": error.code, "message": error.message}
            metadata = resources.metadata_url(resources.mcp)
            sent = {"WWW-Authenticate": challenge(metadata, "authorization" in headers)}
            await JSONResponse(body, status_code=401, headers=sent)(scope, receive, send)
            return
        scope = {**scope, PRINCIPAL_KEY: principal}
        await self.server.session_manager.handle_request(scope, receive, send)

    def _authenticate(self, headers: Headers, resource: str) -> Principal:
        scheme, _, secret = headers.get("authorization", "").partition(" ")
        if scheme.lower() != "bearer" or not secret.strip():
            raise Unauthenticated("send a Loci API token as 'Authorization: Bearer loci_…'")
        return self.accounts.authenticate(secret.strip(), resource)

    def _caller(self, ctx: ServerRequestContext[Any, Any]) -> TokenCaller:
        request = ctx.request
        principal = request.scope.get(PRINCIPAL_KEY) if isinstance(request, Request) else None
        if not isinstance(principal, Principal):  # never reached through __call__
            raise Unauthenticated("this request carries no authenticated token")
        return TokenCaller(
            principal,
            self.accounts,
            self.loci.settings.default_brain,
            lambda: self.user_models.chat_for(principal.user),
        )
