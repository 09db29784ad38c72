"""The grants: authorization code with PKCE (S256 only, for every client), refresh with
rotation, and revocation — Authlib's, told where Loci keeps codes and tokens.

A code is single-use and lives two minutes. Presenting one a second time means it leaked:
the token it was exchanged for is revoked (RFC 6749 section 4.1.2). A refresh token is used
once too; each refresh issues a new one, and presenting a spent one revokes the whole grant
(OAuth 2.1 section 4.3.1: a stolen refresh token then stops working for the thief and the
application alike, and the person connects the application again). Only the client a refresh
token was issued to can spend it, or end the grant by presenting it spent.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from authlib.oauth2.rfc6749 import InvalidRequestError, OAuth2Error
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant, RefreshTokenGrant
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge

from loci.auth.oauth.clients import Client
from loci.auth.oauth.resources import AUTH_METHODS, canonical
from loci.auth.records import ApiToken, OAuthCode, TokenScope, User
from loci.auth.secrets import hash_secret

if TYPE_CHECKING:
    from loci.auth.oauth.server import OAuthServer

CODE_TTL_S = 120.0


class InvalidTargetError(OAuth2Error):  # type: ignore[misc]
    """RFC 8707: the resource asked for is not one this server issues tokens for."""

    error = "invalid_target"


def scope_text(scope: TokenScope) -> str:
    """A Loci token scope as OAuth scopes: write includes read."""
    return "read write" if scope == "write" else "read"


def token_scope(scopes: str) -> TokenScope:
    return "write" if "write" in scopes.split() else "read"


@dataclass(frozen=True)
class Choice:
    """What the person approved on the consent page."""

    scope: TokenScope
    brain_ids: tuple[int, ...] | None
    resource: str


@dataclass(frozen=True)
class Code:
    """A stored code as Authlib asks about it (AuthorizationCodeMixin)."""

    stored: OAuthCode

    @property
    def code_challenge(self) -> str:
        return self.stored.code_challenge

    @property
    def code_challenge_method(self) -> str:
        return "S256"

    def get_redirect_uri(self) -> str:
        return self.stored.redirect_uri

    def get_scope(self) -> str:
        return scope_text(self.stored.scope)


@dataclass(frozen=True)
class Grant:
    """A live OAuth token, found by its access or refresh secret (TokenMixin)."""

    token: ApiToken

    def check_client(self, client: Client) -> bool:
        return self.token.client_id == client.get_client_id()

    def get_scope(self) -> str:
        return scope_text(self.token.scope)


class S256Only(CodeChallenge):  # type: ignore[misc]
    """PKCE for every client, confidential ones too (OAuth 2.1), and only with S256: `plain`
    would hand the verifier to whoever sees the authorization request."""

    SUPPORTED_CODE_CHALLENGE_METHOD = ["S256"]

    def validate_code_challenge(self, grant: Any, redirect_uri: str) -> None:
        data = grant.request.payload.data
        if not data.get("code_challenge"):
            raise InvalidRequestError(
                "PKCE is required: send code_challenge with code_challenge_method=S256"
            )
        if data.get("code_challenge_method") != "S256":
            raise InvalidRequestError("only code_challenge_method=S256 is supported")
        super().validate_code_challenge(grant, redirect_uri)

    def validate_code_verifier(self, grant: Any, result: Any) -> None:
        if not grant.request.form.get("code_verifier"):
            raise InvalidRequestError("Missing 'code_verifier': PKCE is required")
        super().validate_code_verifier(grant, result)


def _check_resource(requested: str | None, granted: str) -> None:
    """A token request may repeat the resource it was authorized for, and name no other."""
    if requested and canonical(requested) != canonical(granted):
        raise InvalidTargetError(f"this grant is for {granted}, not {requested}")


class CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    server: OAuthServer

    def save_authorization_code(self, code: str, request: Any) -> None:
        choice: Choice = request.loci_choice
        self.server.store.create_code(
            OAuthCode(
                code_hash=hash_secret(code),
                client_id=request.client.get_client_id(),
                user_id=request.user.id,
                redirect_uri=request.payload.redirect_uri,
                scope=choice.scope,
                brain_ids=choice.brain_ids,
                resource=choice.resource,
                code_challenge=request.payload.data["code_challenge"],
                expires_at=self.server.clock() + CODE_TTL_S,
            )
        )

    def query_authorization_code(self, code: str, client: Client) -> Code | None:
        store, now = self.server.store, self.server.clock()
        found = store.code(hash_secret(code))
        if found is None or found.client_id != client.get_client_id():
            return None
        if found.used_at is not None:  # used before: it leaked, so what it gave is revoked
            if found.token_id is not None:
                self.server.revoke(found.token_id)
            return None
        if not store.use_code(found.code_hash, now):  # expired, or another request won it
            return None
        return Code(found)

    def validate_token_request(self) -> None:
        super().validate_token_request()
        code: Code = self.request.authorization_code
        _check_resource(self.request.form.get("resource"), code.stored.resource)

    def delete_authorization_code(self, authorization_code: Code) -> None:
        pass  # used up when it was read; kept until it expires to recognise a second use

    def authenticate_user(self, authorization_code: Code) -> User | None:
        return self.server.active_user(authorization_code.stored.user_id)


class RefreshGrant(RefreshTokenGrant):  # type: ignore[misc]
    TOKEN_ENDPOINT_AUTH_METHODS = AUTH_METHODS
    INCLUDE_NEW_REFRESH_TOKEN = True
    server: OAuthServer

    def authenticate_refresh_token(self, refresh_token: str) -> Grant | None:
        """The grant of an unspent refresh token of the client presenting it — which spends it.

        The client is checked before anything happens: another application presenting a stolen
        token must neither spend it nor, presenting a spent one, revoke the grant (it would end
        the real application's connection at will). Authlib checks the client only after this."""
        store, now = self.server.store, self.server.clock()
        found = store.refresh(hash_secret(refresh_token))
        if found is None:
            return None
        token = self.server.token(found.token_id)
        if token is None or not Grant(token).check_client(self.request.client):
            return None
        if found.used_at is not None:  # its own client again with a spent one: it was copied
            self.server.revoke(found.token_id)
            return None
        if token.revoked_at is not None:
            return None
        if not store.use_refresh(found.secret_hash, now):
            return None
        return Grant(token)

    def validate_token_request(self) -> None:
        super().validate_token_request()
        grant: Grant = self.request.refresh_token
        _check_resource(self.request.form.get("resource"), grant.token.resource or "")

    def authenticate_user(self, refresh_token: Grant) -> User | None:
        return self.server.active_user(refresh_token.token.user_id)

    def revoke_old_credential(self, refresh_token: Grant) -> None:
        pass  # spent when it was read (use_refresh)


class Revocation(RevocationEndpoint):  # type: ignore[misc]
    """RFC 7009: an application revokes its access or refresh token; either ends the grant."""

    CLIENT_AUTH_METHODS = AUTH_METHODS
    server: OAuthServer

    def query_token(self, token_string: str, token_type_hint: str | None) -> Grant | None:
        secret = hash_secret(token_string)
        token = self.server.store_accounts.token_by_hash(secret)
        if token is None:
            refresh = self.server.store.refresh(secret)
            token = self.server.token(refresh.token_id) if refresh else None
        if token is None or token.client_id is None:
            return None
        return Grant(token)

    def revoke_token(self, token: Grant, request: Any) -> None:
        self.server.revoke(token.token.id)
