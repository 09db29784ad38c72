"""The OpenID Connect authorization code flow, from Loci's side (the relying party).

`start` sends the browser to the provider with PKCE (S256), a `state` and a `nonce`; what the
callback needs to check the answer (`Pending`) travels in a cookie of its own, sealed with the
server's key (`SecretBox`: neither readable nor forgeable), so it is bound to that browser and
no table holds half-finished sign-ins. `finish` checks the state, exchanges the code (with the
verifier) and checks the ID token: signature against the provider's published keys, issuer,
audience (and authorized party), nonce, expiry and issue time — all by Authlib and joserfc.
"""

from __future__ import annotations

import json
import secrets
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

from authlib.integrations.base_client import OAuthError
from authlib.integrations.httpx_client import OAuth2Client
from authlib.oidc.core import CodeIDToken
from joserfc import jwt
from joserfc.errors import InvalidKeyIdError, JoseError
from joserfc.jws import JWSRegistry

from loci.auth.secret_box import SecretBox
from loci.auth.secrets import same
from loci.auth.sso.provider import TIMEOUT_S, ProviderDirectory, SsoProvider
from loci.errors import FetchError, StoreError, Unauthenticated

PENDING_TTL_S = 600.0  # a sign-in at the provider must finish within ten minutes
LEEWAY_S = 60  # clocks differ a little between servers
# Public-key signatures only: a MAC (HS256) would be keyed with the client secret, and "none"
# is no signature at all.
SIGNATURE_ALGORITHMS = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA"}
)


@dataclass(frozen=True)
class Pending:
    """A sign-in under way: what the callback must find again."""

    provider: str
    state: str
    nonce: str
    verifier: str
    next: str
    at: float

    def seal(self, box: SecretBox) -> str:
        return box.seal(json.dumps(asdict(self)))

    @classmethod
    def open(cls, box: SecretBox, sealed: str, now: float) -> Pending:
        try:
            pending = cls(**json.loads(box.open(sealed)))
        except (StoreError, ValueError, TypeError):
            raise Unauthenticated(
                "this sign-in cannot be matched to your browser; start again"
            ) from None
        if not 0 <= now - pending.at <= PENDING_TTL_S:
            raise Unauthenticated("the sign-in took too long; start again")
        return pending


@dataclass(frozen=True)
class Started:
    url: str  # where to send the browser
    pending: Pending


class OidcFlow:
    def __init__(
        self, directory: ProviderDirectory, clock: Callable[[], float] = time.time
    ) -> None:
        self.directory = directory
        self.clock = clock

    def _client(self, provider: SsoProvider, redirect_uri: str) -> OAuth2Client:
        return OAuth2Client(
            client_id=provider.client_id,
            client_secret=provider.client_secret,
            token_endpoint_auth_method="client_secret_basic" if provider.client_secret else "none",
            scope=" ".join(provider.scopes),
            redirect_uri=redirect_uri,
            code_challenge_method="S256",
            timeout=TIMEOUT_S,
        )

    def start(self, provider: SsoProvider, redirect_uri: str, next_path: str) -> Started:
        metadata = self.directory.metadata(provider)
        pending = Pending(
            provider=provider.name,
            state=secrets.token_urlsafe(24),
            nonce=secrets.token_urlsafe(24),
            verifier=secrets.token_urlsafe(48),
            next=next_path,
            at=self.clock(),
        )
        with self._client(provider, redirect_uri) as client:
            url, _ = client.create_authorization_url(
                metadata["authorization_endpoint"],
                state=pending.state,
                code_verifier=pending.verifier,
                nonce=pending.nonce,
            )
        return Started(url, pending)

    def finish(
        self,
        provider: SsoProvider,
        pending: Pending,
        *,
        state: str,
        code: str,
        redirect_uri: str,
    ) -> dict[str, Any]:
        """The verified claims of the ID token the code is exchanged for."""
        if pending.provider != provider.name or not same(state, pending.state):
            raise Unauthenticated("this sign-in cannot be matched to your browser; start again")
        metadata = self.directory.metadata(provider)
        try:
            with self._client(provider, redirect_uri) as client:
                token = client.fetch_token(
                    metadata["token_endpoint"],
                    grant_type="authorization_code",
                    code=code,
                    code_verifier=pending.verifier,
                )
        except OAuthError as error:
            raise Unauthenticated(
                f"{provider.label} refused the sign-in: {error.error} {error.description or ''}"
            ) from None
        except Exception as error:  # the HTTP client's own failures
            raise FetchError(f"cannot reach {provider.label}: {error}") from None
        id_token = token.get("id_token")
        if not isinstance(id_token, str):
            raise Unauthenticated(f"{provider.label} sent no ID token (is `openid` a scope?)")
        return self.verify(provider, id_token, pending.nonce, token.get("access_token"))

    def verify(
        self, provider: SsoProvider, id_token: str, nonce: str, access_token: str | None
    ) -> dict[str, Any]:
        metadata = self.directory.metadata(provider)
        offered = metadata.get("id_token_signing_alg_values_supported") or ["RS256"]
        registry = JWSRegistry(algorithms=[a for a in offered if a in SIGNATURE_ALGORITHMS])
        try:
            try:
                decoded = jwt.decode(id_token, self.directory.keys(provider), registry=registry)
            except InvalidKeyIdError:  # signed with a key published since: fetch them again
                keys = self.directory.keys(provider, fresh=True)
                decoded = jwt.decode(id_token, keys, registry=registry)
        except (JoseError, ValueError) as error:
            raise Unauthenticated(
                f"the ID token from {provider.label} does not verify against its published"
                f" keys ({_reason(error)})"
            ) from None
        claims = CodeIDToken(
            decoded.claims,
            decoded.header,
            {
                "iss": {"essential": True, "values": [metadata["issuer"]]},
                "aud": {"essential": True, "values": [provider.client_id]},
            },
            {"nonce": nonce, "client_id": provider.client_id, "access_token": access_token},
        )
        try:
            claims.validate(now=int(self.clock()), leeway=LEEWAY_S)
        except JoseError as error:
            raise Unauthenticated(
                f"the ID token from {provider.label} is not valid here ({_reason(error)})"
            ) from None
        return dict(claims)


def _reason(error: Exception) -> str:
    return str(getattr(error, "description", "") or error) or type(error).__name__
