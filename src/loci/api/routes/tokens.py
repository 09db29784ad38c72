"""The caller's API tokens: list, create (the secret is shown once), revoke."""

from __future__ import annotations

from fastapi import APIRouter, Response

from loci.api.deps import AccountsDep, PrincipalDep, RowId
from loci.api.schemas.accounts import TokenIn
from loci.api.schemas.common import errors
from loci.wire.accounts import IssuedTokenOut, TokenOut

router = APIRouter(tags=["tokens"])


@router.get("/tokens", response_model=list[TokenOut])
def list_tokens(principal: PrincipalDep, accounts: AccountsDep) -> list[TokenOut]:
    """Your tokens; a token limited to some brains, or an application's, sees only itself."""
    return [TokenOut.of(t) for t in accounts.tokens_seen_by(principal)]


@router.post(
    "/tokens", status_code=201, response_model=IssuedTokenOut, responses=errors(400, 403, 404)
)
def create_token(body: TokenIn, principal: PrincipalDep, accounts: AccountsDep) -> IssuedTokenOut:
    """A new token for the caller: it takes a credential of the whole account (a token limited
    to some brains, or an application's, cannot make one that outlives it)."""
    issued = accounts.issue_token_as(
        principal,
        name=body.name,
        scope=body.scope,
        brains=body.brains,
        expires_in_days=body.expires_in_days,
    )
    return IssuedTokenOut.issued(issued)


@router.delete("/tokens/{token_id}", status_code=204, responses=errors(404, 403))
def revoke_token(token_id: RowId, principal: PrincipalDep, accounts: AccountsDep) -> Response:
    """Revoke one of the caller's tokens; it fails from the next request on. A token limited
    to some brains, or an application's, may revoke only itself."""
    accounts.revoke_as(principal, token_id)
    return Response(status_code=204)
