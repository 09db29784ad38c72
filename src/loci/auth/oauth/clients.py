"""Registered applications: Authlib's view of a stored `OAuthClient`, and dynamic registration.

Registration (RFC 7591) is open, as the MCP specification expects: registering grants nothing.
What protects a person is the consent page, which names the application and the host its
redirect goes to before anything is issued. A registration must still be sound: every redirect
URI https, or http on the loopback interface for an app on the person's own machine (OAuth 2.1,
RFC 8252), with no fragment; a secret for a confidential client is shown once and kept as a hash.
"""

from __future__ import annotations

import ipaddress
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import ClientMixin
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidClientMetadataError
from authlib.oauth2.rfc7591.errors import InvalidRedirectURIError

from loci.auth.oauth.resources import SCOPES, static_metadata
from loci.auth.secrets import hash_secret, same
from loci.models import OAuthClient
from loci.store.base import OAuthStore

CLIENT_PREFIX = "locic_"
MAX_REDIRECT_URIS = 10
MAX_NAME = 100
MAX_URI = 2000
UNNAMED = "an unnamed application"
TEXT_LISTS = ("redirect_uris", "grant_types", "response_types", "contacts")
TEXTS = (
    "client_name", "scope", "token_endpoint_auth_method", "client_uri", "logo_uri", "tos_uri",
    "policy_uri", "jwks_uri", "software_id", "software_version",
)  # fmt: skip


class Client(ClientMixin):  # type: ignore[misc]
    """A stored client as Authlib asks about it."""

    def __init__(self, stored: OAuthClient) -> None:
        self.stored = stored

    @property
    def client_id(self) -> str:
        return self.stored.client_id

    def get_client_id(self) -> str:
        return self.stored.client_id

    def get_default_redirect_uri(self) -> str | None:
        return None  # the request must name its redirect URI, matched exactly

    def get_allowed_scope(self, scope: str | None) -> str:
        # Scopes Loci does not know are ignored rather than refused (assistants send their own);
        # asking for none asks for everything, and the person chooses on the consent page.
        asked = [s for s in (scope or "").split() if s in SCOPES]
        return " ".join(asked or SCOPES)

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        return redirect_uri in self.stored.redirect_uris

    def check_client_secret(self, client_secret: str) -> bool:
        stored = self.stored.secret_hash
        return stored is not None and same(hash_secret(client_secret), stored)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        return method == self.stored.auth_method

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in self.stored.grant_types


def check_redirect_uri(uri: Any) -> str:
    """A redirect URI a client may register, or InvalidRedirectURIError saying why not."""
    if not isinstance(uri, str) or not uri or len(uri) > MAX_URI:
        raise InvalidRedirectURIError("each redirect URI must be a URL")
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
    except ValueError:
        raise InvalidRedirectURIError(f"{uri!r} is not a URL") from None
    if parts.fragment or "#" in uri:
        raise InvalidRedirectURIError("a redirect URI must not have a fragment")
    if parts.scheme == "https" and host:
        return uri
    if parts.scheme == "http" and _loopback(host):
        return uri
    raise InvalidRedirectURIError(
        "a redirect URI must be https, or http on the loopback interface (127.0.0.1, [::1],"
        " localhost) for an application on your own machine"
    )


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    """POST /oauth/register: anyone may register; nothing is granted until a person consents."""

    def __init__(self, store: OAuthStore, server: Any, on_register: Callable[[], None]) -> None:
        super().__init__(server)
        self.store = store
        self.on_register = on_register

    def authenticate_token(self, request: Any) -> str:
        return "open registration"

    def get_server_metadata(self) -> dict[str, Any]:
        return static_metadata()

    def extract_client_metadata(self, request: Any) -> dict[str, Any]:
        """The registration's metadata, checked by Authlib — after its shape is checked here,
        since Authlib expects well-typed values (a number among the redirect URIs breaks it)."""
        data = request.payload.data
        for key in TEXT_LISTS:
            value = data.get(key)
            if value is not None and not (
                isinstance(value, list) and all(isinstance(v, str) for v in value)
            ):
                raise InvalidClientMetadataError(f"{key} must be a list of text")
        for key in TEXTS:
            if data.get(key) is not None and not isinstance(data[key], str):
                raise InvalidClientMetadataError(f"{key} must be text")
        metadata: dict[str, Any] = super().extract_client_metadata(request)
        return metadata

    def generate_client_id(self, request: Any) -> str:
        return CLIENT_PREFIX + secrets.token_urlsafe(24)

    def generate_client_info(self, request: Any) -> dict[str, Any]:
        info: dict[str, Any] = super().generate_client_info(request)
        if _auth_method(request.payload.data) == "none":  # a public client has no secret
            info.pop("client_secret", None)
            info.pop("client_secret_expires_at", None)
        return info

    def save_client(
        self, client_info: dict[str, Any], client_metadata: dict[str, Any], request: Any
    ) -> Client:
        uris = client_metadata.get("redirect_uris") or []
        if not isinstance(uris, list) or not uris:
            raise InvalidRedirectURIError("register at least one redirect URI")
        if len(uris) > MAX_REDIRECT_URIS:
            raise InvalidRedirectURIError(f"register at most {MAX_REDIRECT_URIS} redirect URIs")
        uris = [check_redirect_uri(u) for u in uris]
        name = client_metadata.get("client_name") or UNNAMED
        if not isinstance(name, str) or len(name) > MAX_NAME or not name.strip():
            raise InvalidClientMetadataError(f"client_name must be text of at most {MAX_NAME}")
        grants = client_metadata.get("grant_types") or ["authorization_code"]
        secret = client_info.get("client_secret")
        self.on_register()
        stored = self.store.create_client(
            OAuthClient(
                client_id=client_info["client_id"],
                name=" ".join(name.split()),
                redirect_uris=tuple(uris),
                grant_types=tuple(grants),
                auth_method=_auth_method(client_metadata),
                secret_hash=hash_secret(secret) if secret else None,
                created_at="",
            )
        )
        return Client(stored)


def _auth_method(metadata: dict[str, Any]) -> str:
    method = metadata.get("token_endpoint_auth_method") or "client_secret_basic"
    return str(method)
