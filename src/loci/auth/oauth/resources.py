"""The resources a token can be issued for, and how clients discover the server.

Every resource is a URL of this server (RFC 8707): the whole server (`{base}`), the MCP endpoint
(`{base}/mcp`) or the HTTP API (`{base}/api/v1`). A token for a URL is good at that URL and
every path under it, so a token for the whole server works at /mcp and the API, and a token for
/mcp works nowhere else. A request names no other server's resource: that is `invalid_target`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

SCOPES = ("read", "write")
MCP_PATH = "/mcp"
API_PATH = "/api/v1"
PROTECTED_RESOURCE_PATH = "/.well-known/oauth-protected-resource"
AUTHORIZATION_SERVER_PATH = "/.well-known/oauth-authorization-server"
AUTHORIZE_PATH = "/oauth/authorize"
TOKEN_PATH = "/oauth/token"
REGISTER_PATH = "/oauth/register"
REVOKE_PATH = "/oauth/revoke"
AUTH_METHODS = ["none", "client_secret_basic", "client_secret_post"]


def canonical(url: str) -> str:
    """A resource URL as compared: scheme and host in lower case, no trailing slash, no query
    or fragment (RFC 8707 forbids a fragment)."""
    try:
        parts = urlsplit(url.strip())
    except ValueError:
        return ""
    path = parts.path.rstrip("/")
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, "", ""))


def covers(granted: str, used_at: str) -> bool:
    """Whether a token for `granted` may be used at `used_at` (the same URL, or under it)."""
    granted, used_at = canonical(granted), canonical(used_at)
    return bool(granted) and (used_at == granted or used_at.startswith(granted + "/"))


@dataclass(frozen=True)
class Resources:
    """This server's resources, as seen at `base` (its public address)."""

    base: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "base", canonical(self.base))

    @property
    def mcp(self) -> str:
        return self.base + MCP_PATH

    @property
    def api(self) -> str:
        return self.base + API_PATH

    def known(self, resource: str | None) -> str | None:
        """The canonical form of a requested resource (none requested: the whole server), or
        None when it is not one of this server's."""
        if resource is None or not resource.strip():
            return self.base
        wanted = canonical(resource)
        return wanted if wanted in (self.base, self.mcp, self.api) else None

    def metadata_url(self, resource: str) -> str:
        """Where the protected resource metadata of `resource` is (RFC 9728 section 3.1)."""
        path = canonical(resource)[len(self.base) :]
        return self.base + PROTECTED_RESOURCE_PATH + path

    def protected_resource(self, resource: str) -> dict[str, Any]:
        """RFC 9728 metadata: what the resource is and which server issues its tokens."""
        return {
            "resource": resource,
            "authorization_servers": [self.base],
            "scopes_supported": list(SCOPES),
            "bearer_methods_supported": ["header"],
            "resource_name": "Loci",
        }

    def authorization_server(self) -> dict[str, Any]:
        """RFC 8414 metadata of the authorization server (this server, at its base URL)."""
        return {
            "issuer": self.base,
            "authorization_endpoint": self.base + AUTHORIZE_PATH,
            "token_endpoint": self.base + TOKEN_PATH,
            "registration_endpoint": self.base + REGISTER_PATH,
            "revocation_endpoint": self.base + REVOKE_PATH,
            **static_metadata(),
        }


def static_metadata() -> dict[str, Any]:
    """The parts of the server metadata that do not depend on its address."""
    return {
        "scopes_supported": list(SCOPES),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query"],
        "grant_types_supported": ["authorization_code", "refresh_token"],
        "token_endpoint_auth_methods_supported": AUTH_METHODS,
        "revocation_endpoint_auth_methods_supported": AUTH_METHODS,
        "code_challenge_methods_supported": ["S256"],
    }


def challenge(metadata_url: str, token_sent: bool) -> str:
    """The `WWW-Authenticate` value of a 401: where the resource's metadata is (RFC 9728
    section 5.1), so an MCP client can discover how to get a token, and `invalid_token` when
    the one sent was not accepted (RFC 6750 section 3.1)."""
    error = ', error="invalid_token"' if token_sent else ""
    return f'Bearer resource_metadata="{metadata_url}"{error}'
