"""Who may reach what, over real HTTP: how a stranger calls every operation that takes an id
(the isolation matrix), bodies for the writes that take none, and the read-only suite's world
(a server where Alice, an admin, has a brain with a note, a graph page, a followed folder and
a conversation, and read tokens)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal

import httpx
import pytest

from loci.embed.base import Embedder
from tests.support.asking import ask_for_conversation
from tests.support.live_server import LiveServer
from tests.support.oauth_flow import App, Browser
from tests.support.services import make_service

SECRET_WORD = "zephyrine"  # only in Alice's private brain

Ids = dict[str, Any]


@dataclass(frozen=True)
class Attempt:
    """How Bob calls one operation: what it needs of the brain, and a valid request (so that
    validation cannot answer before access does), given the ids being tried."""

    needs: Literal["read", "own", "write"]  # own: the caller's own things, by a write token
    request: Callable[[Ids], dict[str, Any]] = lambda ids: {}
    body_id: bool = False  # the body carries an id of Alice's too
    admin: bool = False  # admins only: 403 to anyone else, whatever the id (names are public)


PLANTED_BOOKMARKS = (
    b'<!DOCTYPE NETSCAPE-Bookmark-file-1>\n<DL><p>\n<DT><A HREF="http://127.0.0.1:9/planted"'
    b' ADD_DATE="1700000000">planted by bob</A>\n</DL><p>\n'
)
NOTE_BODY = {"text": "overwritten by bob", "title": "mine"}

ATTEMPTS: dict[str, Attempt] = {
    "revoke_token": Attempt("write"),
    "update_user": Attempt("write", lambda ids: {"json": {"disabled": True}}, admin=True),
    "remove_user": Attempt("write", admin=True),
    "get_brain": Attempt("read"),
    "update_brain": Attempt(
        "write", lambda ids: {"json": {"name": "bobs-now", "visibility": "workspace"}}
    ),
    "delete_brain": Attempt("write"),
    "list_members": Attempt("read"),
    "set_member": Attempt("write", lambda ids: {"json": {"role": "owner"}}),
    "remove_member": Attempt("write"),
    "brain_status": Attempt("read"),
    "list_jobs": Attempt("read"),
    "brain_digest": Attempt("read", lambda ids: {"params": {"since": "30d"}}),
    "upload_files": Attempt(
        "write", lambda ids: {"files": {"files": ("x.md", b"# planted by bob\n", "text/markdown")}}
    ),
    "import_export": Attempt(
        "write",
        lambda ids: {
            "data": {"kind": "bookmarks"},
            "files": {"file": ("bookmarks.html", PLANTED_BOOKMARKS, "text/html")},
        },
    ),
    "list_files": Attempt("read"),
    "add_url": Attempt("write", lambda ids: {"json": {"url": "http://127.0.0.1:9/planted"}}),
    "share_to_brain": Attempt("write", lambda ids: {"json": {"text": "planted by bob"}}),
    "preflight_files": Attempt(  # a dry run of a write: it would tell Bob what Alice has
        "write", lambda ids: {"files": {"files": ("x.md", b"# probe\n", "text/markdown")}}
    ),
    "preflight_urls": Attempt("write", lambda ids: {"json": {"urls": ["http://127.0.0.1:9/x"]}}),
    "get_file": Attempt("read"),
    "delete_file": Attempt("write"),
    "download_file": Attempt("read"),
    "file_text": Attempt("read"),
    "file_chunks": Attempt("read"),
    "related_files": Attempt("read"),
    # her note's first text, kept when she rewrote it: listing, reading and diffing read it,
    # restoring would overwrite her current note
    "list_versions": Attempt("read"),
    "diff_versions": Attempt("read", lambda ids: {"params": {"old": 1}}),
    "download_version": Attempt("read"),
    "restore_version": Attempt("write"),
    "file_page": Attempt("read", lambda ids: {"params": {"number": 1}}),
    "file_passage": Attempt("read"),
    "reprocess_file": Attempt("write"),
    "create_note": Attempt("write", lambda ids: {"json": NOTE_BODY}),
    "list_notes": Attempt("read"),
    "get_note": Attempt("read"),
    "update_note": Attempt(  # with the note's real hash: the overwrite would succeed if allowed
        "write", lambda ids: {"json": {**NOTE_BODY, "expected_hash": ids["note_hash"]}}
    ),
    "delete_note": Attempt("write"),
    "search_brain": Attempt("read", lambda ids: {"json": {"query": SECRET_WORD}}),
    "ask": Attempt(  # asking reads; continuing her conversation would read her history
        "read",
        lambda ids: {"json": {"question": "what next?", "conversation_id": ids["conversation_id"]}},
        body_id=True,
    ),
    "answer": Attempt(  # as ask, in one JSON reply
        "read",
        lambda ids: {"json": {"question": "what next?", "conversation_id": ids["conversation_id"]}},
        body_id=True,
    ),
    "make_quiz": Attempt("read", lambda ids: {"json": {"topic": SECRET_WORD, "count": 2}}),
    "make_flashcards": Attempt("read", lambda ids: {"json": {"topic": SECRET_WORD, "count": 2}}),
    "list_conversations": Attempt("read"),
    "get_conversation": Attempt("read"),
    "rename_conversation": Attempt("own", lambda ids: {"json": {"title": "bob was here"}}),
    "delete_conversation": Attempt("own"),
    "save_answer": Attempt("write"),  # keeping her answer would copy it into a brain
    "rate_answer": Attempt(  # rating reads no more than asking: her answer is still not his
        "own", lambda ids: {"json": {"rating": "down", "reason": "bob was here"}}
    ),
    "list_graph_documents": Attempt("read"),
    "get_graph_document": Attempt("read"),
    "graph_document_history": Attempt("read"),
    "graph_timeline": Attempt("read", lambda ids: {"params": {"doc_id": ids["doc_id"]}}),
    "graph_folders": Attempt("read"),
    "graph_edges": Attempt("read"),
    "graph_doctor": Attempt("read"),
    "query_graph": Attempt("read", lambda ids: {"json": {"query": SECRET_WORD}}),
    "create_graph_document": Attempt(
        "write", lambda ids: {"json": {"type": "person", "title": "Planted by bob"}}
    ),
    "rewrite_graph_document": Attempt(  # with the page's real hash, as for notes
        "write",
        lambda ids: {"json": {"truth": "overwritten by bob", "expected_hash": ids["graph_hash"]}},
    ),
    "set_graph_fields": Attempt("write", lambda ids: {"json": {"fields": {"status": "archived"}}}),
    "append_graph_timeline": Attempt("write", lambda ids: {"json": {"text": "bob was here"}}),
    "append_graph_evidence": Attempt(
        "write", lambda ids: {"json": {"text": "planted by bob", "title": "planted"}}
    ),
    "alias_graph_document": Attempt("write", lambda ids: {"json": {"alias": "bob's page"}}),
    "link_graph_document": Attempt(
        "write", lambda ids: {"json": {"relation": "knows", "target": ids["doc_id"]}}
    ),
    "merge_graph_document": Attempt("write", lambda ids: {"json": {"into": "bobs-page"}}),
    "move_graph_document": Attempt("write", lambda ids: {"json": {"folder": "archive"}}),
    "delete_graph_document": Attempt("write", lambda ids: {"params": {"confirm": "true"}}),
    "capture": Attempt("write", lambda ids: {"json": {"text": "planted by bob"}}),
    "list_folders": Attempt("read"),
    # admins only, but the brain is resolved first: Alice's is a 404 to Bob like any write
    "add_folder": Attempt("write", lambda ids: {"json": {"path": "/"}}),
    "remove_folder": Attempt("write"),
    "sync_folders": Attempt("write"),
    # admins only, and on the allowed hosts only (none here): refused before anything is fetched
    "follow": Attempt("write", lambda ids: {"json": {"url": "https://example.org/feed.xml"}}),
    "sync_followed": Attempt("write"),
    "resolve_conflict": Attempt("write", lambda ids: {"json": {"path": "a.md", "keep": "file"}}),
    "ingest_source_item": Attempt(
        "write", lambda ids: {"json": {"id": "planted-1", "text": "planted by bob"}}
    ),
}

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
            conversation_id = ask_for_conversation(
                api, "mine", "what should the boiler pressure be?"
            )
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


def home_snapshot(home: Home) -> dict[str, Any]:
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
