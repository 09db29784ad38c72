"""An MCP client connects by OAuth, end to end, with the `mcp` SDK's own OAuth client: it meets
the 401, discovers the protected resource and authorization server metadata, registers itself,
sends the person to the consent page (answered here as the page's script does) with PKCE, calls
tools with the token it got, refreshes it when it expires, and loses access once it is revoked.
"""

from __future__ import annotations

import time
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from mcp import Client
from mcp.client.auth import OAuthClientProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from tests.support.live_server import LiveServer
from tests.support.mcp_results import ok
from tests.support.oauth_flow import REDIRECT, Browser


class Memory:
    """The SDK's token storage, in memory."""

    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None
        self.issued: list[str] = []  # every access token it was given, in order

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens
        self.issued.append(tokens.access_token)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


@pytest.mark.attack
def test_an_mcp_client_connects_by_oauth_refreshes_and_is_revoked(server: LiveServer) -> None:
    browser = Browser(server, "owner")
    storage = Memory()
    answers: list[dict[str, str]] = []
    consent_pages: list[dict[str, Any]] = []

    async def open_browser(url: str) -> None:  # the SDK's "open this URL for the person"
        asked = await anyio.to_thread.run_sync(browser.consent, url)
        consent_pages.append(asked.json())
        answers.append(await anyio.to_thread.run_sync(lambda: browser.approve(url)))

    async def callback() -> AuthorizationCodeResult:  # the redirect reaching the app
        answer = answers[-1]
        return AuthorizationCodeResult(code=answer["code"], state=answer["state"])

    provider = OAuthClientProvider(
        server_url=server.url + "/mcp",
        client_metadata=OAuthClientMetadata(
            client_name="SDK agent",
            redirect_uris=[AnyUrl(REDIRECT)],
            grant_types=["authorization_code", "refresh_token"],
        ),
        storage=storage,
        redirect_handler=open_browser,
        callback_handler=callback,
    )

    async def run() -> tuple[dict[str, Any], dict[str, Any]]:
        http = httpx2.AsyncClient(auth=provider, timeout=120)
        transport = streamable_http_client(server.url + "/mcp", http_client=http)
        async with http, Client(transport) as client:
            added = ok(await client.call_tool("create_file", {
                "name": "kiln.md", "content": "# Kiln\n\nThe kiln fires at 1240 degrees.",
            }))  # fmt: skip
            provider.context.token_expiry_time = time.time() - 1  # the hour has passed
            found = ok(await client.call_tool("search", {"query": "kiln temperature"}))
        return added, found

    added, found = anyio.run(run)
    assert consent_pages[0]["client_name"] == "SDK agent"
    assert consent_pages[0]["resource"] == server.url + "/mcp"
    assert found["hits"][0]["document_id"] == added["document"]["id"]
    assert len(answers) == 1  # one consent; the second token came from the refresh
    assert len(storage.issued) == 2 and storage.issued[0] != storage.issued[1]
    assert storage.client is not None and storage.tokens is not None

    headers = {"Authorization": f"Bearer {storage.issued[0]}", "Accept": "application/json"}
    ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}
    assert httpx.post(server.url + "/mcp", json=ping, headers=headers).status_code == 401

    # The application revokes its grant (RFC 7009), authenticating as it registered.
    client = storage.client
    auth = (client.client_id, client.client_secret) if client.client_secret else None
    data = {"token": storage.tokens.refresh_token or ""}
    if auth is None:
        data["client_id"] = client.client_id
    revoked = httpx.post(server.url + "/oauth/revoke", data=data, auth=auth)
    assert revoked.status_code == 200, revoked.text
    headers["Authorization"] = f"Bearer {storage.tokens.access_token}"
    refused = httpx.post(server.url + "/mcp", json=ping, headers=headers)
    assert refused.status_code == 401
    assert "resource_metadata=" in refused.headers["WWW-Authenticate"]
    browser.close()
