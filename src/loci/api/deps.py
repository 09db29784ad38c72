"""What route handlers ask for: the service objects, the caller, and a brain checked for them.

Authentication is a bearer token (scripts, agents, Custom GPTs) or the web app's session cookie;
a write through the cookie must also carry the session's CSRF token in `X-CSRF-Token`, which a
page on another site cannot read. A brain named in a path is resolved here, once, with the
access the route needs, so no handler can forget the check.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path as PathLib
from typing import Annotated

from fastapi import Depends, Path, Request
from fastapi.exceptions import RequestValidationError
from fastapi.security import APIKeyCookie, HTTPAuthorizationCredentials, HTTPBearer

from loci.api.schemas.common import MAX_ID
from loci.auth.access import Need, Principal
from loci.auth.accounts import Accounts
from loci.auth.oauth.consent import Consent
from loci.auth.oauth.resources import Resources
from loci.auth.people import People
from loci.auth.secrets import same
from loci.auth.user_models import UserModels
from loci.errors import Forbidden, Unauthenticated
from loci.integrations import Integrations
from loci.models import Brain
from loci.nul import refuse_nul
from loci.service import Loci

SESSION_COOKIE = "loci_session"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})

bearer = HTTPBearer(auto_error=False, description="A Loci API token: `loci_…`")
session_cookie = APIKeyCookie(
    name=SESSION_COOKIE, auto_error=False, description="The web app's session"
)


def get_loci(request: Request) -> Loci:
    loci: Loci = request.app.state.loci
    return loci


def get_accounts(request: Request) -> Accounts:
    accounts: Accounts = request.app.state.accounts
    return accounts


def get_people(request: Request) -> People:
    people: People = request.app.state.people
    return people


def get_user_models(request: Request) -> UserModels:
    models: UserModels = request.app.state.user_models
    return models


def resources_of(request: Request) -> Resources:
    """This server's OAuth resources as the caller reaches it: at LOCI_PUBLIC_URL when set
    (behind a proxy, the address clients know), else at the address of the request."""
    public_url: str | None = request.app.state.public_url
    return Resources(public_url or str(request.base_url))


def get_consent(request: Request) -> Consent:
    consent: Consent = request.app.state.consent
    return consent


def get_integrations(request: Request) -> Integrations:
    integrations: Integrations = request.app.state.integrations
    return integrations


def get_source_roots(request: Request) -> tuple[PathLib, ...]:
    """The folders the API may register as sources (`LOCI_SOURCES_ALLOWED_ROOTS`)."""
    roots: tuple[PathLib, ...] = request.app.state.sources_allowed_roots
    return roots


async def raw_body(request: Request) -> bytes:
    """The body as received (Starlette keeps it, so a JSON body parameter reads the same
    bytes): what a request signature covers."""
    return await request.body()


LociDep = Annotated[Loci, Depends(get_loci)]
IntegrationsDep = Annotated[Integrations, Depends(get_integrations)]
RawBody = Annotated[bytes, Depends(raw_body)]
AccountsDep = Annotated[Accounts, Depends(get_accounts)]
PeopleDep = Annotated[People, Depends(get_people)]
UserModelsDep = Annotated[UserModels, Depends(get_user_models)]
SourceRootsDep = Annotated[tuple[PathLib, ...], Depends(get_source_roots)]
ResourcesDep = Annotated[Resources, Depends(resources_of)]
ConsentDep = Annotated[Consent, Depends(get_consent)]


def single_valued_query(request: Request) -> None:
    """No parameter of this API takes several values, so `?tag=a&tag=b` is refused rather than
    read as its last value: what a proxy or a log saw must be what the handler reads."""
    seen: set[str] = set()
    for key, _ in request.query_params.multi_items():
        if key in seen:
            problem = {"type": "repeated", "loc": ("query", key), "msg": "given more than once"}
            raise RequestValidationError([problem])
        seen.add(key)


def no_nul_in_parameters(request: Request) -> None:
    """A NUL in a path or query parameter is refused before any handler or dependency reads
    it (`loci.nul`); bodies are checked by their schemas (`RequestIn`)."""
    for name, value in request.path_params.items():
        refuse_nul(name, value)
    for key, value in request.query_params.multi_items():
        refuse_nul("a query parameter's name", key)
        refuse_nul(key, value)


def current_principal(
    request: Request,
    accounts: AccountsDep,
    credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)],
    session: Annotated[str | None, Depends(session_cookie)],
) -> Principal:
    if credentials is not None:
        return accounts.authenticate(credentials.credentials, resources_of(request).api)
    if session:
        principal, csrf = accounts.session(session)
        if request.method not in SAFE_METHODS:
            sent = request.headers.get(CSRF_HEADER)
            if not sent or not same(sent, csrf):
                raise Forbidden(f"a write with the session cookie needs the {CSRF_HEADER} header")
        return principal
    raise Unauthenticated("sign in, or send a token as 'Authorization: Bearer loci_…'")


PrincipalDep = Annotated[Principal, Depends(current_principal)]


def brain_with(need: Need) -> Callable[[str, Principal, Accounts], Brain]:
    def resolve(brain: str, principal: PrincipalDep, accounts: AccountsDep) -> Brain:
        return accounts.brain(principal, brain, need)[0]

    return resolve


# An id in a path: bounded, so a huge number is a 422 rather than an overflow in the database.
RowId = Annotated[int, Path(ge=1, le=MAX_ID, description="an id the API returned")]

ReadableBrain = Annotated[Brain, Depends(brain_with("read"))]
# A brain the caller reads, through a write token: for changing their own conversations in it.
OwnBrain = Annotated[Brain, Depends(brain_with("own"))]
WritableBrain = Annotated[Brain, Depends(brain_with("write"))]
ManagedBrain = Annotated[Brain, Depends(brain_with("manage"))]
