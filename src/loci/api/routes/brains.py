"""Brains the caller can reach, their members, status, jobs and digest."""

from __future__ import annotations

from fastapi import APIRouter, Query, Response

from loci.api.deps import (
    AccountsDep,
    LociDep,
    ManagedBrain,
    PrincipalDep,
    ReadableBrain,
    UserModelsDep,
)
from loci.api.schemas.brains import BrainIn, BrainPatch, MemberIn
from loci.api.schemas.common import errors
from loci.api.user_chat import own_model
from loci.wire.brains import BrainOut, JobOut, MemberOut, StatusOut
from loci.wire.digest import DigestOut

router = APIRouter(tags=["brains"])


@router.get("/brains", response_model=list[BrainOut])
def list_brains(principal: PrincipalDep, accounts: AccountsDep) -> list[BrainOut]:
    """Every brain the caller may read, with their role in it."""
    return [BrainOut.of(b, role) for b, role in accounts.readable_brains(principal)]


@router.post(
    "/brains",
    status_code=201,
    response_model=BrainOut,
    responses=errors(400, 403, 409),
)
def create_brain(body: BrainIn, principal: PrincipalDep, accounts: AccountsDep) -> BrainOut:
    """A new brain, owned by the caller; `restricted` (members only) unless said otherwise."""
    return BrainOut.of(accounts.create_brain(principal, body.name, body.visibility), "owner")


@router.get("/brains/{brain}", response_model=BrainOut, responses=errors(404))
def get_brain(brain: str, principal: PrincipalDep, accounts: AccountsDep) -> BrainOut:
    found, role = accounts.brain(principal, brain)
    return BrainOut.of(found, role)


@router.patch(
    "/brains/{brain}",
    response_model=BrainOut,
    responses=errors(400, 404, 403, 409),
)
def update_brain(
    brain: str, body: BrainPatch, principal: PrincipalDep, accounts: AccountsDep, loci: LociDep
) -> BrainOut:
    """Rename a brain, change who can read it, or the language its text search stems words
    in (owners only)."""
    if body.language is not None:  # first: a language the backend lacks changes nothing
        loci.set_language(accounts.update_brain(principal, brain), body.language)
    updated = accounts.update_brain(
        principal, brain, new_name=body.name, visibility=body.visibility
    )
    return BrainOut.of(updated, "owner")


@router.delete("/brains/{brain}", status_code=204, responses=errors(404, 403))
def delete_brain(brain: ManagedBrain, loci: LociDep) -> Response:
    """Delete a brain with every document, chunk and unshared original in it (owners only)."""
    loci.delete_brain(brain)
    return Response(status_code=204)


@router.get("/brains/{brain}/members", response_model=list[MemberOut], responses=errors(404))
def list_members(brain: str, principal: PrincipalDep, accounts: AccountsDep) -> list[MemberOut]:
    return [MemberOut.of(m) for m in accounts.members(principal, brain)]


@router.put(
    "/brains/{brain}/members/{user}",
    response_model=MemberOut,
    responses=errors(400, 404, 403, 409),
)
def set_member(
    brain: str, user: str, body: MemberIn, principal: PrincipalDep, accounts: AccountsDep
) -> MemberOut:
    """Add a person to a brain or change their role (owners only)."""
    return MemberOut.of(accounts.set_member(principal, brain, user, body.role))


@router.delete(
    "/brains/{brain}/members/{user}",
    status_code=204,
    responses=errors(404, 403, 409),
)
def remove_member(
    brain: str, user: str, principal: PrincipalDep, accounts: AccountsDep
) -> Response:
    accounts.remove_member(principal, brain, user)
    return Response(status_code=204)


@router.get("/brains/{brain}/status", response_model=StatusOut, responses=errors(404))
def brain_status(brain: ReadableBrain, loci: LociDep) -> StatusOut:
    """Documents by status and kind, chunks, the job queue and the embedder identity."""
    return StatusOut.of(loci.status(brain))


@router.get("/brains/{brain}/jobs", response_model=list[JobOut], responses=errors(404))
def list_jobs(
    brain: ReadableBrain, loci: LociDep, limit: int = Query(default=50, ge=1, le=500)
) -> list[JobOut]:
    """The brain's most recent ingestion jobs, newest first."""
    return [JobOut.of(j) for j in loci.library.jobs(brain, limit)]


@router.get("/brains/{brain}/digest", response_model=DigestOut, responses=errors(400, 404))
def brain_digest(
    brain: ReadableBrain,
    principal: PrincipalDep,
    loci: LociDep,
    models: UserModelsDep,
    since: str = Query(
        default="7d", max_length=20, description="24h, 7d, 2w … back from now, or a date"
    ),
) -> DigestOut:
    """What came into the brain over a period: documents added (by kind), notes written,
    captures waiting in the inbox, graph pages created or changed with their new timeline
    entries, failed documents with reasons, themes, and a short recap citing the documents
    (the caller's model, the server's, or the documents' own sentences). Reads only; save it
    as a page with `loci digest --save`."""
    with own_model(models, principal) as chat:
        made = loci.reviews.digest(brain, since, chat)
    return DigestOut.model_validate(made.as_dict())
