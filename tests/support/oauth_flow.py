"""OAuth as an application and a person do it, over real HTTP against a `LiveServer`.

`Browser` is a person's browser signed in to Loci (a session cookie and its CSRF token): it
opens the authorization URL and answers the consent page the way the page's script does (the
same API calls). `App` is an application: it registers, builds a PKCE authorization request
and exchanges codes at the token endpoint.
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx

from loci.auth.people import People
from tests.support.live_server import LiveServer

PASSWORD = "correct horse battery staple"
REDIRECT = "http://127.0.0.1:8976/callback"


def pkce() -> tuple[str, str]:
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def query_of(url: str) -> dict[str, str]:
    return {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}


class Browser:
    def __init__(
        self,
        server: LiveServer,
        name: str,
        password: str = PASSWORD,
        http: httpx.Client | None = None,
    ) -> None:
        """Signed in as `name` with a password — or, given `http`, a browser signed in already
        (by single sign-on)."""
        if http is not None:
            self.http = http
            csrf = http.get("/api/v1/me").json()["csrf_token"]
        else:
            People(server.accounts).set_password(name, password)
            self.http = httpx.Client(base_url=server.url, timeout=30)
            signed_in = self.http.post("/api/v1/session", json={"name": name, "password": password})
            assert signed_in.status_code == 200, signed_in.text
            csrf = signed_in.json()["csrf_token"]
        self.http.headers["X-CSRF-Token"] = csrf

    def consent(self, url: str) -> httpx.Response:
        """What the consent page learns of the request at `url` (the authorization URL)."""
        page = self.http.get(url)
        assert page.status_code == 200 and "consent.js" in page.text, page.text[:300]
        return self.http.get("/api/v1/oauth/consent", params=query_of(url))

    def answer(
        self,
        url: str,
        *,
        approve: bool = True,
        access: str = "write",
        brains: list[str] | None = None,
    ) -> httpx.Response:
        body = {**query_of(url), "approve": approve, "access": access, "brains": brains}
        return self.http.post("/api/v1/oauth/consent", json=body)

    def approve(self, url: str, **kwargs: Any) -> dict[str, str]:
        """Approve and follow the answer: the parameters the application's redirect URI gets."""
        assert self.consent(url).status_code == 200
        answered = self.answer(url, **kwargs)
        assert answered.status_code == 200, answered.text
        return query_of(answered.json()["redirect"])

    def close(self) -> None:
        self.http.close()


@dataclass
class App:
    server: LiveServer
    name: str = "Test assistant"
    redirect_uri: str = REDIRECT
    auth_method: str = "none"
    client_id: str = field(init=False)
    client_secret: str | None = field(init=False, default=None)
    verifier: str = field(init=False, default="")

    def __post_init__(self) -> None:
        registered = httpx.post(
            self.server.url + "/oauth/register",
            json={
                "client_name": self.name,
                "redirect_uris": [self.redirect_uri],
                "grant_types": ["authorization_code", "refresh_token"],
                "token_endpoint_auth_method": self.auth_method,
            },
        )
        assert registered.status_code == 201, registered.text
        self.client_id = registered.json()["client_id"]
        self.client_secret = registered.json().get("client_secret")

    def authorize_url(self, **overrides: str | None) -> str:
        self.verifier, challenge = pkce()
        params: dict[str, str | None] = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": self.redirect_uri,
            "state": "s-" + secrets.token_urlsafe(8),
            "code_challenge": challenge,
            "code_challenge_method": "S256",
            "scope": "read write",
            "resource": self.server.url + "/mcp",
            **overrides,
        }
        kept = {k: v for k, v in params.items() if v is not None}
        return self.server.url + "/oauth/authorize?" + urlencode(kept)

    def post(self, path: str, data: dict[str, str]) -> httpx.Response:
        if self.client_secret:
            data = {**data, "client_id": self.client_id, "client_secret": self.client_secret}
        else:
            data = {**data, "client_id": self.client_id}
        return httpx.post(self.server.url + path, data=data)

    def exchange(self, code: str, **overrides: str) -> httpx.Response:
        data = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": self.redirect_uri,
            "code_verifier": self.verifier,
            **overrides,
        }
        return self.post("/oauth/token", {k: v for k, v in data.items() if v is not None})

    def refresh(self, refresh_token: str) -> httpx.Response:
        return self.post(
            "/oauth/token", {"grant_type": "refresh_token", "refresh_token": refresh_token}
        )

    def revoke(self, token: str) -> httpx.Response:
        return self.post("/oauth/revoke", {"token": token})

    def connect(self, browser: Browser, url: str | None = None, **approval: Any) -> dict[str, Any]:
        """The whole flow: authorize (at `url`, or for /mcp), approve, exchange; the token
        response."""
        url = url or self.authorize_url()
        answer = browser.approve(url, **approval)
        exchanged = self.exchange(answer["code"])
        assert exchanged.status_code == 200, exchanged.text
        tokens: dict[str, Any] = exchanged.json()
        return tokens
