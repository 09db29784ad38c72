"""What a read-only token may do, over real HTTP: it reads — searches, asks (keeping the question
and answer in its user's conversation), reads conversations — and every other change to stored
state is a 403 that changes nothing, renaming or deleting a conversation and rating an answer
included. The routes come from `openapi.json`: a new route that writes fails here until it is
classified.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from loci.embed.base import Embedder
from tests.support.live_server import LiveServer
from tests.support.oauth_flow import App, Browser
from tests.support.services import make_service
from tests.test_api_isolation import ATTEMPTS, ROOT, _ask

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

# Operations a read token may call although they are not GETs: they read and answer.
READS = {
    "search_brain", "search_all", "ask", "answer", "make_quiz", "make_flashcards", "query_graph",
}  # fmt: skip
# Operations that take no token (sign-in, invites, signed integrations): nothing to narrow.
TOKENLESS = {"sign_in", "sign_out", "check_invite", "accept_invite", "slack_events"}
# Bodies for the writes that take no id (those that do are in the isolation matrix).
NO_ID_REQUESTS: dict[str, dict[str, Any]] = {
    "change_password": {"json": {"new_password": "a long enough passphrase 42"}},
    "set_my_model": {"json": {"base_url": "http://127.0.0.1:9/v1", "model": "m", "api_key": "k"}},
    "forget_my_model": {},
    "create_token": {"json": {"name": "another"}},
    "create_user": {"json": {"name": "mallory"}},
    "create_invite": {"json": {"name": "dave"}},
    "create_brain": {"json": {"name": "more"}},
    "answer_consent": {  # approving an OAuth application mints a token: a session's act
        "json": {
            "response_type": "code",
            "client_id": "locic_x",
            "redirect_uri": "http://127.0.0.1:9/cb",
            "approve": True,
        }
    },
}
PAGE = "boiler-notes"


@dataclass
class Home:
    server: LiveServer
    write: str
    read: str
    ids: dict[str, Any]
    oauth_read: str = ""  # a read token an application got by OAuth, for the whole server

    def client(self, token: str) -> httpx.Client:
        return self.server.client(token)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Iterator[Home]:
    loci = make_service(tmp_path_factory.mktemp("read-only") / "home", embedder, None)
    server = LiveServer(loci).start()
    try:
        user, issued = server.accounts.add_user("alice", is_admin=True)
        read = server.accounts.issue_token(user, name="gpt", scope="read").secret
        with server.client(issued.secret) as api:
            assert api.post("/brains", json={"name": "mine"}).status_code == 201
            note = api.post(
                "/brains/mine/notes",
                json={"title": "boiler", "text": "The boiler pressure should be 1.5 bar."},
            )
            assert note.status_code == 201, note.text
            page = api.post(
                "/brains/mine/graph/documents",
                json={"type": "concept", "title": "Boiler notes", "id": PAGE},
            )
            assert page.status_code == 201, page.text
            note_id = note.json()["document"]["id"]
            rewritten = api.put(  # its first text becomes version 1, which a restore would bring
                f"/brains/mine/notes/{note_id}",
                json={
                    "title": "boiler",
                    "text": "The boiler pressure should be 1.2 bar.",
                    "expected_hash": note.json()["document"]["content_hash"],
                },
            )
            assert rewritten.status_code == 200, rewritten.text
            folder = tmp_path_factory.mktemp("followed")
            source = loci.sources.add(loci.store.get_brain("mine"), folder)
            for doc_id in (note.json()["document"]["id"], page.json()["document_id"]):
                assert server.wait_ready(api, "mine", doc_id)["status"] == "ready"
            conversation_id = _ask(api, "mine", "what should the boiler pressure be?")
            messages = api.get(f"/brains/mine/conversations/{conversation_id}").json()["messages"]
            ids = {
                "brain": "mine",
                "document_id": note_id,
                "conversation_id": conversation_id,
                "message_id": messages[-1]["id"],
                "user": "alice",
                "token_id": issued.token.id,
                "note_hash": api.get(f"/brains/mine/notes/{note_id}").json()["document"][
                    "content_hash"
                ],
                "doc_id": PAGE,
                "graph_hash": api.get(f"/brains/mine/graph/documents/{PAGE}").json()["document"][
                    "content_hash"
                ],
                "provider": "jamie",
                "source_id": source.id,
                "version": 1,
            }
        browser = Browser(server, "alice")
        app = App(server)
        tokens = app.connect(browser, access="read", url=app.authorize_url(resource=server.url))
        browser.close()
        yield Home(server, issued.secret, read, ids, tokens["access_token"])
    finally:
        server.stop()
        loci.store.close()


def _writes() -> list[tuple[str, str, str]]:
    schema = json.loads((ROOT / "openapi.json").read_text())
    return [
        (method.upper(), path, op["operationId"])
        for path, methods in schema["paths"].items()
        for method, op in methods.items()
        if method != "get" and op["operationId"] not in READS | TOKENLESS
    ]


def _snapshot(home: Home) -> dict[str, Any]:
    with home.client(home.write) as api:
        brain = "/brains/mine"
        return {
            "brains": api.get("/brains").json(),
            "members": api.get(f"{brain}/members").json(),
            "files": api.get(f"{brain}/files").json(),
            "note": api.get(f"{brain}/notes/{home.ids['document_id']}").json(),
            "versions": api.get(f"{brain}/files/{home.ids['document_id']}/versions").json(),
            "graph": api.get(f"{brain}/graph/documents/{PAGE}").json(),
            "sources": api.get(f"{brain}/folders").json(),
            "conversation": api.get(f"{brain}/conversations/{home.ids['conversation_id']}").json(),
            "tokens": [
                {k: v for k, v in t.items() if k != "last_used_at"}
                for t in api.get("/tokens").json()
            ],
            "users": api.get("/users").json(),
        }


@pytest.mark.parametrize("kind", ["made", "oauth"])
def test_every_write_is_refused_to_a_read_token_and_changes_nothing(home: Home, kind: str) -> None:
    """A read token made by its user, and one an application got by OAuth."""
    writes = _writes()
    assert len(writes) >= 40  # the schema was read
    before = _snapshot(home)
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
    assert _snapshot(home) == before


def test_a_read_token_reads_asks_and_keeps_its_conversation(home: Home) -> None:
    with home.client(home.read) as api:
        found = api.post("/brains/mine/search", json={"query": "boiler pressure"})
        assert found.status_code == 200
        assert found.json()["hits"], "the note is not found"
        assert api.post("/search", json={"query": "boiler pressure"}).status_code == 200
        assert api.get(f"/brains/mine/notes/{home.ids['document_id']}").status_code == 200

        asked = _ask(api, "mine", "how many bar?")
        listed = api.get("/brains/mine/conversations")
        assert listed.status_code == 200
        assert asked in [c["id"] for c in listed.json()]
        kept = api.get(f"/brains/mine/conversations/{asked}")
        assert kept.status_code == 200
        assert kept.json()["messages"][0]["content"] == "how many bar?"

        renamed = api.patch(f"/brains/mine/conversations/{asked}", json={"title": "mine now"})
        assert renamed.status_code == 403
        assert "read-only" in renamed.json()["message"]
