"""The brain graph over HTTP: edits against the version read, actors, roles and isolation."""

from __future__ import annotations

import pytest

from tests.support.live_server import LiveServer

GRAPH = "/brains/{brain}/graph/documents"

pytestmark = pytest.mark.both_backends


def test_create_get_rewrite_with_a_stale_hash_is_409_and_history_names_the_user(
    server: LiveServer,
) -> None:
    docs = GRAPH.format(brain="people")
    with server.client() as api:
        assert api.post("/brains", json={"name": "people"}).status_code == 201
        made = api.post(
            docs,
            json={"type": "person", "title": "Ada Lovelace", "text": "Wrote the first program."},
        )
        assert made.status_code == 201, made.text
        first = made.json()
        assert first["id"] == "ada-lovelace" and first["status"] == "draft"

        page = api.get(f"{docs}/ada-lovelace").json()
        assert page["document"]["content_hash"] == first["content_hash"]
        assert "Wrote the first program." in page["truth"]
        assert page["links"] == [] and page["backlinks"] == []
        assert api.get(f"{docs}/Ada Lovelace").json()["document"]["id"] == "ada-lovelace"

        rewritten = api.put(
            f"{docs}/ada-lovelace/truth",
            json={
                "truth": "Mathematician; wrote the first program.",
                "expected_hash": first["content_hash"],
            },
        )
        assert rewritten.status_code == 200, rewritten.text
        assert rewritten.json()["content_hash"] != first["content_hash"]

        stale = api.put(
            f"{docs}/ada-lovelace/truth",
            json={"truth": "Overwritten.", "expected_hash": first["content_hash"]},
        )
        assert stale.status_code == 409 and stale.json()["error"] == "conflict"
        fields = api.patch(
            f"{docs}/ada-lovelace/fields",
            json={"fields": {"status": "active"}, "expected_hash": first["content_hash"]},
        )
        assert fields.status_code == 409
        assert "Mathematician" in api.get(f"{docs}/ada-lovelace").json()["truth"]

        history = api.get(f"{docs}/ada-lovelace/history").json()
        assert [(v["action"], v["actor"]) for v in history] == [("rewrite", "owner")]
        assert history[0]["content_hash"] == first["content_hash"]

        entry = api.post(
            f"{docs}/ada-lovelace/timeline", json={"text": "Met Babbage", "at": "1833-06-05"}
        )
        assert entry.status_code == 200 and entry.json()["changed"] is True
        timeline = api.get("/brains/people/graph/timeline").json()
        assert [(e["doc_id"], e["at"]) for e in timeline] == [("ada-lovelace", "1833-06-05")]

        dry = api.delete(f"{docs}/ada-lovelace")
        assert dry.status_code == 200 and dry.json()["deleted"] is False
        assert api.get(f"{docs}/ada-lovelace").status_code == 200
        gone = api.delete(f"{docs}/ada-lovelace", params={"confirm": "true"})
        assert gone.json()["deleted"] is True
        assert api.get(f"{docs}/ada-lovelace").status_code == 404


def test_a_viewer_reads_the_graph_but_cannot_write_and_a_stranger_gets_404(
    server: LiveServer,
) -> None:
    server.accounts.add_user("vera")
    _, bob = server.accounts.add_user("bob")
    with server.client() as api:
        assert api.post("/brains", json={"name": "private"}).status_code == 201
        assert api.put("/brains/private/members/vera", json={"role": "viewer"}).status_code == 200
        docs = GRAPH.format(brain="private")
        made = api.post(docs, json={"type": "company", "title": "Acme"})
        assert made.status_code == 201, made.text
    vera = server.accounts.issue_token(server.accounts.user("vera"), name="t").secret
    with server.client(vera) as viewer:
        assert viewer.get(f"{docs}/acme").status_code == 200
        for method, path, body in (
            ("POST", docs, {"type": "company", "title": "Planted"}),
            ("PUT", f"{docs}/acme/truth", {"truth": "mine"}),
            ("DELETE", f"{docs}/acme", None),
            ("POST", "/brains/private/captures", {"text": "planted"}),
        ):
            response = viewer.request(method, path, json=body)
            assert response.status_code == 403, f"{method} {path}: {response.text}"
    owner_reader = server.accounts.issue_token(
        server.accounts.user("owner"), name="read", scope="read"
    ).secret
    with server.client(owner_reader) as reader:
        assert reader.get(f"{docs}/acme").status_code == 200
        assert reader.post(f"{docs}/acme/aliases", json={"alias": "ACME"}).status_code == 403
    with server.client(bob.secret) as stranger:
        for path in (f"{docs}/acme", f"{docs}/acme/history", docs):
            response = stranger.get(path)
            assert response.status_code == 404 and response.json()["error"] == "not_found"
        assert stranger.put(f"{docs}/acme/truth", json={"truth": "x"}).status_code == 404
    with server.client() as api:
        assert api.get(f"{docs}/acme/history").json() == []


def test_a_capture_lands_as_an_inbox_draft(server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "notes"}).status_code == 201
        saved = api.post(
            "/brains/notes/captures",
            json={"text": "Call the plumber about the leak on Tuesday.", "title": "Plumber"},
        )
        assert saved.status_code == 201, saved.text
        body = saved.json()
        assert body["deduped"] is False
        assert body["draft"]["folder"] == "inbox" and body["draft"]["status"] == "draft"
        assert body["item"]["brain"] == "notes"
        again = api.post(
            "/brains/notes/captures", json={"text": "Call the plumber about the leak on Tuesday."}
        )
        assert again.status_code == 201 and again.json()["deduped"] is True
        history = api.get(f"/brains/notes/graph/documents/{body['draft']['id']}/history")
        assert history.status_code == 200

        item = {"id": "m-1", "text": "We agreed to ship on Friday.", "title": "Standup"}
        ingested = api.post("/brains/notes/sources/jamie", json=item)
        assert ingested.status_code == 201, ingested.text
        bad = api.post("/brains/notes/sources/jamie", json={"text": "no id"})
        assert bad.status_code == 400
