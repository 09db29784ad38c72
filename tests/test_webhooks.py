"""Signed webhooks over real HTTP: a provider pushes items to a brain's source route signed with
a per-integration secret (made with the real `loci webhooks` command) instead of a token."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from collections.abc import Callable
from pathlib import Path
from subprocess import CompletedProcess
from typing import Any

import httpx
import pytest

from loci.service import Loci
from loci.store.postgres import PostgresStore
from loci.store.sqlite import SqliteStore
from tests.support.cli import run_cli
from tests.support.live_server import LiveServer

MEETING: dict[str, Any] = {
    "id": "rec-42",
    "type": "meeting",
    "title": "Quokka census planning",
    "date": "2026-03-04",
    "attendees": ["Ana López", "Bob Stone"],
    "text": "Ana: the census starts on Thursday.\nBob: I will bring the counters.",
}
ROUTE = "/brains/notes/sources/jamie"
pytestmark = pytest.mark.both_backends


def sign(secret: str, body: bytes, at: float | None = None) -> str:
    """The header a provider sends: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">."""
    stamp = int(time.time() if at is None else at)
    digest = hmac.new(secret.encode(), f"{stamp}.".encode() + body, hashlib.sha256).hexdigest()
    return f"t={stamp},v1={digest}"


def push(
    server: LiveServer, body: bytes, signature: str | None, route: str = ROUTE, token: str = ""
) -> httpx.Response:
    headers = {"Content-Type": "application/json"}
    if signature is not None:
        headers["X-Loci-Signature"] = signature
    with server.client(token) as api:
        return api.post(route, content=body, headers=headers)


def items(server: LiveServer) -> list[dict[str, Any]]:
    with server.client() as api:
        found: list[dict[str, Any]] = api.get("/brains/notes/files").json()
    return [d for d in found if d["kind"] == "item"]


@pytest.fixture
def cli(tmp_path: Path, database_url: str | None) -> Callable[..., CompletedProcess[str]]:
    """The `loci` command on the server's data directory (its key) and database."""
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    return lambda *args: run_cli(*args, home=tmp_path / "home", env=env)


@pytest.fixture
def secret(server: LiveServer, cli: Callable[..., CompletedProcess[str]]) -> str:
    """A webhook secret for brain notes and provider jamie, made by the CLI."""
    with server.client() as api:
        assert api.post("/brains", json={"name": "notes"}).status_code == 201
    made = cli("webhooks", "create", "--brain", "notes", "--provider", "jamie")
    assert made.returncode == 0, made.stderr
    assert "shown once" in made.stderr
    value = made.stdout.strip()
    assert value.startswith("whsec_") and len(value) > 40
    return value


def test_a_signed_push_is_saved_and_a_redelivery_is_one_item(
    server: LiveServer, secret: str
) -> None:
    body = json.dumps(MEETING).encode()
    first = push(server, body, sign(secret, body))
    assert first.status_code == 201, first.text
    assert first.json()["deduped"] is False
    assert first.json()["evidence"]["folder"].startswith("evidence")
    again = push(server, body, sign(secret, body, at=time.time() + 2))  # re-signed retry
    assert again.status_code == 201 and again.json()["deduped"] is True
    assert len(items(server)) == 1
    with server.client() as api:
        evidence = first.json()["evidence"]["id"]
        history = api.get(f"/brains/notes/graph/documents/{evidence}")
        assert history.status_code == 200
        assert "the census starts on Thursday" in history.json()["content"]


def test_unsigned_stale_and_wrong_signatures_are_401_and_save_nothing(
    server: LiveServer, secret: str
) -> None:
    body = json.dumps(MEETING).encode()
    refused = {
        "unsigned": push(server, body, None),
        "stale": push(server, body, sign(secret, body, at=time.time() - 301)),
        "from the future": push(server, body, sign(secret, body, at=time.time() + 400)),
        "wrong secret": push(server, body, sign("whsec_guessed", body)),
        "tampered": push(server, body.replace(b"Thursday", b"Friday"), sign(secret, body)),
        "malformed": push(server, body, "v1=" + "0" * 64),
        "other provider": push(server, body, sign(secret, body), route="/brains/notes/sources/x"),
        "other brain": push(server, body, sign(secret, body), route="/brains/nope/sources/jamie"),
        # a valid token does not rescue a bad signature: the signature decides
        "bad signature with a token": push(
            server, body, sign("whsec_guessed", body), token=server.owner_token
        ),
    }
    for case, response in refused.items():
        assert response.status_code == 401, f"{case}: {response.status_code} {response.text}"
        assert response.json()["error"] == "unauthenticated", case
    assert items(server) == []
    # the token path still works unsigned
    with_token = push(server, body, None, token=server.owner_token)
    assert with_token.status_code == 201, with_token.text


def test_secrets_are_listed_by_prefix_stored_sealed_and_revocable(
    server: LiveServer, loci: Loci, secret: str, cli: Callable[..., CompletedProcess[str]]
) -> None:
    listing = cli("webhooks", "list", "--json")
    assert listing.returncode == 0, listing.stderr
    assert secret not in listing.stdout
    [record] = json.loads(listing.stdout)
    assert (record["brain_name"], record["provider"]) == ("notes", "jamie")
    assert secret.startswith(record["prefix"])
    if isinstance(loci.store, SqliteStore):
        for path in loci.store.db.path.parent.glob("loci.db*"):  # the database and its WAL
            assert secret.encode() not in path.read_bytes()
    else:  # every column of every row, as text
        assert isinstance(loci.store, PostgresStore)
        rows = loci.store.db.rows("SELECT w::text AS row FROM webhook_secrets w")
        assert len(rows) == 1 and record["prefix"] in rows[0]["row"]
        assert secret not in rows[0]["row"]

    revoked = cli("webhooks", "revoke", str(record["id"]))
    assert revoked.returncode == 0, revoked.stderr
    body = json.dumps(MEETING).encode()
    assert push(server, body, sign(secret, body)).status_code == 401
    assert items(server) == []
