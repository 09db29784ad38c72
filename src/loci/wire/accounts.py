"""Users, sessions and API tokens, and a user's own chat model."""

from __future__ import annotations

import datetime as dt

from pydantic import BaseModel, Field

from loci.auth.accounts import IssuedToken
from loci.auth.records import ApiToken, TokenScope
from loci.wire.mirror import Mirror


def timestamp(value: float | None) -> str | None:
    if value is None:
        return None
    return dt.datetime.fromtimestamp(value, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


class UserOut(Mirror):
    id: int
    name: str
    is_admin: bool
    created_at: str


class TokenOut(BaseModel):
    id: int
    name: str
    prefix: str = Field(description="the first characters of the secret, to tell tokens apart")
    scope: TokenScope
    brain_ids: list[int] | None = Field(description="null: every brain the user can reach")
    expires_at: str | None
    created_at: str
    last_used_at: str | None
    revoked: bool
    oauth_client_id: str | None = Field(
        default=None, description="set on a token an application holds through OAuth"
    )
    resource: str | None = Field(
        default=None, description="an OAuth token works only at this URL and under it"
    )

    @classmethod
    def of(cls, token: ApiToken) -> TokenOut:
        return cls(
            id=token.id,
            name=token.name,
            prefix=token.prefix,
            scope=token.scope,
            brain_ids=list(token.brain_ids) if token.brain_ids is not None else None,
            expires_at=timestamp(token.expires_at),
            created_at=token.created_at,
            last_used_at=timestamp(token.last_used_at),
            revoked=token.revoked_at is not None,
            oauth_client_id=token.client_id,
            resource=token.resource,
        )


class IssuedTokenOut(TokenOut):
    secret: str = Field(description="shown once; store it now — only its hash is kept")

    @classmethod
    def issued(cls, issued: IssuedToken) -> IssuedTokenOut:
        return cls(**TokenOut.of(issued.token).model_dump(), secret=issued.secret)


class MeOut(BaseModel):
    user: UserOut
    token: TokenOut
    csrf_token: str | None = Field(
        default=None, description="send as X-CSRF-Token on writes made with the session cookie"
    )


class NewUserOut(BaseModel):
    user: UserOut
    token: IssuedTokenOut


class ModelOut(Mirror):
    base_url: str
    model: str
    fallback_models: list[str]
    has_api_key: bool
