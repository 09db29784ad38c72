"""Accounts as stored: people, their memberships, API tokens, sessions, invites, their own chat
model, and what OAuth keeps (applications, codes, refresh tokens). Secrets never: only hashes
and prefixes, or a sealed key."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loci.models import Role

TokenScope = Literal["read", "write"]

# How long an invite link works, by default and at most (days).
INVITE_DAYS = 7.0
MAX_INVITE_DAYS = 30.0


# "api": made by a person (listed, revocable); "session": made by a password sign-in for the
# web session it opens, hidden from the token list and gone when the session ends.
TokenKind = Literal["api", "session"]


@dataclass(frozen=True)
class User:
    id: int
    name: str
    is_admin: bool
    created_at: str
    email: str | None = None
    disabled_at: float | None = None  # set: signs in no more; every token was revoked
    has_password: bool = False  # the hash itself never leaves the store's password methods

    @property
    def disabled(self) -> bool:
        return self.disabled_at is not None


@dataclass(frozen=True)
class Member:
    user: User
    role: Role


@dataclass(frozen=True)
class ApiToken:
    """A token's row: never its secret, only the secret's hash (kept by the store) and prefix."""

    id: int
    user_id: int
    name: str
    prefix: str
    scope: TokenScope
    brain_ids: tuple[int, ...] | None  # None: every brain the user can reach
    expires_at: float | None
    created_at: str
    last_used_at: float | None
    revoked_at: float | None
    kind: TokenKind = "api"
    # Set on a token an OAuth client holds (`loci.auth.oauth`): the client it was issued to,
    # and the resource (a URL of this server) it may be used at, with everything under it.
    client_id: str | None = None
    resource: str | None = None


@dataclass(frozen=True)
class OAuthClient:
    """An application registered for OAuth (RFC 7591): only its secret's hash is kept, and a
    public client (`auth_method` "none") has none."""

    client_id: str
    name: str
    redirect_uris: tuple[str, ...]
    grant_types: tuple[str, ...]
    auth_method: str  # "none", "client_secret_basic" or "client_secret_post"
    secret_hash: str | None
    created_at: str


@dataclass(frozen=True)
class RegistrationLoad:
    """What a new OAuth registration is weighed against (`loci.auth.oauth.registration_limits`):
    when its address registered in the last hour, oldest first, and how many registered clients
    never got a token, with when the oldest of them registered (times as `created_at`)."""

    recent: tuple[str, ...]
    unused: int
    oldest_unused: str | None


@dataclass(frozen=True)
class OAuthCode:
    """An authorization code as a person approved it: only its hash is kept. `token_id` is
    the token it was exchanged for, so a second use can revoke that token (RFC 6749 4.1.2)."""

    code_hash: str
    client_id: str
    user_id: int
    redirect_uri: str
    scope: TokenScope
    brain_ids: tuple[int, ...] | None
    resource: str
    code_challenge: str
    expires_at: float
    used_at: float | None = None
    token_id: int | None = None


@dataclass(frozen=True)
class RefreshToken:
    """A refresh token of an OAuth client's Loci token: each is used once (rotation)."""

    secret_hash: str
    token_id: int
    expires_at: float
    used_at: float | None


@dataclass(frozen=True)
class Invite:
    """A one-time sign-up link for a user: only the hash of its secret is kept."""

    id: int
    user_id: int
    expires_at: float
    used_at: float | None
    created_at: str


@dataclass(frozen=True)
class UserModel:
    """A user's own chat model endpoint; the API key stays sealed (see auth/secret_box.py)."""

    base_url: str
    model: str
    fallback_models: tuple[str, ...]
    sealed_api_key: str | None


@dataclass(frozen=True)
class WebSession:
    user_id: int
    token_id: int
    csrf: str
    expires_at: float
