"""A real OpenID Connect provider on loopback, built with Authlib: discovery, a JWKS, the
authorization code flow with PKCE and nonces, and signed ID tokens — what Keycloak, Authentik,
Google or Entra ID speak, small enough to run per test.

It signs in whoever `person` says (its login page is not what is being tested) and can be told
to misbehave the ways a hostile or broken provider would: sign with a key it does not publish,
or put other claims (issuer, audience, nonce, expiry) in the ID token.
"""

from __future__ import annotations

import json
import secrets
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, OAuth2Error
from authlib.oauth2.rfc6749.grants import AuthorizationCodeGrant
from authlib.oauth2.rfc6750 import BearerTokenGenerator
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oidc.core import OpenIDCode, UserInfo
from joserfc.jwk import KeySet, RSAKey

from loci.auth.oauth.server import CallRequest, HttpCall, Reply
from tests.support.loopback import Loopback, QuietHandler

CLIENT_ID = "loci-test"
CLIENT_SECRET = "s3cret-of-the-test-client"


@dataclass
class Person:
    sub: str
    preferred_username: str
    email: str
    email_verified: bool = True
    groups: list[str] = field(default_factory=list)


class _Client(ClientMixin):  # type: ignore[misc]
    def __init__(self, redirect_uris: list[str]) -> None:
        self.redirect_uris = redirect_uris

    def get_client_id(self) -> str:
        return CLIENT_ID

    def get_default_redirect_uri(self) -> str | None:
        return None

    def get_allowed_scope(self, scope: str) -> str:
        return scope

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return not self.redirect_uris or redirect_uri in self.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        return client_secret == CLIENT_SECRET

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == "client_secret_basic"

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type == "authorization_code"


@dataclass
class _Code:
    client_id: str
    redirect_uri: str
    scope: str
    nonce: str | None
    code_challenge: str
    code_challenge_method: str
    person: Person

    def get_redirect_uri(self) -> str:
        return self.redirect_uri

    def get_scope(self) -> str:
        return self.scope

    def get_nonce(self) -> str | None:
        return self.nonce

    def get_auth_time(self) -> int:
        return int(time.time())

    def get_acr(self) -> None:
        return None

    def get_amr(self) -> None:
        return None


class Provider(AuthorizationServer):  # type: ignore[misc]
    def __init__(self) -> None:
        super().__init__(scopes_supported=["openid", "email", "profile", "groups"])
        self.key = RSAKey.generate_key(2048, parameters={"kid": "k1", "use": "sig"})
        self.sign_with = self.key  # set to another key: a signature the JWKS does not verify
        self.claims: dict[str, Any] = {}  # claims forced into the next ID tokens
        self.person = Person("sub-1", "alice", "alice@example.org")
        self.codes: dict[str, _Code] = {}
        self.client = _Client([])
        self.issuer = ""
        self.register_token_generator(
            "default", BearerTokenGenerator(lambda *a, **k: secrets.token_urlsafe(24))
        )
        self.register_grant(_CodeGrant, [CodeChallenge(required=True), _IdTokens(self)])

    def query_client(self, client_id: str) -> _Client | None:
        return self.client if client_id == CLIENT_ID else None

    def save_token(self, token: dict[str, Any], request: Any) -> None:
        pass

    def create_oauth2_request(self, request: Any) -> Any:
        return request if isinstance(request, CallRequest) else CallRequest(request)

    def handle_response(self, status: int, body: Any, headers: Any) -> Reply:
        return Reply(status, body, [(str(k), str(v)) for k, v in headers])

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def discovery(self) -> dict[str, Any]:
        return {
            "issuer": self.issuer,
            "authorization_endpoint": self.issuer + "/authorize",
            "token_endpoint": self.issuer + "/token",
            "jwks_uri": self.issuer + "/jwks",
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
            "code_challenge_methods_supported": ["S256"],
        }

    def jwks(self) -> dict[str, Any]:
        return dict(KeySet([self.key]).as_dict(private=False))


