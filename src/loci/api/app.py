"""`create_app()`: the API under /api/v1, the web app at /, and the in-process worker, with any
endpoint served beside them (`loci.server` mounts MCP at /mcp: the API does not know MCP).

The application receives the service objects already assembled (`loci.app.build_api` reads the
settings); nothing here opens a database or reads the environment.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from importlib.metadata import version
from importlib.resources import files
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlencode

from fastapi import Depends, FastAPI, Request, Response
from fastapi.responses import FileResponse, RedirectResponse
from fastapi.routing import APIRoute
from fastapi.staticfiles import StaticFiles
from starlette.routing import Route
from starlette.types import Receive, Scope, Send
from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

from loci.api import errors as error_handlers
from loci.api.deps import no_nul_in_parameters, single_valued_query
from loci.api.middleware import BodyLimit, OpenCors, SecurityHeaders
from loci.api.routes import (
    ask,
    brains,
    consent,
    graph,
    health,
    notes,
    oauth,
    people,
    search,
    session,
    share,
    sources,
    sso,
    tokens,
    users,
    versions,
)
from loci.api.routes import files as file_routes
from loci.api.routes import imports as import_routes
from loci.api.routes import integrations as integration_routes
from loci.api.schemas.common import errors
from loci.auth.accounts import Accounts
from loci.auth.oauth.consent import Consent
from loci.auth.oauth.server import OAuthServer
from loci.auth.people import People
from loci.auth.sso.flow import OidcFlow
from loci.auth.sso.people import SingleSignOn
from loci.auth.sso.provider import ProviderDirectory, SsoProvider
from loci.auth.user_models import UserModels
from loci.integrations import Integrations
from loci.integrations.webhooks import Webhooks
from loci.service import Loci
from loci.service.watching import FolderWatcher
from loci.web.worker import service_worker

log = logging.getLogger(__name__)
API_PREFIX = "/api/v1"
MULTIPART_ALLOWANCE = 1024 * 1024  # form boundaries and headers around an upload at the cap
JSON = "application/json"
WEB_ROOT = files("loci") / "web" / "static"


class Endpoint(Protocol):
    """An ASGI endpoint served beside the API (the MCP server, which `loci.server` mounts),
    and what it keeps running while the app runs."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None: ...

    def running(self) -> AbstractAsyncContextManager[None]: ...


def _operation_id(route: APIRoute) -> str:
    return route.name  # the handler's name: stable, readable ids for clients and Custom GPTs


def create_app(
    loci: Loci,
    accounts: Accounts,
    user_models: UserModels,
    *,
    run_worker: bool = True,
    integrations: Integrations | None = None,
    trusted_proxies: Sequence[str] = ("127.0.0.1",),
    sources_allowed_roots: Sequence[Path] = (),
    public_url: str | None = None,
    sso_providers: Sequence[SsoProvider] = (),
    password_sign_in: bool = True,
    watcher: FolderWatcher | None = None,
    endpoints: Mapping[str, Endpoint] | None = None,
) -> FastAPI:
    """`integrations` None: signed webhooks with the user models' key, Slack capture off.
    `trusted_proxies`: addresses and networks whose X-Forwarded-Proto/-For are believed.
    `sources_allowed_roots`: where an admin may register a folder over the API (none: nowhere).
    `public_url`: the address clients reach the server at, which OAuth names as issuer and
    resource (None: the address each request arrived at).
    `sso_providers`: OpenID Connect providers people may sign in with; `password_sign_in`
    False: only those (and API tokens).
    `watcher`: keeps the registered folders in step while the app runs (None: it does not).
    `endpoints`: served at the root by path, beside the API (`/mcp`: see `loci.server`)."""
    endpoints = dict(endpoints or {})
    oauth_server = OAuthServer(loci.store.oauth, loci.store.accounts, accounts.clock)

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        stop = threading.Event()
        thread = None
        if run_worker:
            worker = loci.worker()
            thread = threading.Thread(
                target=worker.run_forever, args=(stop,), name="loci-worker", daemon=True
            )
            thread.start()
            log.info("ingestion worker %s started", worker.name)
        if watcher is not None:
            watcher.start()
        async with AsyncExitStack() as running:
            for endpoint in endpoints.values():
                await running.enter_async_context(endpoint.running())
            yield
        stop.set()
        if watcher is not None:
            watcher.stop()
        if thread is not None:
            thread.join(timeout=60)

    app = FastAPI(
        title="Loci",
        summary="A self-hosted second brain: files, web pages and notes, searched with citations.",
        version=version("loci"),
        openapi_url=f"{API_PREFIX}/openapi.json",
        docs_url=None,  # Swagger UI loads from a CDN; the page must make no external requests
        redoc_url=None,
        lifespan=lifespan,
        generate_unique_id_function=_operation_id,
        dependencies=[Depends(no_nul_in_parameters), Depends(single_valued_query)],
    )
    app.state.loci = loci
    app.state.accounts = accounts
    # holds the failed sign-in counts of this process
    app.state.people = People(accounts, password_sign_in=password_sign_in)
    app.state.user_models = user_models
    app.state.sources_allowed_roots = tuple(sources_allowed_roots)
    app.state.public_url = public_url
    app.state.oauth_server = oauth_server
    app.state.consent = Consent(oauth_server, accounts)
    app.state.web_root = WEB_ROOT
    app.state.sso_flow = OidcFlow(ProviderDirectory(list(sso_providers)), accounts.clock)
    app.state.sso_people = SingleSignOn(accounts)
    app.state.sso_box = user_models.box  # seals a sign-in under way into its cookie
    app.state.integrations = integrations or Integrations(Webhooks(loci.store, user_models.box))
    error_handlers.install(app)
    # any route may meet a NUL (an unknown query parameter has one as well as a known one)
    app.include_router(health.router, prefix=API_PREFIX, responses=errors(400))
    app.include_router(session.router, prefix=API_PREFIX, responses=errors(400, 422))
    app.include_router(people.invite_links, prefix=API_PREFIX, responses=errors(400, 422))
    app.include_router(sso.options, prefix=API_PREFIX, responses=errors(400))
    for module in (
        tokens, users, people, brains, file_routes, import_routes, versions, share, notes, search,
        ask, graph, sources, consent,
    ):  # fmt: skip
        app.include_router(module.router, prefix=API_PREFIX, responses=errors(400, 401, 422))
    app.include_router(integration_routes.router, prefix=API_PREFIX, responses=errors(400))
    _document_errors_as_json(app)
    app.include_router(oauth.router)  # OAuth's own wire format, at the root beside /mcp
    app.include_router(sso.router)  # the browser's round trip through an identity provider
    for path, endpoint in endpoints.items():
        app.router.routes.append(Route(path, endpoint, methods=["GET", "POST", "DELETE"]))
    _mount_web(app)
    app.add_middleware(BodyLimit, max_bytes=loci.settings.max_file_bytes + MULTIPART_ALLOWANCE)
    app.add_middleware(OpenCors)
    app.add_middleware(SecurityHeaders)
    # Outermost, so every route (the session cookie's Secure flag, links the server builds)
    # sees the scheme and client a trusted proxy reports; `loci serve` turns uvicorn's own
    # reading of these headers off, so this is the one place they are believed.
    app.add_middleware(ProxyHeadersMiddleware, trusted_hosts=list(trusted_proxies))
    return app


