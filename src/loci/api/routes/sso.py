"""Single sign-on in the browser: which ways to sign in there are, and the round trip through an
OpenID Connect provider (`/sso/{provider}/start` → the provider → `/sso/{provider}/callback`,
which opens the same session cookie a password sign-in does and returns to where the person
was). The two redirects are outside the API (a browser follows them; they are not for scripts)
and answer a failure with a short page saying why.
"""

from __future__ import annotations

import html

import anyio
from fastapi import APIRouter, Request
from fastapi.responses import HTMLResponse, RedirectResponse, Response
from pydantic import BaseModel, Field

from loci.api.deps import AccountsDep, ResourcesDep
from loci.api.errors import status_of
from loci.api.routes.session import start_session
from loci.auth.accounts import Accounts, OpenedSession
from loci.auth.sso.flow import OidcFlow, Pending
from loci.auth.sso.people import SingleSignOn
from loci.auth.sso.provider import SsoProvider
from loci.errors import LociError, NotFound, Unauthenticated

options = APIRouter(tags=["session"])
router = APIRouter(include_in_schema=False)
SSO_COOKIE = "loci_sso"
COOKIE_PATH = "/sso/"


class ProviderOut(BaseModel):
    name: str
    label: str


class SignInOptionsOut(BaseModel):
    password: bool
    providers: list[ProviderOut]
    first_start: str | None = Field(
        default=None,
        description="until the owner first signs in (no password set, the token `loci serve` "
        "printed never used): the owner's name, so the page can lead with that token",
    )


@options.get("/sign-in/options", response_model=SignInOptionsOut)
def sign_in_options(request: Request, accounts: AccountsDep) -> SignInOptionsOut:
    """How people sign in here: with a password (unless the administrator turned it off), and
    with each configured identity provider (`GET /sso/{name}/start` begins it); on a server
    nobody has signed in to yet, whose owner holds only the token its first start printed."""
    flow: OidcFlow = request.app.state.sso_flow
    return SignInOptionsOut(
        password=request.app.state.people.password_sign_in,
        providers=[
            ProviderOut(name=p.name, label=p.label) for p in flow.directory.providers.values()
        ],
        first_start=_first_start(accounts),
    )


def _first_start(accounts: Accounts) -> str | None:
    """The owner's name while the server is as its first start left it: one account, with no
    password, whose tokens were never used. Once anyone signs in, nothing more is said."""
    users = accounts.users()
    if len(users) != 1 or users[0].has_password or not users[0].is_admin:
        return None
    owner = users[0]
    if any(t.last_used_at is not None for t in accounts.tokens(owner)):
        return None
    return owner.name


def _provider(request: Request, name: str) -> SsoProvider:
    flow: OidcFlow = request.app.state.sso_flow
    provider = flow.directory.get(name)
    if provider is None:
        raise NotFound(f"no sign-in provider named {name!r}")
    return provider


def _local(path: str | None) -> str:
    """Where to go after signing in: a path of this site only (never another site's URL)."""
    if not path or not path.startswith("/") or path.startswith(("//", "/\\")):
        return "/"
    return path


def _failed(error: LociError) -> HTMLResponse:
    page = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<title>Sign-in failed — Loci</title><link rel="stylesheet" href="/static/app.css">'
        '</head><body><main class="signin"><div class="card signin-card">'
        '<h1 class="brand">Loci</h1><p>Signing in did not work:</p>'
        f'<p class="error" role="alert">{html.escape(error.message)}</p>'
        '<p><a href="/">Back to Loci</a></p></div></main></body></html>'
    )
    response = HTMLResponse(page, status_code=status_of(error))
    response.delete_cookie(SSO_COOKIE, path=COOKIE_PATH)
    return response


@router.get("/sso/{provider}/start")
async def sso_start(
    provider: str, request: Request, resources: ResourcesDep, next: str | None = None
) -> Response:
    try:
        chosen = _provider(request, provider)
        flow: OidcFlow = request.app.state.sso_flow
        callback = f"{resources.base}/sso/{chosen.name}/callback"
        started = await anyio.to_thread.run_sync(flow.start, chosen, callback, _local(next))
    except LociError as error:
        return _failed(error)
    response = RedirectResponse(started.url, status_code=302)
    # Lax, not Strict: the provider sends the browser back here from its own site.
    response.set_cookie(
        SSO_COOKIE,
        started.pending.seal(request.app.state.sso_box),
        max_age=600,
        httponly=True,
        samesite="lax",
        secure=request.url.scheme == "https",
        path=COOKIE_PATH,
    )
    return response


@router.get("/sso/{provider}/callback")
async def sso_callback(
    provider: str, request: Request, accounts: AccountsDep, resources: ResourcesDep
) -> Response:
    query = request.query_params
    try:
        chosen = _provider(request, provider)
        if "error" in query:
            detail = query.get("error_description") or query["error"]
            raise Unauthenticated(f"{chosen.label} did not sign you in: {detail}")
        sealed = request.cookies.get(SSO_COOKIE)
        if not sealed:
            raise Unauthenticated("this sign-in cannot be matched to your browser; start again")
        flow: OidcFlow = request.app.state.sso_flow
        people: SingleSignOn = request.app.state.sso_people
        pending = Pending.open(request.app.state.sso_box, sealed, accounts.clock())
        callback = f"{resources.base}/sso/{chosen.name}/callback"

        def finish() -> OpenedSession:
            claims = flow.finish(
                chosen,
                pending,
                state=query.get("state", ""),
                code=query.get("code", ""),
                redirect_uri=callback,
            )
            return people.sign_in(chosen, claims)

        opened = await anyio.to_thread.run_sync(finish)
    except LociError as error:
        return _failed(error)
    response = RedirectResponse(pending.next, status_code=303)
    start_session(request, response, accounts, opened)
    response.delete_cookie(SSO_COOKIE, path=COOKIE_PATH)
    return response
