"""The authorization server: Authlib's, framework-free, over Loci's stores.

The HTTP layer hands it an `HttpCall` (method, URL, headers, query and form pairs, JSON body)
and gets a `Reply` (status, body, headers) back, so nothing here knows FastAPI. OAuth needs
https: a request on plain http to anything but the loopback interface is refused
(`insecure_transport`), since codes and tokens would cross the network in the clear.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from authlib.oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import (
    InsecureTransportError,
    InvalidGrantError,
    JsonPayload,
    JsonRequest,
    OAuth2Error,
    OAuth2Payload,
    OAuth2Request,
)

from loci.auth.oauth.clients import Client, Registration
from loci.auth.oauth.grants import (
    CodeGrant,
    RefreshGrant,
    Revocation,
    S256Only,
    scope_text,
)
from loci.auth.oauth.registration_limits import RegistrationLimits
from loci.auth.oauth.resources import SCOPES
from loci.auth.records import ApiToken, User
from loci.auth.secrets import hash_secret, new_secret, shown_prefix
from loci.errors import NotFound
from loci.store.account_tables import AccountStore
from loci.store.oauth_tables import OAuthStore

ACCESS_TTL_S = 3600.0
REFRESH_TTL_S = 30 * 86400.0
REFRESH_PREFIX = "locir_"
Pairs = Sequence[tuple[str, str]]


@dataclass(frozen=True)
class HttpCall:
    method: str
    url: str
    headers: Mapping[str, str]
    query: Pairs = ()
    form: Pairs = ()
    json: Any = None
    address: str | None = None  # the client's, as the trusted proxy in front reports it


@dataclass(frozen=True)
class Reply:
    status: int
    body: Any  # a JSON object, or "" for a redirect
    headers: list[tuple[str, str]] = field(default_factory=list)

    @property
    def location(self) -> str | None:
        return next((v for k, v in self.headers if k.lower() == "location"), None)


class _Pairs(OAuth2Payload):  # type: ignore[misc]
    def __init__(self, pairs: Pairs) -> None:
        self._list: defaultdict[str, list[str]] = defaultdict(list)
        for key, value in pairs:
            self._list[key].append(value)
        self._data = {key: values[0] for key, values in self._list.items()}

    @property
    def data(self) -> dict[str, str]:
        return self._data

    @property
    def datalist(self) -> defaultdict[str, list[str]]:
        return self._list


class CallRequest(OAuth2Request):  # type: ignore[misc]
    def __init__(self, call: HttpCall) -> None:
        super().__init__(call.method, call.url, headers=call.headers)
        self.payload = _Pairs([*call.query, *call.form])
        self._args = dict(call.query)
        self._form = dict(call.form)
        self.loci_choice: Any = None

    @property
    def args(self) -> dict[str, str]:
        return self._args

    @property
    def form(self) -> dict[str, str]:
        return self._form


class _Json(JsonPayload):  # type: ignore[misc]
    def __init__(self, data: Any) -> None:
        self._data = data if isinstance(data, dict) else {}

    @property
    def data(self) -> dict[str, Any]:
        return self._data


def insecure() -> Reply:
    return Reply(
        400,
        {
            "error": "insecure_transport",
            "error_description": "OAuth needs https (or the loopback interface): serve Loci"
            " behind TLS and set LOCI_PUBLIC_URL to its https address",
        },
    )


def unusable() -> Reply:
    """Authlib refuses to echo a request's value into an error text when it holds characters
    OAuth's error format forbids (it raises ValueError): the request was malformed."""
    return Reply(
        400,
        {
            "error": "invalid_request",
            "error_description": "the request holds characters OAuth does not allow",
        },
    )


