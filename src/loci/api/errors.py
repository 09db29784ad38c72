"""Every error as `{"error": code, "message": …}` with the status that fits it.

`LociError` subclasses carry their own code; the status comes from the nearest class in
`STATUS`. Framework errors (validation, unknown routes) are reshaped to the same body, and an
unexpected exception is logged and answered with a 500 that reveals nothing of it.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.routing import Match, Route

from loci.api.deps import resources_of
from loci.api.schemas.common import NUL_ERROR
from loci.auth.oauth.resources import challenge
from loci.errors import (
    BlockedAddress,
    ChallengePage,
    Conflict,
    EmbeddingError,
    FetchError,
    FileTooLarge,
    Forbidden,
    InvalidInput,
    LociError,
    NotFound,
    ParseError,
    RateLimited,
    Unauthenticated,
)
from loci.nul import PROBLEM

log = logging.getLogger(__name__)

STATUS: list[tuple[type[LociError], int]] = [  # most specific first
    (FileTooLarge, 413),
    (NotFound, 404),
    (Conflict, 409),
    (Unauthenticated, 401),
    (Forbidden, 403),
    (RateLimited, 429),
    (InvalidInput, 400),
    (BlockedAddress, 400),
    (ChallengePage, 422),
    (FetchError, 502),
    (ParseError, 422),
    (EmbeddingError, 503),
]
HTTP_CODES = {
    400: "bad_request",
    401: "unauthenticated",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "file_too_large",
    415: "unsupported_media_type",
    429: "rate_limited",
}


def status_of(error: LociError) -> int:
    return next((status for cls, status in STATUS if isinstance(error, cls)), 500)


def error_response(
    status: int, code: str, message: str, headers: Mapping[str, str] | None = None
) -> JSONResponse:
    headers = dict(headers or {})
    if status == 401:
        headers.setdefault("WWW-Authenticate", "Bearer")
    return JSONResponse({"error": code, "message": message}, status_code=status, headers=headers)


def _allowed_methods(request: Request) -> str:
    """Every method the path answers to. Starlette's own `Allow` names only the first route
    that matched the path, but a path here is served by one route per method."""
    methods: set[str] = set()
    for route in request.app.router.routes:
        match, _ = route.matches(request.scope)
        if match != Match.NONE and isinstance(route, Route) and route.methods:
            methods |= route.methods
    return ", ".join(sorted(methods))


def _location(item: Mapping[str, Any]) -> str:
    """The field's dotted path, without "body" or the name of the union member tried (a class
    name, `TokenSessionIn`), which the client never wrote."""
    parts = item.get("loc", ())
    return ".".join(str(p) for p in parts if p != "body" and not str(p)[:1].isupper())


def _challenge(request: Request) -> dict[str, str]:
    """A 401 names the API's protected resource metadata, where an OAuth client learns how to
    get a token (RFC 9728)."""
    resources = resources_of(request)
    sent = "authorization" in request.headers
    return {"WWW-Authenticate": challenge(resources.metadata_url(resources.base), sent)}


def install(app: FastAPI) -> None:
    @app.exception_handler(LociError)
    async def loci_error(request: Request, error: LociError) -> JSONResponse:
        headers = {}
        if isinstance(error, RateLimited):
            headers["Retry-After"] = str(max(1, round(error.retry_after_s)))
        status = status_of(error)
        if status == 401:
            headers.update(_challenge(request))
        return error_response(status, error.code, error.message, headers)

    @app.exception_handler(RequestValidationError)
    async def invalid(request: Request, error: RequestValidationError) -> JSONResponse:
        # A NUL is refused as any other bad request (400), as the service refuses it
        # (`loci.nul`): it is the same rule whichever layer meets it first.
        nul = [item for item in error.errors() if item.get("type") == NUL_ERROR]
        if nul:
            fields = [
                (_location(item) + item.get("ctx", {}).get("where", "")).lstrip(".")
                for item in nul[:5]
            ]
            message = f"{', '.join(fields)} {PROBLEM}"
            return error_response(400, InvalidInput.code, message)
        problems = []
        for item in error.errors()[:5]:
            where = _location(item)
            problems.append(f"{where}: {item.get('msg', 'invalid')}" if where else item["msg"])
        return error_response(422, "invalid_input", "; ".join(problems) or "invalid request")

    @app.exception_handler(HTTPException)
    async def http_error(request: Request, error: HTTPException) -> JSONResponse:
        code = HTTP_CODES.get(error.status_code, "error")
        headers = dict(error.headers or {})
        if error.status_code == 405:
            headers["Allow"] = _allowed_methods(request)
        if error.status_code == 401:
            headers.update(_challenge(request))
        return error_response(error.status_code, code, str(error.detail), headers)

    @app.exception_handler(Exception)
    async def unexpected(request: Request, error: Exception) -> JSONResponse:
        log.exception("unexpected error on %s %s", request.method, request.url.path)
        return error_response(500, "internal", "the server hit an unexpected error")
