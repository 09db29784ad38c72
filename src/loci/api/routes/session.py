"""Signing in to the web app: a token is exchanged for an HttpOnly session cookie."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from loci.api.deps import SESSION_COOKIE, AccountsDep, PrincipalDep
from loci.api.schemas import MeOut, SessionIn, TokenOut, UserOut, errors

router = APIRouter(tags=["session"])


@router.post("/session", response_model=MeOut, responses=errors(400, 401))
def sign_in(body: SessionIn, request: Request, response: Response, accounts: AccountsDep) -> MeOut:
    """Open a web session with an API token; the session lasts as long as the token (≤ 30 days)."""
    opened = accounts.open_session(body.token)
    response.set_cookie(
        SESSION_COOKIE,
        opened.secret,
        max_age=int(opened.expires_at - accounts.clock()),
        httponly=True,
        samesite="strict",
        secure=request.url.scheme == "https",
        path="/",
    )
    return MeOut(
        user=UserOut.of(opened.principal.user),
        token=TokenOut.of(opened.principal.token),
        csrf_token=opened.csrf,
    )


@router.delete("/session", status_code=204)
def sign_out(request: Request, response: Response, accounts: AccountsDep) -> Response:
    secret = request.cookies.get(SESSION_COOKIE)
    if secret:
        accounts.close_session(secret)
    response = Response(status_code=204)
    response.delete_cookie(SESSION_COOKIE, path="/", httponly=True, samesite="strict")
    return response


@router.get("/me", response_model=MeOut, responses=errors(401))
def who_am_i(request: Request, principal: PrincipalDep, accounts: AccountsDep) -> MeOut:
    csrf = None
    if principal.via_session:
        _, csrf = accounts.session(request.cookies[SESSION_COOKIE])
    return MeOut(
        user=UserOut.of(principal.user), token=TokenOut.of(principal.token), csrf_token=csrf
    )
