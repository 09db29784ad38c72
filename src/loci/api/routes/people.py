"""People, for admins: who has an account, invites, disabling and removing someone. Opening an
invite link (check it, choose a password) needs no sign-in: the link's secret is the proof."""

from __future__ import annotations

from fastapi import APIRouter, Request, Response

from loci.api.deps import AccountsDep, PeopleDep, PrincipalDep
from loci.api.routes.session import start_session
from loci.api.schemas.common import errors
from loci.api.schemas.people import InviteAcceptIn, InviteCheckIn, InviteIn, PersonPatch
from loci.auth.access import require_admin
from loci.wire.accounts import MeOut, timestamp
from loci.wire.people import InvitedOut, IssuedInviteOut, PersonOut

router = APIRouter(tags=["people"])  # needs a sign-in
invite_links = APIRouter(tags=["people"])  # the link's secret is the credential


@router.get("/people", response_model=list[PersonOut], responses=errors(403))
def list_people(principal: PrincipalDep, people: PeopleDep) -> list[PersonOut]:
    """Everyone with an account, with what only admins see: email, disabled, password set,
    open invite."""
    require_admin(principal, "manage people")
    return [PersonOut.of(p) for p in people.people()]


@router.post(
    "/invites", status_code=201, response_model=IssuedInviteOut, responses=errors(400, 403, 409)
)
def create_invite(body: InviteIn, principal: PrincipalDep, people: PeopleDep) -> IssuedInviteOut:
    """Invite a person (admins only): the answer carries the one-time link, once. Inviting
    someone invited before who has not signed up yet sends a new link (the old one stops)."""
    require_admin(principal, "manage people")
    issued = people.invite(body.name, email=body.email, role=body.role, days=body.expires_in_days)
    return IssuedInviteOut.issued(issued)


@router.patch("/users/{user}", response_model=PersonOut, responses=errors(400, 403, 404, 409))
def update_user(
    user: str, body: PersonPatch, principal: PrincipalDep, people: PeopleDep
) -> PersonOut:
    """Disable a person (their tokens and sessions stop at once), enable them again, or give or
    take admin rights. Refused for yourself, the last admin, or a brain's last owner."""
    require_admin(principal, "manage people")
    person = people.update(user, by=principal.user, disabled=body.disabled, is_admin=body.is_admin)
    return PersonOut.of(person)


@router.delete("/users/{user}", status_code=204, responses=errors(403, 404, 409))
def remove_user(user: str, principal: PrincipalDep, people: PeopleDep) -> Response:
    """Remove a person with their tokens, sessions, memberships and private conversations.
    Documents they added stay in their brains. Refused for a brain's last owner."""
    require_admin(principal, "manage people")
    people.remove(user, by=principal.user)
    return Response(status_code=204)


@invite_links.post("/invites/check", response_model=InvitedOut, responses=errors(400, 404))
def check_invite(body: InviteCheckIn, people: PeopleDep) -> InvitedOut:
    """Who an invite link is for, while it can still be used."""
    user, invite = people.invited(body.secret)
    return InvitedOut(name=user.name, expires_at=timestamp(invite.expires_at) or "")


@invite_links.post("/invites/accept", response_model=MeOut, responses=errors(400, 403, 404))
def accept_invite(
    body: InviteAcceptIn,
    request: Request,
    response: Response,
    accounts: AccountsDep,
    people: PeopleDep,
) -> MeOut:
    """Use an invite link: choose your password and be signed in. The link works once."""
    opened = people.accept(body.secret, body.password)
    return start_session(request, response, accounts, opened)
