"""What a read-only token may do, over real HTTP: it reads — searches, asks (keeping the question
and answer in its user's conversation), reads conversations — and every other change to stored
state is a 403 that changes nothing, renaming or deleting a conversation and rating an answer
included. The routes come from `openapi.json`: a new route that writes fails here until it is
classified.
"""

from __future__ import annotations

import json

import pytest

from tests.support.access import ATTEMPTS, NO_ID_REQUESTS, Home, home, home_snapshot
from tests.support.asking import ask_for_conversation
from tests.support.paths import REPO

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md
__all__ = ["home"]  # the read-only world (tests/support/access.py): pytest finds the fixture here


# Operations a read token may call although they are not GETs: they read and answer.
READS = {
    "search_brain", "search_all", "ask", "answer", "make_quiz", "make_flashcards", "query_graph",
}  # fmt: skip
# Operations that take no token (sign-in, invites, signed integrations): nothing to narrow.
TOKENLESS = {"sign_in", "sign_out", "check_invite", "accept_invite", "slack_events"}


def _writes() -> list[tuple[str, str, str]]:
    schema = json.loads((REPO / "openapi.json").read_text())
    return [
        (method.upper(), path, op["operationId"])
        for path, methods in schema["paths"].items()
        for method, op in methods.items()
        if method != "get" and op["operationId"] not in READS | TOKENLESS
    ]


@pytest.mark.parametrize("kind", ["made", "oauth"])
def test_every_write_is_refused_to_a_read_token_and_changes_nothing(home: Home, kind: str) -> None:
    """A read token made by its user, and one an application got by OAuth."""
    writes = _writes()
    assert len(writes) >= 40  # the schema was read
    before = home_snapshot(home)
    refused = []
    with home.client(home.read if kind == "made" else home.oauth_read) as api:
        for method, path, operation in writes:
            if operation in ATTEMPTS:
                request = ATTEMPTS[operation].request(home.ids)
            else:
                assert operation in NO_ID_REQUESTS, (
                    f"{method} {path} ({operation}) writes: add how a read token would call it"
                    " to NO_ID_REQUESTS, or to READS if it only reads"
                )
                request = NO_ID_REQUESTS[operation]
            url = path.removeprefix("/api/v1").format(**home.ids)
            response = api.request(method, url, **request)
            if response.status_code != 403:
                refused.append(f"{method} {url} ({operation}): {response.status_code}")
    assert refused == [], "a read-only token was not refused"
    assert home_snapshot(home) == before


def test_a_read_token_reads_asks_and_keeps_its_conversation(home: Home) -> None:
    with home.client(home.read) as api:
        found = api.post("/brains/mine/search", json={"query": "boiler pressure"})
        assert found.status_code == 200
        assert found.json()["hits"], "the note is not found"
        assert api.post("/search", json={"query": "boiler pressure"}).status_code == 200
        assert api.get(f"/brains/mine/notes/{home.ids['document_id']}").status_code == 200

        asked = ask_for_conversation(api, "mine", "how many bar?")
        listed = api.get("/brains/mine/conversations")
        assert listed.status_code == 200
        assert asked in [c["id"] for c in listed.json()]
        kept = api.get(f"/brains/mine/conversations/{asked}")
        assert kept.status_code == 200
        assert kept.json()["messages"][0]["content"] == "how many bar?"

        renamed = api.patch(f"/brains/mine/conversations/{asked}", json={"title": "mine now"})
        assert renamed.status_code == 403
        assert "read-only" in renamed.json()["message"]
