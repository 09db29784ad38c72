"""Password sign-in, invites, and people as an admin sees them."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from loci.api.schemas.common import BRAIN_NAME, NOT_BLANK, RequestIn
from loci.auth.passwords import MAX_LENGTH, MIN_LENGTH
from loci.auth.records import INVITE_DAYS, MAX_INVITE_DAYS

EMAIL = r"^[^@\s]+@[^@\s]+\.[^@\s]+$"


class TokenSessionIn(RequestIn):
    token: str = Field(min_length=1, max_length=200, description="an API token, loci_…")


class PasswordSessionIn(RequestIn):
    name: str = Field(min_length=1, max_length=64)
    password: str = Field(min_length=1, max_length=MAX_LENGTH)


class PasswordIn(RequestIn):
    current_password: str | None = Field(
        default=None, max_length=MAX_LENGTH, description="needed if you have a password already"
    )
    new_password: str = Field(
        min_length=MIN_LENGTH, max_length=MAX_LENGTH, pattern=NOT_BLANK, description="the new one"
    )


class InviteIn(RequestIn):
    name: str = Field(min_length=1, max_length=64, pattern=BRAIN_NAME)
    email: str | None = Field(default=None, max_length=254, pattern=EMAIL)
    role: Literal["member", "admin"] = "member"
    expires_in_days: float = Field(
        default=INVITE_DAYS, ge=1 / 1440, le=MAX_INVITE_DAYS, strict=True
    )


class InviteCheckIn(RequestIn):
    secret: str = Field(min_length=1, max_length=200)


class InviteAcceptIn(RequestIn):
    secret: str = Field(min_length=1, max_length=200)
    password: str = Field(
        min_length=MIN_LENGTH,
        max_length=MAX_LENGTH,
        pattern=NOT_BLANK,
        description="the password to sign in with from now on",
    )


class PersonPatch(RequestIn):
    disabled: bool | None = Field(
        default=None, strict=True, description="true revokes their tokens and sessions at once"
    )
    is_admin: bool | None = Field(default=None, strict=True)
