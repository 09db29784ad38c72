"""ASGI wrappers: a cap on request bodies, security headers on every response, and CORS for
the endpoints a browser-based MCP client calls."""

from __future__ import annotations

import json
from typing import Any

from starlette.exceptions import HTTPException
from starlette.middleware.cors import CORSMiddleware
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from loci.ingest.size_cap import size_text

# The web app loads nothing from elsewhere, runs no inline script, and cannot be framed.
CONTENT_SECURITY_POLICY = (
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:;"
    " connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none';"
    " form-action 'self'; frame-ancestors 'none'"
)
SECURITY_HEADERS = [
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"x-frame-options", b"DENY"),
    (b"referrer-policy", b"no-referrer"),
]


class BodyLimit:
    """Refuse a request body over `max_bytes` — by its Content-Length before reading it, and
    while streaming when it has none — so an upload cannot fill the disk or memory first."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and declared.isdigit() and int(declared) > self.max_bytes:
            await _too_large(send, self.max_bytes)
            return
        received = 0

        async def limited() -> Message:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.max_bytes:
                    # Raised inside the app while it reads the body. FastAPI turns any other
                    # exception from a body read into a 400; an HTTPException passes through
                    # to the error handlers, which answer 413 `file_too_large`.
                    raise HTTPException(413, _message(self.max_bytes))
            return message

        await self.app(scope, limited, send)


def _message(max_bytes: int) -> str:
    return f"the request is over the {size_text(max_bytes)} upload limit"


async def _too_large(send: Send, max_bytes: int) -> None:
    body = json.dumps({"error": "file_too_large", "message": _message(max_bytes)}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 413,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class SecurityHeaders:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers: list[Any] = list(message.get("headers", []))
                present = {name.lower() for name, _ in headers}
                headers += [(k, v) for k, v in SECURITY_HEADERS if k not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, with_headers)


# What a browser-based MCP client (an inspector, a web agent) calls from its own origin: the
# metadata, the token, registration and revocation endpoints, and /mcp. Each takes a bearer
# token or client credentials in the request, never a cookie, so any origin may call them.
OPEN_PATHS = ("/.well-known/oauth-", "/oauth/token", "/oauth/register", "/oauth/revoke", "/mcp")


class OpenCors:
    """CORS for `OPEN_PATHS` only (any origin, no credentials); the web app and the API stay
    same-origin."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.cors = CORSMiddleware(
            app,
            allow_origins=["*"],
            allow_methods=["GET", "POST", "DELETE", "OPTIONS"],
            allow_headers=[
                "Authorization",
                "Content-Type",
                "Mcp-Protocol-Version",
                "Mcp-Session-Id",
            ],
            expose_headers=["WWW-Authenticate", "Mcp-Session-Id"],
        )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and str(scope["path"]).startswith(OPEN_PATHS):
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)
