"""docs/security.md's table "Who may do what", checked against the server: every operation of
`openapi.json` is in exactly one row, and each credential is refused (403, changing nothing)
where its column says no, allowed where it says yes (for the operations that only read: the
others would change the world the rest of the table is checked in), and sees or revokes only
itself where it says *itself*. Over real HTTP, with real tokens, an OAuth grant and a web
session signed in with a password.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from tests.support.access import ATTEMPTS, NO_ID_REQUESTS, Home, home, home_snapshot
from tests.support.oauth_flow import App, Browser
from tests.support.paths import REPO

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md
__all__ = ["home"]  # the read-only suite's world, shared: pytest finds the fixture here


COLUMNS = ("read-only token", "token for some brains", "application", "web session")
CELLS = {"yes", "no", "itself", "every brain", "—"}
# Requests for the operations that read and take no id (the rest come from the other suites).
READ_REQUESTS: dict[str, dict[str, Any]] = {
    "search_all": {"json": {"query": "boiler pressure"}},
    "consent_request": {
        "params": {
            "response_type": "code",
            "client_id": "locic_x",
            "redirect_uri": "http://127.0.0.1:9/cb",
        }
    },
}


@dataclass(frozen=True)
class Row:
    what: str
    operations: tuple[str, ...]
    cells: dict[str, str]  # column -> cell


def table() -> list[Row]:
    text = (REPO / "docs" / "security.md").read_text()
    found = re.search(r"<!-- access table[^>]*-->\n(.*?)<!-- end of access table -->", text, re.S)
    assert found, "docs/security.md has lost its access table"
    lines = [line for line in found.group(1).splitlines() if line.startswith("|")]
    header = [c.strip() for c in lines[0].strip("|").split("|")]
    assert header == ["what", "operations", *COLUMNS]
    rows = []
    for line in lines[2:]:
        what, operations, *cells = (c.strip() for c in line.strip("|").split("|"))
        assert set(cells) <= CELLS, f"{what}: cells are {', '.join(sorted(CELLS))}"
        placed = tuple(re.findall(r"`(\w+)`", operations))
        rows.append(Row(what, placed, dict(zip(COLUMNS, cells, strict=True))))
    return rows


def operations() -> dict[str, tuple[str, str]]:
    """operationId -> (method, path under /api/v1), from the committed schema."""
    schema = json.loads((REPO / "openapi.json").read_text())
    return {
        op["operationId"]: (method.upper(), path.removeprefix("/api/v1"))
        for path, methods in schema["paths"].items()
        for method, op in methods.items()
    }


def test_every_operation_is_in_exactly_one_row() -> None:
    placed = [op for row in table() for op in row.operations]
    twice = sorted({op for op in placed if placed.count(op) > 1})
    assert twice == [], f"in more than one row: {twice}"
    assert sorted(set(operations()) - set(placed)) == [], "operations the table does not place"
    assert sorted(set(placed) - set(operations())) == [], "the table names unknown operations"


@dataclass
class Credentials:
    home: Home
    clients: dict[str, httpx.Client]  # column -> a client calling as that credential
    secrets: dict[str, str]  # column -> its token (the session's has none to give)
    own_token_ids: dict[str, int]

    def request(self, column: str, operation: str) -> httpx.Response:
        method, path = operations()[operation]
        if operation == "sign_in":  # the token travels in the body, to become a cookie
            request: dict[str, Any] = {"json": {"token": self.secrets[column]}}
        elif operation in ATTEMPTS:
            request = ATTEMPTS[operation].request(self.home.ids)
        else:
            request = READ_REQUESTS.get(operation) or NO_ID_REQUESTS.get(operation, {})
        return self.clients[column].request(method, path.format(**self.home.ids), **request)


@pytest.fixture(scope="module")
def credentials(home: Home) -> Iterator[Credentials]:
    """Alice (an admin, owner of brain `mine`) through each column's credential."""
    server = home.server
    alice = server.accounts.user("alice")
    limited = server.accounts.issue_token(
        alice, name="one brain", brain_ids=[server.loci.store.get_brain("mine").id]
    )
    browser = Browser(server, "alice")
    app = App(server)
    url = app.authorize_url(resource=server.url)
    granted = app.connect(browser, url=url, access="write", brains=["mine"])["access_token"]
    session = httpx.Client(
        base_url=server.url + "/api/v1", cookies=browser.http.cookies, timeout=60
    )
    session.headers["X-CSRF-Token"] = browser.http.headers["X-CSRF-Token"]
    clients = {
        "read-only token": home.client(home.read),
        "token for some brains": home.client(limited.secret),
        "application": home.client(granted),
        "web session": session,
    }
    secrets = {
        "read-only token": home.read,
        "token for some brains": limited.secret,
        "application": granted,
    }
    own = {column: c.get("/me").json()["token"]["id"] for column, c in clients.items()}
    try:
        yield Credentials(home, clients, secrets, own)
    finally:
        for client in clients.values():
            client.close()
        browser.close()


def _cells(value: str) -> list[tuple[str, str, str]]:
    return [
        (column, op, row.what)
        for row in table()
        for op in row.operations
        for column, cell in row.cells.items()
        if cell == value
    ]


def test_what_a_credential_may_not_do_is_refused_and_changes_nothing(
    credentials: Credentials,
) -> None:
    refused = _cells("no") + _cells("every brain")  # the grant and token reach one brain
    assert len(refused) > 60  # the table was read
    before = home_snapshot(credentials.home)
    wrong = []
    for column, operation, what in refused:
        response = credentials.request(column, operation)
        if response.status_code != 403:
            wrong.append(f"{column} {operation} ({what}): {response.status_code}")
    assert wrong == [], "allowed, where the table says no"
    assert home_snapshot(credentials.home) == before


def test_what_a_credential_may_read_it_reads(credentials: Credentials) -> None:
    allowed = [
        (column, operation)
        for column, operation, _ in _cells("yes")
        if operations()[operation][0] == "GET"
    ]
    assert len(allowed) > 100
    wrong = []
    for column, operation in allowed:
        response = credentials.request(column, operation)
        if response.status_code in (401, 403):
            wrong.append(f"{column} {operation}: {response.status_code} {response.text[:120]}")
    assert wrong == [], "refused, where the table says yes"


def test_a_credential_limited_to_itself_sees_and_revokes_only_itself(
    credentials: Credentials,
) -> None:
    others = credentials.home.ids["token_id"]  # Alice's sign-in token
    itself = {(column, op) for column, op, _ in _cells("itself")}
    assert {op for _, op in itself} == {"list_tokens", "revoke_token"}
    for column in {column for column, _ in itself}:
        client = credentials.clients[column]
        listed = [t["id"] for t in client.get("/tokens").json()]
        assert listed == [credentials.own_token_ids[column]], column
        assert client.delete(f"/tokens/{others}").status_code == 403, column
    with credentials.home.client(credentials.home.write) as alice:
        assert alice.get("/me").status_code == 200
