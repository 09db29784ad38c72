"""Password sign-in, invites, and people as an admin sees them."""

from __future__ import annotations

from pydantic import BaseModel, Field

from loci.auth.people import IssuedInvite, Person
from loci.wire.accounts import UserOut, timestamp


class InvitedOut(BaseModel):
    name: str
    expires_at: str


class PersonOut(BaseModel):
    id: int
    name: str
    email: str | None
    is_admin: bool
    created_at: str
    disabled: bool
    has_password: bool
    invite_expires_at: str | None = Field(description="an open invite's expiry, if one is open")

    @classmethod
    def of(cls, person: Person) -> PersonOut:
        user = person.user
        return cls(
            id=user.id,
            name=user.name,
            email=user.email,
            is_admin=user.is_admin,
            created_at=user.created_at,
            disabled=user.disabled,
            has_password=user.has_password,
            invite_expires_at=timestamp(person.invite.expires_at) if person.invite else None,
        )


class IssuedInviteOut(BaseModel):
    user: UserOut
    secret: str = Field(description="shown once; only its hash is kept")
    path: str = Field(description="the sign-up link on this server: /#invite/<secret>")
    expires_at: str

    @classmethod
    def issued(cls, issued: IssuedInvite) -> IssuedInviteOut:
        return cls(
            user=UserOut.of(issued.user),
            secret=issued.secret,
            path=issued.path,
            expires_at=timestamp(issued.invite.expires_at) or "",
        )
