"""Signing in to the web app: a token, or a name and password, is exchanged for an HttpOnly
session cookie."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from loci.api.deps import (
    SESSION_COOKIE,
    AccountsDep,
    PeopleDep,
    PrincipalDep,
    UserModelsDep,
    resources_of,
)
from loci.api.schemas.accounts import ModelIn
from loci.api.schemas.common import errors
from loci.api.schemas.people import PasswordIn, PasswordSessionIn, TokenSessionIn
from loci.auth.access import require_account
from loci.auth.accounts import Accounts, OpenedSession
from loci.errors import NotFound
from loci.wire.accounts import MeOut, ModelOut, TokenOut, UserOut

router = APIRouter(tags=["session"])


@router.post("/session", response_model=MeOut, responses=errors(400, 401, 403, 429))
def sign_in(
    body: TokenSessionIn | PasswordSessionIn,
    request: Request,
    response: Response,
    accounts: AccountsDep,
    people: PeopleDep,
) -> MeOut:
    """Open a web session with an API token (the session lasts as long as the token, ≤ 30
    days) or with a name and password (30 days). A wrong password and an unknown name get the
    same 401; after 10 failures in 15 minutes a name is refused with 429 for a while."""
    if isinstance(body, TokenSessionIn):
        opened = accounts.open_session(body.token, resources_of(request).api)
    else:
        opened = people.sign_in(body.name, body.password)
    return start_session(request, response, accounts, opened)


def start_session(
    request: Request, response: Response, accounts: Accounts, opened: OpenedSession
) -> MeOut:
    """Set the session cookie on `response`; the body tells the page who signed in."""
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


@router.put("/me/password", status_code=204, responses=errors(400, 401, 403, 429))
def change_password(body: PasswordIn, principal: PrincipalDep, people: PeopleDep) -> Response:
    """Set or change your password (send the current one if you have one). Other browsers
    signed in with your old password are signed out; your tokens keep working."""
    people.change_password(principal, body.current_password, body.new_password)
    return Response(status_code=204)


@router.get("/me", response_model=MeOut, responses=errors(401))
def who_am_i(request: Request, principal: PrincipalDep, accounts: AccountsDep) -> MeOut:
    csrf = None
    if principal.via_session:
        _, csrf = accounts.session(request.cookies[SESSION_COOKIE])
    return MeOut(
        user=UserOut.of(principal.user), token=TokenOut.of(principal.token), csrf_token=csrf
    )


@router.get("/me/model", response_model=ModelOut, responses=errors(401, 404))
def get_my_model(principal: PrincipalDep, models: UserModelsDep) -> ModelOut:
    """Your own chat model for answers, if you set one (the key itself is never shown)."""
    require_account(principal, "read the account's model settings", write=False)
    view = models.view(principal.user)
    if view is None:
        raise NotFound("you have not set a model of your own; the server's is used")
    return ModelOut.of(view)


@router.put("/me/model", response_model=ModelOut, responses=errors(400, 401, 403))
def set_my_model(body: ModelIn, principal: PrincipalDep, models: UserModelsDep) -> ModelOut:
    """Use your own OpenAI-compatible endpoint and key for your answers ("bring your own
    key"). The key is stored encrypted and never returned. A `base_url` on a loopback, private
    or link-local address is refused (400) unless the administrator allowed its network.
    A stored key is kept (`keep_api_key`) only for the same `base_url`: it never follows a new
    address. Account settings take a credential of the whole account (403 for a token limited
    to some brains or held by an application)."""
    require_account(principal, "change the account's model")
    view = models.save(
        principal.user,
        base_url=body.base_url,
        model=body.model,
        api_key=body.api_key,
        fallback_models=body.fallback_models,
        keep_key=body.keep_api_key,
    )
    return ModelOut.of(view)


@router.delete("/me/model", status_code=204, responses=errors(401, 403, 404))
def forget_my_model(principal: PrincipalDep, models: UserModelsDep) -> Response:
    """Forget your model and its key; the server's model answers again."""
    require_account(principal, "change the account's model")
    if not models.forget(principal.user):
        raise NotFound("you have not set a model of your own")
    return Response(status_code=204)