def _document_errors_as_json(app: FastAPI) -> None:
    """An error is JSON on every route, but FastAPI documents a route's errors in the route's own
    media type — `text/event-stream` for ask. Put them back under `application/json`."""
    build = app.openapi

    def openapi() -> dict[str, Any]:
        if app.openapi_schema is None:
            for path in build()["paths"].values():
                for operation in path.values():
                    for status, response in operation.get("responses", {}).items():
                        content = response.get("content", {})
                        if status[0] in "45" and len(content) == 1 and JSON not in content:
                            response["content"] = {JSON: next(iter(content.values()))}
        return app.openapi_schema or build()

    app.openapi = openapi  # type: ignore[method-assign]


def _mount_web(app: FastAPI) -> None:
    root = str(WEB_ROOT)
    app.mount("/static", StaticFiles(directory=root), name="static")

    @app.get("/", include_in_schema=False)
    def index() -> FileResponse:
        return FileResponse(f"{root}/index.html", headers={"Cache-Control": "no-cache"})

    # The installed app's share target (see the manifest): a GET that only loads the app, which
    # reads the shared fields from the address and saves them with its session and CSRF token
    # (`POST /api/v1/brains/{brain}/share`) — after signing in, if need be.
    @app.get("/share", include_in_schema=False)
    def share_target() -> FileResponse:
        return FileResponse(f"{root}/index.html", headers={"Cache-Control": "no-store"})

    # Shared from another app without the service worker (it is not installed yet, or was
    # removed): the worker would have kept the files; here only the words can be passed on.
    @app.post("/share", include_in_schema=False)
    async def share_without_worker(request: Request) -> RedirectResponse:
        form = await request.form()
        fields = {k: v for k in ("title", "text", "url") if isinstance(v := form.get(k), str) and v}
        dropped = sum(1 for f in form.getlist("files") if not isinstance(f, str))
        if dropped:
            fields["dropped"] = str(dropped)
        return RedirectResponse(f"/share?{urlencode(fields)}", status_code=303)

    # The service worker, at the root so that it may serve the whole app (web/sw.py).
    worker = service_worker(Path(root))

    @app.get("/sw.js", include_in_schema=False)
    def sw() -> Response:
        return Response(
            worker,
            media_type="text/javascript",
            headers={"Cache-Control": "no-cache"},
        )

    # At the root, so the app it describes may take the whole origin as its scope.
    @app.get("/manifest.webmanifest", include_in_schema=False)
    def manifest() -> FileResponse:
        return FileResponse(
            f"{root}/manifest.webmanifest",
            media_type="application/manifest+json",
            headers={"Cache-Control": "no-cache"},
        )
