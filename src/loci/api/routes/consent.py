"""The consent page's API: what an application asks, and the signed-in person's answer.

The page (`/oauth/authorize`, web/static/consent.html) passes the application's authorization
request through unchanged; the answer is the address to send the browser to — the
application's redirect URI with a code, or with an error.
"""

from __future__ import annotations

from typing import Annotated

import anyio
from fastapi import APIRouter, Query, Request

from loci.api.deps import AccountsDep, ConsentDep, PrincipalDep, ResourcesDep
from loci.api.schemas.common import errors
from loci.api.schemas.oauth import AuthorizationIn, ConsentIn
from loci.auth.access import require_session
from loci.auth.oauth.consent import Redirect
from loci.auth.oauth.resources import AUTHORIZE_PATH, Resources
from loci.auth.oauth.server import HttpCall
from loci.wire.oauth import BrainChoiceOut, ConsentOut, RedirectOut

router = APIRouter(tags=["oauth"])


def _call(request: Request, resources: Resources, asked: AuthorizationIn) -> HttpCall:
    # As the application sent it to the authorization endpoint (whose address must be https,
    # or on the loopback interface: Authlib checks).
    url = resources.base + AUTHORIZE_PATH
    return HttpCall("GET", url, request.headers, query=asked.pairs())


@router.get("/oauth/consent", response_model=ConsentOut, responses=errors(401, 403))
async def consent_request(
    request: Request,
    asked: Annotated[AuthorizationIn, Query()],
    principal: PrincipalDep,
    accounts: AccountsDep,
    consent: ConsentDep,
    resources: ResourcesDep,
) -> ConsentOut:
    """What an application asks of the signed-in person: its name, where the answer goes, what
    it wants (read, write), and the brains they could give it. An authorization request that
    must go back to the application with an error answers only `redirect`; one that cannot
    (an unknown client, a redirect URI it did not register) is a 400. Only a web session asks
    (403 for a bearer token): the page is where a person decides."""
    require_session(principal, "reading an application's request")
    call = _call(request, resources, asked)
    found = await anyio.to_thread.run_sync(consent.ask, call, resources)
    if isinstance(found, Redirect):
        return ConsentOut(redirect=found.url)
    brains = await anyio.to_thread.run_sync(accounts.readable_brains, principal)
    return ConsentOut(
        client_id=found.client_id,
        client_name=found.client_name,
        redirect_host=found.redirect_host,
        redirect_uri=found.redirect_uri,
        scopes=list(found.scopes),
        resource=found.resource,
        user=principal.user.name,
        brains=[BrainChoiceOut(name=b.name, role=role) for b, role in brains],
    )


@router.post("/oauth/consent", response_model=RedirectOut, responses=errors(401, 403, 404))
async def answer_consent(
    request: Request,
    body: ConsentIn,
    principal: PrincipalDep,
    consent: ConsentDep,
    resources: ResourcesDep,
) -> RedirectOut:
    """Approve (with read or write, and the brains chosen) or deny. Only a web session can
    answer; the token issued is one of your tokens, listed and revocable like the others."""
    call = _call(request, resources, body)

    def answer() -> Redirect:
        return consent.answer(
            call,
            resources,
            principal,
            approve=body.approve,
            scope=body.access,
            brains=body.brains,
        )

    return RedirectOut(redirect=(await anyio.to_thread.run_sync(answer)).url)
