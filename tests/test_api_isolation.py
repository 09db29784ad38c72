"""Two users on one server: what one of them can reach of the other's brains, over real HTTP.

Alice owns a restricted brain with a file, a note, their chunks and a graph page. Bob is a member
of nothing of hers. With each of his tokens (write, read-only, limited to his own brain) he tries
every route of `openapi.json` that takes an id — a brain name, a document, note or graph document
id, a member's name, a token id — against Alice's objects, and also Alice's ids inside his own
brain. Every attempt must answer exactly what a made-up id answers (404, or 403 where his token
may not write at all or the route is for admins), never a 2xx, and Alice's brain must read the
same afterwards. The route list comes from `openapi.json`, so a new route with an id fails here
until it is added to the matrix.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from loci.embed.base import Embedder
from tests.support.access import ATTEMPTS, NOTE_BODY, SECRET_WORD, Ids
from tests.support.asking import ask_for_conversation
from tests.support.live_server import LiveServer
from tests.support.oauth_flow import App, Browser
from tests.support.paths import REPO
from tests.support.services import BACKENDS, served_world

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

ID_PARAMS = {
    "brain", "document_id", "conversation_id", "message_id", "user", "token_id", "doc_id",
    "provider", "source_id", "version",
}  # fmt: skip
SHARED_WORD = "quokka"  # in Bob's two brains and Alice's workspace brain
NEVER = 987654  # an id nothing has
GRAPH_DOC = "zephyrine-launch"  # Alice's graph page in her private brain


@dataclass
class World:
    server: LiveServer
    alice: str  # tokens (secrets)
    bob: str
    bob_read: str
    bob_limited: str  # write, limited to the brain "bobs"
    carol: str  # a viewer of Alice's "shared" brain
    alice_token_id: int
    file_id: int
    note_id: int
    conversation_id: int
    message_id: int  # Alice's answer in that conversation
    file_bytes: bytes
    bob_brain_ids: dict[str, int]
    source_id: int  # a folder Alice's private brain follows
    bob_oauth: str  # by OAuth, for the whole server: write, limited to "bobs"
    bob_oauth_read: str  # by OAuth, for the whole server: read, every brain of his

    def bob_tokens(self) -> dict[str, str]:
        """Each kind of token Bob holds."""
        return {
            "write": self.bob,
            "read": self.bob_read,
            "limited": self.bob_limited,
            "oauth-limited": self.bob_oauth,
            "oauth-read": self.bob_oauth_read,
        }

    def client(self, token: str) -> httpx.Client:
        return self.server.client(token)


def _upload(api: httpx.Client, brain: str, name: str, data: bytes) -> int:
    response = api.post(f"/brains/{brain}/files", files={"files": (name, data, "text/markdown")})
    assert response.status_code == 202, response.text
    doc_id: int = response.json()["results"][0]["document"]["id"]
    return doc_id


def _note(api: httpx.Client, brain: str, text: str) -> int:
    response = api.post(f"/brains/{brain}/notes", json={"text": text, "title": "note"})
    assert response.status_code == 201, response.text
    doc_id: int = response.json()["document"]["id"]
    return doc_id


@pytest.fixture(scope="module", params=BACKENDS)
def world(
    tmp_path_factory: pytest.TempPathFactory, embedder: Embedder, request: pytest.FixtureRequest
) -> Iterator[World]:
    with served_world(tmp_path_factory, embedder, request, "isolation") as (loci, server):
        accounts = server.accounts
        _, alice = accounts.add_user("alice")
        bob_user, bob = accounts.add_user("bob")
        _, carol = accounts.add_user("carol")
        bob_read = accounts.issue_token(bob_user, name="read", scope="read").secret

        with server.client(alice.secret) as api:
            for name, visibility in (
                ("vault", "restricted"),
                ("shared", "restricted"),
                ("open", "workspace"),
            ):
                created = api.post("/brains", json={"name": name, "visibility": visibility})
                assert created.status_code == 201, created.text
            assert (
                api.put("/brains/shared/members/carol", json={"role": "viewer"}).status_code == 200
            )
            file_bytes = (
                f"# Launch plan\n\nThe {SECRET_WORD} launch happens at dawn from the north pier."
                "\n\n## Budget\n\nFour crates of lamp oil and one spare sail.\n"
            ).encode()
            page = api.post(
                "/brains/vault/graph/documents",
                json={"type": "project", "title": "Zephyrine launch", "text": "At dawn."},
            )
            assert page.status_code == 201 and page.json()["id"] == GRAPH_DOC, page.text
            pending = [
                ("vault", _upload(api, "vault", "plan.md", file_bytes)),
                ("vault", _note(api, "vault", f"Remember the {SECRET_WORD} password hint.")),
                ("shared", _upload(api, "shared", "menu.md", b"# Menu\n\nSoup on Mondays.\n")),
                ("open", _upload(api, "open", "zoo.md", f"# Zoo\n\nA {SHARED_WORD}.\n".encode())),
                ("vault", page.json()["document_id"]),
            ]
        with server.client(bob.secret) as api:
            bob_brain_ids = {}
            for name in ("bobs", "bobs-other"):
                created = api.post("/brains", json={"name": name})
                assert created.status_code == 201, created.text
                bob_brain_ids[name] = created.json()["id"]
                pending.append((name, _note(api, name, f"A {SHARED_WORD} in {name}.")))
        bob_limited = accounts.issue_token(
            bob_user, name="limited", brain_ids=[bob_brain_ids["bobs"]]
        ).secret
        for brain, doc_id in pending:
            token = alice.secret if brain in ("vault", "shared", "open") else bob.secret
            with server.client(token) as api:
                assert server.wait_ready(api, brain, doc_id)["status"] == "ready"

        with server.client(alice.secret) as api:  # her note's first text becomes version 1
            note_path = f"/brains/vault/notes/{pending[1][1]}"
            note = api.get(note_path).json()["document"]
            edited = api.put(
                note_path,
                json={
                    "text": f"Remember the {SECRET_WORD} password hint: the pier.",
                    "title": "note",
                    "expected_hash": note["content_hash"],
                },
            )
            assert edited.status_code == 200, edited.text
            assert server.wait_ready(api, "vault", pending[1][1])["status"] == "ready"
            assert api.get(f"{note_path.replace('notes', 'files')}/versions").json()["versions"]

        folder = tmp_path_factory.mktemp("alices-folder")
        source_id = loci.sources.add(loci.store.get_brain("vault"), folder).id

        browser, app = Browser(server, "bob"), App(server)
        whole = app.authorize_url(resource=server.url)
        bob_oauth = app.connect(browser, whole, access="write", brains=["bobs"])["access_token"]
        whole = app.authorize_url(resource=server.url)
        bob_oauth_read = app.connect(browser, whole, access="read")["access_token"]
        browser.close()

        with server.client(alice.secret) as api:
            conversation_id = ask_for_conversation(
                api, "vault", f"When is the {SECRET_WORD} launch?"
            )
            messages = api.get(f"/brains/vault/conversations/{conversation_id}").json()
            message_id = messages["messages"][-1]["id"]

        yield World(
            server=server,
            alice=alice.secret,
            bob=bob.secret,
            bob_read=bob_read,
            bob_limited=bob_limited,
            carol=carol.secret,
            alice_token_id=alice.token.id,
            file_id=pending[0][1],
            note_id=pending[1][1],
            conversation_id=conversation_id,
            message_id=message_id,
            file_bytes=file_bytes,
            bob_brain_ids=bob_brain_ids,
            source_id=source_id,
            bob_oauth=bob_oauth,
            bob_oauth_read=bob_oauth_read,
        )


# the matrix ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Operation:
    method: str
    path: str  # as in openapi.json, under /api/v1
    operation_id: str
    params: frozenset[str]


def id_operations() -> list[Operation]:
    """Every operation of the committed schema whose path takes a parameter."""
    schema = json.loads((REPO / "openapi.json").read_text())
    found = []
    for path, methods in schema["paths"].items():
        for method, op in methods.items():
            params = frozenset(p["name"] for p in op.get("parameters", []) if p["in"] == "path")
            if params:
                found.append(Operation(method.upper(), path, op["operationId"], params))
    return found


def test_every_id_route_is_in_the_matrix() -> None:
    operations = id_operations()
    assert len(operations) >= 20  # the schema was read, not an empty file
    for op in operations:
        assert op.params <= ID_PARAMS, f"{op.operation_id}: new path parameter {op.params}"
        assert op.operation_id in ATTEMPTS, (
            f"{op.method} {op.path} ({op.operation_id}) takes an id but is not in the isolation"
            " matrix: add how a stranger would call it to ATTEMPTS"
        )


def _snapshot(world: World) -> dict[str, Any]:
    """What Alice sees of her private brain, her conversation and her tokens."""
    with world.client(world.alice) as api:
        brain = "/brains/vault"
        files = api.get(f"{brain}/files").json()
        shot: dict[str, Any] = {
            "brains": api.get("/brains").json(),
            "brain": api.get(brain).json(),
            "members": api.get(f"{brain}/members").json(),
            "files": files,
            "jobs": api.get(f"{brain}/jobs").json(),
            "status": api.get(f"{brain}/status").json(),
            "note": api.get(f"{brain}/notes/{world.note_id}").json(),
            "versions": api.get(f"{brain}/files/{world.note_id}/versions").json(),
            "chunks": api.get(f"{brain}/files/{world.file_id}/chunks").json(),
            "download": hashlib.sha256(
                api.get(f"{brain}/files/{world.file_id}/download").content
            ).hexdigest(),
            "conversations": api.get(f"{brain}/conversations").json(),
            "graph": api.get(f"{brain}/graph/documents").json(),
            "graph_page": api.get(f"{brain}/graph/documents/{GRAPH_DOC}").json(),
            "graph_history": api.get(f"{brain}/graph/documents/{GRAPH_DOC}/history").json(),
            "sources": api.get(f"{brain}/folders").json(),
            "conversation": api.get(f"{brain}/conversations/{world.conversation_id}").json(),
            "tokens": [
                {k: v for k, v in t.items() if k != "last_used_at"}
                for t in api.get("/tokens").json()
            ],
        }
    kinds = sorted(f["kind"] for f in files)
    assert kinds == ["file", "note", "page"] and shot["chunks"], (
        "Alice's brain is not set up as the test expects"
    )
    assert len(shot["conversations"]) == 1 and shot["conversation"]["messages"]
    assert [d["id"] for d in shot["graph"]] == [GRAPH_DOC]
    assert [s["id"] for s in shot["sources"]] == [world.source_id]
    return shot


def _targets(
    op: Operation, world: World, note_hash: str, graph_hash: str
) -> list[tuple[str, Ids, Ids]]:
    """(what is tried, Alice's ids, the same shape with ids that exist nowhere)."""
    doc = world.note_id if "/notes/" in op.path or "/versions" in op.path else world.file_id
    theirs = {
        "brain": "vault",
        "document_id": doc,
        "conversation_id": world.conversation_id,
        "message_id": world.message_id,
        "user": "alice",
        "token_id": world.alice_token_id,
        "note_hash": note_hash,
        "doc_id": GRAPH_DOC,
        "graph_hash": graph_hash,
        "provider": "jamie",
        "source_id": world.source_id,
        "version": 1,
    }
    made_up = {
        **theirs,
        "brain": "no-such-brain",
        "document_id": NEVER,
        "conversation_id": NEVER,
        "message_id": NEVER,
        "token_id": NEVER,
        "doc_id": "no-such-page",
        "source_id": NEVER,
    }
    if "token_id" in op.params:
        return [("Alice's token", theirs, made_up)]
    targets = [("Alice's brain", theirs, made_up)]
    if "user" in op.params:  # adding himself is the attack that matters on members
        targets.append(
            ("Alice's brain, himself", {**theirs, "user": "bob"}, {**made_up, "user": "bob"})
        )
    if (
        op.params & {"document_id", "conversation_id", "message_id", "doc_id", "source_id"}
        or ATTEMPTS[op.operation_id].body_id
    ):
        # Alice's ids inside a brain Bob may use
        targets.append(
            ("his brain, Alice's id", {**theirs, "brain": "bobs"}, {**made_up, "brain": "bobs"})
        )
    return targets


def _expected(op: Operation, token_kind: str, target: str) -> int:
    needs = ATTEMPTS[op.operation_id].needs
    if ATTEMPTS[op.operation_id].admin:
        return 403
    reads_only = token_kind.endswith("read")
    if op.operation_id == "revoke_token" and token_kind != "write":
        # a read-only token revokes nothing, and a narrower one only itself, whoever's
        return 403
    if reads_only and target == "his brain, Alice's id" and needs != "read":
        return 403  # his own brain, where he can see his token is read-only
    return 404


def _call(client: httpx.Client, op: Operation, ids: Ids) -> httpx.Response:
    path = op.path.removeprefix("/api/v1").format(**ids)
    return client.request(op.method, path, **ATTEMPTS[op.operation_id].request(ids))


def test_a_stranger_gets_404_on_every_id_route_and_changes_nothing(world: World) -> None:
    before = _snapshot(world)
    note_hash = before["note"]["document"]["content_hash"]
    graph_hash = before["graph_page"]["document"]["content_hash"]
    tokens = world.bob_tokens()
    tried = 0
    failures = []
    for op in id_operations():
        for token_kind, token in tokens.items():
            with world.client(token) as bob:
                for target, ids, made_up in _targets(op, world, note_hash, graph_hash):
                    got = _call(bob, op, ids)
                    control = _call(bob, op, made_up)
                    tried += 1
                    want = _expected(op, token_kind, target)
                    where = f"{op.method} {op.path} as bob/{token_kind} on {target}"
                    if got.status_code != want:
                        failures.append(f"{where}: {got.status_code} {got.text[:200]}")
                    elif got.json()["error"] != control.json()["error"]:
                        failures.append(f"{where}: differs from a made-up id: {got.text[:200]}")
        for credentials in ("", "loci_not-a-token"):
            with world.client(credentials) as anonymous:
                for _, ids, _ in _targets(op, world, note_hash, graph_hash):
                    got = _call(anonymous, op, ids)
                    if got.status_code != 401 or got.json()["error"] != "unauthenticated":
                        failures.append(f"{op.method} {op.path} unauthenticated: {got.status_code}")
    assert not failures, "\n".join(failures)
    assert tried >= 5 * 30
    assert _snapshot(world) == before, "a refused request changed Alice's brain"


def test_a_token_cannot_be_limited_to_someone_elses_brain(world: World) -> None:
    with world.client(world.bob) as bob:
        response = bob.post("/tokens", json={"name": "sneaky", "brains": ["vault"]})
        assert response.status_code == 404 and response.json()["error"] == "not_found"
        assert all(t["name"] != "sneaky" for t in bob.get("/tokens").json())


def test_search_never_returns_a_strangers_passages(world: World) -> None:
    for token in world.bob_tokens().values():
        with world.client(token) as bob:
            everywhere = bob.post("/search", json={"query": SECRET_WORD, "limit": 30})
            assert everywhere.status_code == 200
            hits = everywhere.json()["hits"]
            assert all(h["brain"] != "vault" for h in hits)
            assert all(SECRET_WORD not in h["text"] for h in hits)
            own = bob.post("/brains/bobs/search", json={"query": SECRET_WORD}).json()["hits"]
            assert all(SECRET_WORD not in h["text"] for h in own)
    with world.client(world.alice) as alice:  # the control: the passage is there to find
        hits = alice.post("/search", json={"query": SECRET_WORD}).json()["hits"]
        found = [h["brain"] for h in hits if SECRET_WORD in h["text"]]
        assert found == ["vault", "vault"]


def test_asking_across_brains_reaches_only_readable_ones(world: World) -> None:
    """`brains` in an ask body names brains too: Alice's is refused exactly as a made-up one,
    before anything is searched or kept, and a token limited to one brain reaches no other."""
    question = {"question": f"When is the {SECRET_WORD} launch?"}
    for token in world.bob_tokens().values():
        with world.client(token) as bob:
            for route in ("ask", "answer"):
                path = f"/brains/bobs/{route}"
                got = bob.post(path, json={**question, "brains": ["vault"]})
                control = bob.post(path, json={**question, "brains": ["no-such-brain"]})
                assert got.status_code == control.status_code == 404, got.text
                assert got.json()["error"] == control.json()["error"]
                assert SECRET_WORD not in got.text.replace(question["question"], "")
    with world.client(world.bob_limited) as limited:
        other = {**question, "brains": ["bobs-other"]}
        assert limited.post("/brains/bobs/answer", json=other).status_code == 404
    with world.client(world.bob) as bob:  # the control: his own two brains together
        both = bob.post("/brains/bobs/answer", json={**question, "brains": ["bobs-other"]})
        assert both.status_code == 200, both.text
        assert {c["brain"] for c in both.json()["citations"]} <= {"bobs", "bobs-other"}
    with world.client(world.alice) as alice:  # and Alice finds it across her brains
        hers = alice.post("/brains/shared/answer", json={**question, "brains": ["vault"]})
        assert {c["brain"] for c in hers.json()["citations"]} == {"vault"}


def test_deleting_identical_bytes_in_his_brain_keeps_hers(world: World) -> None:
    with world.client(world.bob) as bob:
        doc_id = _upload(bob, "bobs-other", "copy.md", world.file_bytes)
        assert bob.delete(f"/brains/bobs-other/files/{doc_id}").status_code == 204
    with world.client(world.alice) as alice:
        download = alice.get(f"/brains/vault/files/{world.file_id}/download")
        assert download.status_code == 200 and download.content == world.file_bytes


# roles and visibility -----------------------------------------------------------------------
def test_a_viewer_reads_but_cannot_write(world: World) -> None:
    with world.client(world.alice) as alice:
        (menu,) = alice.get("/brains/shared/files").json()
    brain = "/brains/shared"
    with world.client(world.carol) as carol:
        assert carol.get(brain).json()["role"] == "viewer"
        assert carol.get(f"{brain}/files/{menu['id']}").status_code == 200
        assert (
            carol.get(f"{brain}/files/{menu['id']}/download").content
            == b"# Menu\n\nSoup on Mondays.\n"
        )
        hits = carol.post(f"{brain}/search", json={"query": "soup"}).json()["hits"]
        assert hits and hits[0]["document_id"] == menu["id"]
        writes: list[tuple[str, str, dict[str, Any]]] = [
            ("POST", f"{brain}/files", {"files": {"files": ("v.md", b"# v\n")}}),
            ("POST", f"{brain}/notes", {"json": NOTE_BODY}),
            ("DELETE", f"{brain}/files/{menu['id']}", {}),
            ("POST", f"{brain}/files/{menu['id']}/reprocess", {}),
            ("PATCH", brain, {"json": {"visibility": "workspace"}}),
            ("PUT", f"{brain}/members/carol", {"json": {"role": "owner"}}),
            ("DELETE", f"{brain}/members/alice", {}),
            ("DELETE", brain, {}),
        ]
        for method, path, kwargs in writes:
            response = carol.request(method, path, **kwargs)
            assert response.status_code == 403, f"{method} {path}: {response.text}"
            assert response.json()["error"] == "forbidden"
    with world.client(world.alice) as alice:
        assert [f["id"] for f in alice.get(f"{brain}/files").json()] == [menu["id"]]
        members = {m["user"]: m["role"] for m in alice.get(f"{brain}/members").json()}
        assert members == {"alice": "owner", "carol": "viewer"}


def test_a_workspace_brain_is_readable_by_everyone_but_writable_by_members(world: World) -> None:
    brain = "/brains/open"
    with world.client(world.bob) as bob:
        assert bob.get(brain).json()["role"] == "viewer"
        (zoo,) = bob.get(f"{brain}/files").json()
        assert bob.get(f"{brain}/files/{zoo['id']}/download").status_code == 200
        hits = bob.post(f"{brain}/search", json={"query": SHARED_WORD}).json()["hits"]
        assert [h["document_id"] for h in hits] == [zoo["id"]]
        writes: list[tuple[str, str, dict[str, Any]]] = [
            ("POST", f"{brain}/notes", {"json": NOTE_BODY}),
            ("DELETE", f"{brain}/files/{zoo['id']}", {}),
            ("PUT", f"{brain}/members/bob", {"json": {"role": "editor"}}),
            ("PATCH", brain, {"json": {"visibility": "restricted"}}),
        ]
        for method, path, kwargs in writes:
            response = bob.request(method, path, **kwargs)
            assert response.status_code == 403, f"{method} {path}: {response.text}"
    with world.client(world.alice) as alice:
        assert len(alice.get(f"{brain}/files").json()) == 1
        assert alice.get(brain).json()["visibility"] == "workspace"


# tokens -------------------------------------------------------------------------------------
def test_a_revoked_token_and_its_session_fail_on_the_next_request(world: World) -> None:
    with world.client(world.bob) as bob:
        issued = bob.post("/tokens", json={"name": "laptop"}).json()
    with world.client(issued["secret"]) as laptop:
        assert laptop.get("/brains").status_code == 200
    web = httpx.Client(base_url=world.server.url + "/api/v1", timeout=30)
    with web:
        assert web.post("/session", json={"token": issued["secret"]}).status_code == 200
        assert web.get("/me").json()["token"]["id"] == issued["id"]
        with world.client(world.bob) as bob:
            assert bob.delete(f"/tokens/{issued['id']}").status_code == 204
            assert bob.delete(f"/tokens/{issued['id']}").status_code == 404  # already revoked
            listed = {t["id"]: t for t in bob.get("/tokens").json()}
            assert listed[issued["id"]]["revoked"] is True
        assert web.get("/me").status_code == 401
    with world.client(issued["secret"]) as laptop:
        response = laptop.get("/brains")
        assert response.status_code == 401 and response.json()["error"] == "unauthenticated"


def test_an_expired_token_gets_401(world: World) -> None:
    accounts = world.server.accounts
    bob = accounts.user("bob")
    short = accounts.issue_token(bob, name="brief", expires_in_days=1.0 / 86400)  # one second
    issued_at = time.monotonic()
    with world.client(short.secret) as api:
        assert api.get("/brains").status_code == 200  # valid while it lasts
        time.sleep(max(0.0, 1.2 - (time.monotonic() - issued_at)))
        response = api.get("/brains")
        assert response.status_code == 401
        assert "expired" in response.json()["message"]


def test_a_stranger_cannot_revoke_your_token(world: World) -> None:
    with world.client(world.bob) as bob:
        response = bob.delete(f"/tokens/{world.alice_token_id}")
        assert response.status_code == 404 and response.json()["error"] == "not_found"
    with world.client(world.alice) as alice:
        assert alice.get("/me").status_code == 200
        mine = {t["id"]: t for t in alice.get("/tokens").json()}
        assert mine[world.alice_token_id]["revoked"] is False


def test_a_read_only_token_cannot_make_or_revoke_tokens(world: World) -> None:
    with world.client(world.bob_read) as reader:
        before = reader.get("/tokens").json()
        for body in ({"name": "wider", "scope": "write"}, {"name": "same", "scope": "read"}):
            response = reader.post("/tokens", json=body)
            assert response.status_code == 403 and response.json()["error"] == "forbidden"
        own_id = reader.get("/me").json()["token"]["id"]
        assert reader.delete(f"/tokens/{own_id}").status_code == 403
        assert reader.get("/tokens").json() == before


def test_a_brain_limited_token_sees_only_its_brains(world: World) -> None:
    with world.client(world.bob) as bob:  # the control: his full token sees more
        everything = {b["name"] for b in bob.get("/brains").json()}
        assert everything == {"bobs", "bobs-other", "open"}
        hits = bob.post("/search", json={"query": SHARED_WORD, "limit": 30}).json()["hits"]
        assert {h["brain"] for h in hits} == {"bobs", "bobs-other", "open"}
    with world.client(world.bob_limited) as limited:
        assert [b["name"] for b in limited.get("/brains").json()] == ["bobs"]
        hits = limited.post("/search", json={"query": SHARED_WORD, "limit": 30}).json()["hits"]
        assert hits and {h["brain"] for h in hits} == {"bobs"}
        for brain in ("bobs-other", "open"):
            assert limited.get(f"/brains/{brain}").status_code == 404
            assert limited.post(f"/brains/{brain}/search", json={"query": "x"}).status_code == 404
        # it makes no tokens (one would outlive it) and no brains
        assert limited.post("/tokens", json={"name": "child"}).status_code == 403
        wider = limited.post("/tokens", json={"name": "wider", "brains": ["bobs-other"]})
        assert wider.status_code == 403
        assert limited.post("/brains", json={"name": "new-one"}).status_code == 403