class _CodeGrant(AuthorizationCodeGrant):  # type: ignore[misc]
    server: Provider

    def save_authorization_code(self, code: str, request: Any) -> None:
        data = request.payload.data
        self.server.codes[code] = _Code(
            CLIENT_ID, data["redirect_uri"], request.scope, data.get("nonce"),
            data["code_challenge"], data["code_challenge_method"], request.user,
        )  # fmt: skip

    def query_authorization_code(self, code: str, client: Any) -> _Code | None:
        return self.server.codes.get(code)

    def delete_authorization_code(self, authorization_code: _Code) -> None:
        self.server.codes = {
            k: v for k, v in self.server.codes.items() if v is not authorization_code
        }

    def authenticate_user(self, authorization_code: _Code) -> Person:
        return authorization_code.person


class _IdTokens(OpenIDCode):  # type: ignore[misc]
    def __init__(self, provider: Provider) -> None:
        super().__init__(require_nonce=True)
        self.provider = provider

    def exists_nonce(self, nonce: str, request: Any) -> bool:
        return False

    def resolve_client_private_key(self, client: Any) -> RSAKey:
        return self.provider.sign_with

    def get_client_algorithm(self, client: Any) -> str:
        return "RS256"

    def get_encode_header(self, client: Any) -> dict[str, str]:
        return {"alg": "RS256", "kid": "k1"}

    def get_client_claims(self, client: Any) -> dict[str, Any]:
        now = int(time.time())
        return {"iss": self.provider.issuer, "aud": [CLIENT_ID], "iat": now, "exp": now + 300}

    def generate_user_info(self, user: Person, scope: str) -> UserInfo:
        info = UserInfo(
            sub=user.sub,
            preferred_username=user.preferred_username,
            email=user.email,
            email_verified=user.email_verified,
            groups=user.groups,
        )
        info.update(self.provider.claims)  # last: a test's claims win over everything
        return info


def _handler(provider: Provider) -> type[QuietHandler]:
    class Handler(QuietHandler):
        def _call(self, body: bytes = b"") -> HttpCall:
            parts = urlsplit(self.path)
            return HttpCall(
                self.command,
                provider.issuer + self.path,
                {k: v for k, v in self.headers.items()},
                query=parse_qsl(parts.query),
                form=parse_qsl(body.decode()),
            )

        def _reply(self, reply: Reply) -> None:
            headers = dict(reply.headers)
            if reply.location:
                self.send(reply.status, b"", None, {"Location": reply.location})
            else:
                headers.pop("Content-Type", None)
                self.send(reply.status, json.dumps(reply.body), "application/json", headers)

        def do_GET(self) -> None:  # noqa: N802 - stdlib's name
            path = urlsplit(self.path).path
            if path == "/.well-known/openid-configuration":
                self.send(200, json.dumps(provider.discovery()), "application/json")
            elif path == "/jwks":
                self.send(200, json.dumps(provider.jwks()), "application/json")
            elif path == "/authorize":  # the person is signed in and consents at once
                try:
                    grant = provider.get_consent_grant(self._call(), end_user=provider.person)
                except OAuth2Error as error:
                    status, body, headers = error()
                    return self._reply(Reply(status, body, list(headers)))
                reply = provider.create_authorization_response(
                    grant.request, grant_user=provider.person, grant=grant
                )
                self._reply(reply)
            else:
                self.send(404, "not found")

        def do_POST(self) -> None:  # noqa: N802 - stdlib's name
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            if urlsplit(self.path).path == "/token":
                self._reply(provider.create_token_response(self._call(body)))
            else:
                self.send(404, "not found")

    return Handler


class OidcProvider:
    """`with OidcProvider() as idp:` — an issuer at `idp.issuer`, signing in `idp.person`."""

    def __init__(self) -> None:
        self.provider = Provider()
        self.site = Loopback(_handler(self.provider))
        self.provider.issuer = self.site.url()

    @property
    def issuer(self) -> str:
        return self.provider.issuer

    def __enter__(self) -> Provider:
        self.site.start()
        return self.provider

    def __exit__(self, *exc: object) -> None:
        self.site.stop()