class OAuthServer(AuthorizationServer):  # type: ignore[misc]
    def __init__(
        self,
        store: OAuthStore,
        accounts: AccountStore,
        clock: Callable[[], float] = time.time,
        registration_limits: RegistrationLimits | None = None,
    ) -> None:
        super().__init__(scopes_supported=list(SCOPES))
        self.store = store
        self.store_accounts = accounts
        self.clock = clock
        self.registration_limits = registration_limits or RegistrationLimits()
        self.register_token_generator("default", self._bearer)
        self.register_grant(CodeGrant, [S256Only(required=True)])
        self.register_grant(RefreshGrant)
        self.register_endpoint(Revocation(server=self))
        self.register_endpoint(Registration(store, self))

    # what the HTTP layer calls ------------------------------------------------------------
    def token_response(self, call: HttpCall) -> Reply:
        try:
            request = self.create_oauth2_request(call)
            reply: Reply = self.create_token_response(request)
        except InsecureTransportError:
            return insecure()
        except ValueError:
            return unusable()
        return reply

    def revocation_response(self, call: HttpCall) -> Reply:
        return self._endpoint("revocation", call)

    def registration_response(self, call: HttpCall) -> Reply:
        return self._endpoint("client_registration", call)

    def _endpoint(self, name: str, call: HttpCall) -> Reply:
        try:
            reply: Reply = self.create_endpoint_response(name, call)
        except InsecureTransportError:
            return insecure()
        except ValueError:
            return unusable()
        return reply

    # Authlib's framework seams ------------------------------------------------------------
    def query_client(self, client_id: str) -> Client | None:
        stored = self.store.client(client_id) if client_id else None
        return Client(stored) if stored else None

    def create_oauth2_request(self, request: Any) -> OAuth2Request:
        if isinstance(request, OAuth2Request):
            return request
        return CallRequest(request)

    def create_json_request(self, request: HttpCall) -> JsonRequest:
        made = JsonRequest(request.method, request.url, request.headers)
        made.payload = _Json(request.json)
        made.loci_address = request.address  # what registrations are limited by
        return made

    def handle_response(self, status: int, body: Any, headers: Any) -> Reply:
        return Reply(status, body, [(str(k), str(v)) for k, v in headers])

    def send_signal(self, name: str, *args: Any, **kwargs: Any) -> None:
        pass

    def _bearer(
        self,
        grant_type: str,
        client: Client,
        user: User | None = None,
        scope: str | None = None,
        expires_in: int | None = None,
        include_refresh_token: bool = True,
    ) -> dict[str, Any]:
        token: dict[str, Any] = {
            "token_type": "Bearer",
            "access_token": new_secret(),
            "expires_in": int(ACCESS_TTL_S),
        }
        if scope:
            token["scope"] = scope
        if include_refresh_token:
            token["refresh_token"] = new_secret(REFRESH_PREFIX)
        return token

    def save_token(self, token: dict[str, Any], request: Any) -> None:
        """Issue the access token as a Loci token (a new one for a code, the same one with a
        new secret for a refresh) and keep the refresh token's hash."""
        now = self.clock()
        access = token["access_token"]
        expires_at = now + ACCESS_TTL_S
        if request.authorization_code is not None:
            code = request.authorization_code.stored
            issued = self.store_accounts.create_token(
                request.user.id,
                name=request.client.stored.name[:100],
                prefix=shown_prefix(access),
                secret_hash=hash_secret(access),
                scope=code.scope,
                brain_ids=code.brain_ids,
                expires_at=expires_at,
                client_id=code.client_id,
                resource=code.resource,
            )
            self.store.set_code_token(code.code_hash, issued.id)
            token_id, scope = issued.id, code.scope
        else:
            held = request.refresh_token.token
            rotated = self.store.rotate_token(
                held.id, prefix=shown_prefix(access), secret_hash=hash_secret(access),
                expires_at=expires_at,
            )  # fmt: skip
            if not rotated:
                raise InvalidGrantError("this grant was revoked")
            token_id, scope = held.id, held.scope
        if "refresh_token" in token:
            self.store.create_refresh(
                hash_secret(token["refresh_token"]), token_id, now + REFRESH_TTL_S
            )
        token["scope"] = scope_text(scope)  # what was granted, whatever was asked
        self.store.purge_codes(now - 86400.0)
        self.store.purge_refresh(now)

    # Loci's side ---------------------------------------------------------------------------
    def token(self, token_id: int) -> ApiToken | None:
        try:
            return self.store_accounts.get_token(token_id)
        except NotFound:
            return None

    def revoke(self, token_id: int) -> None:
        token = self.token(token_id)
        if token is not None:
            self.store_accounts.revoke_token(token.user_id, token.id, self.clock())

    def active_user(self, user_id: int) -> User | None:
        """The user a grant is for, unless they were disabled (or removed) since: disabling a
        person in Loci stops every application acting for them."""
        try:
            user = self.store_accounts.get_user(user_id)
        except NotFound:
            return None
        return None if user.disabled else user


def oauth_error(error: OAuth2Error) -> str:
    """An Authlib error as one line for a person."""
    description = getattr(error, "description", "") or ""
    return f"{error.error}: {description}" if description else str(error.error)
