"""The workspace's people: anyone signed in sees the names (to share a brain); admins add."""

from __future__ import annotations

from fastapi import APIRouter

from loci.api.deps import AccountsDep, PrincipalDep
from loci.api.schemas.accounts import UserIn
from loci.api.schemas.common import errors
from loci.auth.access import require_admin
from loci.wire.accounts import IssuedTokenOut, NewUserOut, UserOut

router = APIRouter(tags=["users"])


@router.get("/users", response_model=list[UserOut])
def list_users(principal: PrincipalDep, accounts: AccountsDep) -> list[UserOut]:
    return [UserOut.of(u) for u in accounts.users()]


@router.post(
    "/users",
    status_code=201,
    response_model=NewUserOut,
    responses=errors(400, 403, 409),
)
def create_user(body: UserIn, principal: PrincipalDep, accounts: AccountsDep) -> NewUserOut:
    """Add a person (admins only); the response carries their first sign-in token, once."""
    require_admin(principal, "manage people")
    user, issued = accounts.add_user(body.name, is_admin=body.is_admin)
    return NewUserOut(user=UserOut.of(user), token=IssuedTokenOut.issued(issued))
