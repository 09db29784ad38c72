"""An identity provider as the administrator configured it, and what it publishes about itself:
its discovery document (`/.well-known/openid-configuration`) and its signing keys (JWKS).

Both are fetched on first use and kept for an hour; keys are fetched again at once when an ID
token names a key id not among them (the provider rotated its keys). The discovery document
must name the configured issuer: a document claiming another issuer is refused, so a
misconfigured or spoofed provider cannot vouch for someone else's tokens.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import httpx
from joserfc.jwk import KeySet

from loci.errors import FetchError
from loci.models import Role

CACHE_S = 3600.0
TIMEOUT_S = 10.0


@dataclass(frozen=True)
class SsoProvider:
    name: str
    label: str
    issuer: str
    client_id: str
    client_secret: str | None
    scopes: tuple[str, ...] = ("openid", "email", "profile")
    username_claim: str = "preferred_username"
    groups_claim: str = "groups"
    allowed_domains: tuple[str, ...] = ()
    allowed_groups: tuple[str, ...] = ()
    link_by_email: bool = False
    admin_groups: tuple[str, ...] = ()
    group_brains: dict[str, dict[str, Role]] = field(default_factory=dict)


@dataclass
class _Cached:
    value: Any
    fetched_at: float


class ProviderDirectory:
    """The configured providers, and what each publishes, fetched over HTTP and cached."""

    def __init__(
        self,
        providers: list[SsoProvider],
        http: Callable[[], httpx.Client] = lambda: httpx.Client(timeout=TIMEOUT_S),
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.providers = {p.name: p for p in providers}
        self._http = http
        self._clock = clock
        self._metadata: dict[str, _Cached] = {}
        self._keys: dict[str, _Cached] = {}
        self._lock = threading.Lock()

    def get(self, name: str) -> SsoProvider | None:
        return self.providers.get(name)

    def metadata(self, provider: SsoProvider) -> dict[str, Any]:
        cached = self._metadata.get(provider.name)
        if cached is not None and self._clock() - cached.fetched_at < CACHE_S:
            value: dict[str, Any] = cached.value
            return value
        url = provider.issuer.rstrip("/") + "/.well-known/openid-configuration"
        found = self._get_json(url, provider)
        if str(found.get("issuer", "")).rstrip("/") != provider.issuer.rstrip("/"):
            raise FetchError(
                f"{provider.label}'s discovery document names issuer {found.get('issuer')!r},"
                f" not the configured {provider.issuer!r}"
            )
        for key in ("authorization_endpoint", "token_endpoint", "jwks_uri"):
            if not isinstance(found.get(key), str):
                raise FetchError(f"{provider.label}'s discovery document has no {key}")
        with self._lock:
            self._metadata[provider.name] = _Cached(found, self._clock())
        return found

    def keys(self, provider: SsoProvider, *, fresh: bool = False) -> KeySet:
        cached = self._keys.get(provider.name)
        if not fresh and cached is not None and self._clock() - cached.fetched_at < CACHE_S:
            keys: KeySet = cached.value
            return keys
        found = self._get_json(self.metadata(provider)["jwks_uri"], provider)
        try:
            keys = KeySet.import_key_set(found)  # type: ignore[arg-type]
        except Exception as error:  # joserfc raises several kinds for a malformed set
            raise FetchError(f"{provider.label}'s signing keys cannot be read: {error}") from None
        with self._lock:
            self._keys[provider.name] = _Cached(keys, self._clock())
        return keys

    def _get_json(self, url: str, provider: SsoProvider) -> dict[str, Any]:
        try:
            with self._http() as http:
                response = http.get(url, headers={"Accept": "application/json"})
                response.raise_for_status()
                data = response.json()
        except (httpx.HTTPError, ValueError) as error:
            raise FetchError(f"cannot reach {provider.label} at {url}: {error}") from None
        if not isinstance(data, dict):
            raise FetchError(f"{provider.label} answered {url} with something other than JSON")
        return data
