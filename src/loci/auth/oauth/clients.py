"""Registered applications: Authlib's view of a stored `OAuthClient`, and dynamic registration.

Registration (RFC 7591) is open, as the MCP specification expects: registering grants nothing.
What protects a person is the consent page, which names the application and the host its
redirect goes to before anything is issued — so both must show what they are. A name is kept in
its NFKC form and holds nothing hidden (`loci.names.HIDDEN`: no bidirectional override turns
it around, no zero-width character hides in it) and no word mixing alphabets ('Сlaude' with a
Cyrillic 'С' is not Claude). A redirect URI is a plain URL: printable ASCII without spaces (an
international host is written xn--…), a valid host and port, no user name or password, no
fragment; https, or http on the loopback interface for an app on the person's own machine
(OAuth 2.1, RFC 8252). A secret for a confidential client is shown once and kept as a hash.

What one registration may make the server keep is bounded (`MAX_NAME`, `MAX_REDIRECT_URIS`,
`MAX_URI`; the HTTP layer caps the body), and how many may be made: `registration_limits`.
"""

from __future__ import annotations

import ipaddress
import re
import secrets
import unicodedata
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from authlib.oauth2.rfc6749 import ClientMixin
from authlib.oauth2.rfc7591 import ClientRegistrationEndpoint, InvalidClientMetadataError
from authlib.oauth2.rfc7591.errors import InvalidRedirectURIError

from loci.auth.oauth.resources import SCOPES, static_metadata
from loci.auth.records import OAuthClient
from loci.auth.secrets import hash_secret, same
from loci.names import HIDDEN, one_script
from loci.store.oauth_tables import OAuthStore

if TYPE_CHECKING:
    from loci.auth.oauth.server import OAuthServer

CLIENT_PREFIX = "locic_"
# Together at most about 5 KB a client: real redirect URIs are a few dozen characters.
MAX_REDIRECT_URIS = 10
MAX_NAME = 100
MAX_URI = 500
# Printable ASCII: no control character, no space, nothing hidden (RFC 3986 has no other).
_URI_TEXT = re.compile(r"[\x21-\x7e]+")
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)")
# A last label a browser reads as a number turns the host into an IPv4 address ('127.1').
_NUMBER = re.compile(r"0x[0-9a-f]*|[0-9]+")
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


def check_redirect_uris(uris: Any) -> list[str]:
    """The redirect URIs of a registration: one to `MAX_REDIRECT_URIS` of them, each sound."""
    if not isinstance(uris, list) or not uris:
        raise InvalidRedirectURIError("register at least one redirect URI")
    if len(uris) > MAX_REDIRECT_URIS:
        raise InvalidRedirectURIError(f"register at most {MAX_REDIRECT_URIS} redirect URIs")
    return [check_redirect_uri(u) for u in uris]


def check_redirect_uri(uri: Any) -> str:
    """A redirect URI a client may register, or InvalidRedirectURIError saying why not.

    (Error descriptions are printable ASCII without quotes, as OAuth's error format wants:
    they never repeat the URI, which may hold anything.)"""
    if not isinstance(uri, str) or not uri:
        raise InvalidRedirectURIError("each redirect URI must be a URL")
    if len(uri) > MAX_URI:
        raise InvalidRedirectURIError(f"a redirect URI must be at most {MAX_URI} characters")
    if not _URI_TEXT.fullmatch(uri):
        raise InvalidRedirectURIError(
            "a redirect URI must be printable ASCII without spaces or control characters:"
            " percent-encode anything else, and write an international host name as xn--..."
        )
    try:
        parts = urlsplit(uri)
        host = parts.hostname or ""
        port = parts.port
    except ValueError:  # Python's reading of a bad port or IPv6 address
        raise InvalidRedirectURIError("a redirect URI must be a URL with a valid port") from None
    if "@" in parts.netloc:
        raise InvalidRedirectURIError("a redirect URI must not hold a user name or password")
    if port == 0 or not _valid_host(host):
        raise InvalidRedirectURIError(
            "a redirect URI must name a valid host (letters, digits and hyphens, or an IP"
            " address) and a port from 1 to 65535"
        )
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


def _valid_host(host: str) -> bool:
    """A DNS name of letters, digits, '-' (and '_', which some internal names have) or an IP
    address (`urlsplit` lowers the case and unwraps an IPv6 literal)."""
    if not host or "%" in host:  # none, or an IPv6 zone, which means nothing to a browser
        return False
    try:
        ipaddress.ip_address(host)
        return True
    except ValueError:
        pass
    labels = host.removesuffix(".").split(".")
    if _NUMBER.fullmatch(labels[-1]):
        return False  # an address in a form only a browser reads (127.1, 0x7f.1)
    return len(host) <= 253 and all(_LABEL.fullmatch(label) for label in labels)


def check_client_name(name: Any) -> str:
    """The name an application registers, as the consent page will show it (NFKC, spaces
    collapsed), or InvalidClientMetadataError saying why not."""
    if name is None or name == "":
        return UNNAMED
    if not isinstance(name, str):
        raise InvalidClientMetadataError("client_name must be text")
    normal = unicodedata.normalize("NFKC", name)
    hidden = HIDDEN.search(name) or HIDDEN.search(normal)
    if hidden:
        raise InvalidClientMetadataError(
            f"client_name holds U+{ord(hidden[0]):04X}, a control, invisible or text-direction"
            " character: the consent page must show the name as it is"
        )
    words = normal.split()
    shown = " ".join(words)
    if not shown or len(shown) > MAX_NAME:
        raise InvalidClientMetadataError(f"client_name must be text of at most {MAX_NAME}")
    if not any(c.isalnum() for c in shown):
        raise InvalidClientMetadataError("client_name must hold a letter or a digit")
    if not all(one_script(word) for word in words):
        raise InvalidClientMetadataError(
            "client_name mixes alphabets within a word (Latin with Cyrillic or Greek, say):"
            " a name that looks like another must not be another"
        )
    return shown


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class Registration(ClientRegistrationEndpoint):  # type: ignore[misc]
    """POST /oauth/register: anyone may register, within the server's `registration_limits`;
    nothing is granted until a person consents."""

    server: OAuthServer

    def __init__(self, store: OAuthStore, server: OAuthServer) -> None:
        super().__init__(server)
        self.store = store

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
        # Before Authlib's checks, whose refusals ("Invalid claim") would not say why.
        check_redirect_uris(data.get("redirect_uris"))
        check_client_name(data.get("client_name"))
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
        uris = check_redirect_uris(client_metadata.get("redirect_uris"))
        name = check_client_name(client_metadata.get("client_name"))
        # Authlib let only supported grant types through, but as often as they were sent.
        grants = list(dict.fromkeys(client_metadata.get("grant_types") or ["authorization_code"]))
        secret = client_info.get("client_secret")
        client = OAuthClient(
            client_id=client_info["client_id"],
            name=name,
            redirect_uris=tuple(uris),
            grant_types=tuple(grants),
            auth_method=_auth_method(client_metadata),
            secret_hash=hash_secret(secret) if secret else None,
            created_at="",
        )
        stored = self.server.registration_limits.register(
            self.store, client, request.loci_address, self.server.clock()
        )
        return Client(stored)


def _auth_method(metadata: dict[str, Any]) -> str:
    method = metadata.get("token_endpoint_auth_method") or "client_secret_basic"
    return str(method)
