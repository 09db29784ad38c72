"""People of a live server: invited, accepting with a password, signed in with a cookie and a
CSRF token as a browser tab is."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import httpx

from tests.support.live_server import LiveServer

PASSWORD = "correct horse battery"


def invite(server: LiveServer, name: str, **body: object) -> dict[str, object]:
    with server.client() as admin:
        made = admin.post("/invites", json={"name": name, **body})
    assert made.status_code == 201, made.text
    answer: dict[str, object] = made.json()
    return answer


@contextmanager
def browser(server: LiveServer) -> Iterator[httpx.Client]:
    """A client that keeps cookies, as a browser tab would; no token."""
    with server.client("") as client:
        yield client


def signed_in(client: httpx.Client, response: httpx.Response) -> httpx.Client:
    """Use the session a sign-in answered with: writes carry its CSRF token."""
    assert response.status_code == 200, response.text
    client.headers["X-CSRF-Token"] = response.json()["csrf_token"]
    return client


def member(server: LiveServer, name: str) -> str:
    """A person who accepted an invite; returns nothing but leaves them with PASSWORD."""
    secret = str(invite(server, name)["secret"])
    with browser(server) as tab:
        assert tab.post("/invites/accept", json={"secret": secret, "password": PASSWORD}).is_success
    return name
