"""OAuth 2.1 for MCP clients and API scripts: discovery documents, the authorization endpoint
(the consent page), and the token, registration and revocation endpoints.

These speak OAuth's own wire format (form bodies in, `{"error": …, "error_description": …}`
out), not this API's, so they live at the root of the server beside /mcp and are left out of
the API's schema. The protocol is Authlib's (`loci.auth.oauth`); this module only carries
requests to it and its replies back.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import FileResponse, JSONResponse, RedirectResponse, Response

from loci.api.deps import ConsentDep, ResourcesDep, resources_of
from loci.auth.oauth.consent import Redirect
from loci.auth.oauth.resources import (
    AUTHORIZATION_SERVER_PATH,
    AUTHORIZE_PATH,
    PROTECTED_RESOURCE_PATH,
    REGISTER_PATH,
    REVOKE_PATH,
    TOKEN_PATH,
)
from loci.auth.oauth.server import HttpCall, OAuthServer, Reply
from loci.errors import InvalidInput
from loci.nul import refuse_nul

router = APIRouter(include_in_schema=False)
MAX_FORM_BYTES = 64 * 1024  # an OAuth request is a few hundred bytes
# A registration at every cap `loci.auth.oauth.clients` sets is about 5 KB; more is not kept.
MAX_REGISTRATION_BYTES = 16 * 1024


def _server(request: Request) -> OAuthServer:
    server: OAuthServer = request.app.state.oauth_server
    return server


def _reply(reply: Reply) -> Response:
    headers = {k: v for k, v in reply.headers if k.lower() != "content-type"}
    if reply.location is not None:
        return RedirectResponse(reply.location, status_code=302)
    headers["Cache-Control"] = "no-store"  # tokens and secrets must not be kept by a cache
    return JSONResponse(reply.body, status_code=reply.status, headers=headers)


async def _call(request: Request, *, as_json: bool = False) -> HttpCall:
    """The request as the OAuth server takes it; InvalidInput for one it must not see (too
    large, or holding a NUL, which no stored value may)."""
    body = await request.body()
    if len(body) > (MAX_REGISTRATION_BYTES if as_json else MAX_FORM_BYTES):
        raise InvalidInput("an OAuth request is a few hundred bytes; this one is too large")
    url = resources_of(request).base + request.url.path
    if as_json:
        try:
            data: Any = json.loads(body or b"{}")
        except (ValueError, RecursionError):
            data = None
        refuse_nul("the registration", data)
        # the client's address, after ProxyHeadersMiddleware read a trusted proxy's report
        address = request.client.host if request.client else None
        return HttpCall(request.method, url, request.headers, json=data, address=address)
    form = await request.form()
    pairs = [(k, v) for k, v in form.multi_items() if isinstance(v, str)]
    refuse_nul("the request", pairs)
    return HttpCall(request.method, url, request.headers, form=pairs)


async def _serve(
    request: Request, answer: Callable[[HttpCall], Reply], *, as_json: bool = False
) -> Response:
    try:
        call = await _call(request, as_json=as_json)
    except InvalidInput as error:  # answered in OAuth's format, as everything here
        return _reply(Reply(400, {"error": "invalid_request", "error_description": error.message}))
    return _reply(await anyio.to_thread.run_sync(answer, call))


# discovery ----------------------------------------------------------------------------------
@router.get(PROTECTED_RESOURCE_PATH)
def protected_resource(resources: ResourcesDep) -> JSONResponse:
    """The whole server (the API and /mcp) as one resource."""
    return JSONResponse(resources.protected_resource(resources.base))


@router.get(PROTECTED_RESOURCE_PATH + "/mcp")
def protected_mcp(resources: ResourcesDep) -> JSONResponse:
    return JSONResponse(resources.protected_resource(resources.mcp))


@router.get(PROTECTED_RESOURCE_PATH + "/api/v1")
def protected_api(resources: ResourcesDep) -> JSONResponse:
    return JSONResponse(resources.protected_resource(resources.api))


@router.get(AUTHORIZATION_SERVER_PATH)
def authorization_server(resources: ResourcesDep) -> JSONResponse:
    return JSONResponse(resources.authorization_server())


# the authorization endpoint: the consent page ----------------------------------------------
@router.get(AUTHORIZE_PATH)
async def authorize(request: Request, consent: ConsentDep, resources: ResourcesDep) -> Response:
    """A request that must go back with an error goes back at once; any other shows the
    consent page, which signs the person in if need be, asks the API what the application
    wants (a request that cannot be used is explained there) and sends the answer."""
    url = resources.base + AUTHORIZE_PATH
    call = HttpCall("GET", url, request.headers, query=list(request.query_params.multi_items()))
    try:
        found = await anyio.to_thread.run_sync(consent.ask, call, resources)
    except InvalidInput:
        found = None  # the page shows why, from the same check through the API
    if isinstance(found, Redirect):
        return RedirectResponse(found.url, status_code=302)
    page = request.app.state.web_root / "consent.html"
    return FileResponse(str(page), headers={"Cache-Control": "no-store"})


# the token, registration and revocation endpoints -------------------------------------------
@router.post(TOKEN_PATH)
async def token(request: Request) -> Response:
    return await _serve(request, _server(request).token_response)


@router.post(REGISTER_PATH)
async def register(request: Request) -> Response:
    return await _serve(request, _server(request).registration_response, as_json=True)


@router.post(REVOKE_PATH)
async def revoke(request: Request) -> Response:
    return await _serve(request, _server(request).revocation_response)
