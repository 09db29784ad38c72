"""The HTTP API over a real server on 127.0.0.1: what a script or a Custom GPT sees."""

from __future__ import annotations

import json
from pathlib import Path

import lxml.html
import pytest

from loci.app import build_api
from loci.config import Settings
from loci.service import Loci
from tests.support.live_server import LiveServer
from tests.support.paths import REPO

pytestmark = pytest.mark.both_backends


def test_health_needs_no_token_and_everything_else_does(server: LiveServer) -> None:
    with server.client("") as anonymous:
        assert anonymous.get("/health").json()["status"] == "ok"
        response = anonymous.get("/brains")
        assert response.status_code == 401
        assert response.json()["error"] == "unauthenticated"
        # RFC 9728: the challenge says where to learn how to get a token (OAuth)
        metadata = server.url + "/.well-known/oauth-protected-resource"
        assert response.headers["www-authenticate"] == f'Bearer resource_metadata="{metadata}"'
    with server.client("loci_not-a-real-token") as wrong:
        refused = wrong.get("/brains")
        assert refused.status_code == 401
        assert 'error="invalid_token"' in refused.headers["www-authenticate"]


def test_upload_then_search_returns_cited_passage(server: LiveServer) -> None:
    with server.client() as api:
        assert api.post("/brains", json={"name": "home"}).status_code == 201
        manual = (REPO / "examples" / "boiler-manual.md").read_bytes()
        response = api.post("/brains/home/files", files={"files": ("boiler.md", manual)})
        assert response.status_code == 202
        (result,) = response.json()["results"]
        assert result["document"]["status"] == "processing" and not result["deduped"]
        doc = server.wait_ready(api, "home", result["document"]["id"])
        assert doc["status"] == "ready" and doc["chunk_count"] >= 1

        again = api.post("/brains/home/files", files={"files": ("copy.md", manual)}).json()
        assert again["results"][0]["deduped"] is True
        assert again["results"][0]["document"]["id"] == doc["id"]

        hits = api.post(
            "/brains/home/search", json={"query": "what pressure should the gauge read"}
        ).json()["hits"]
        top = hits[0]
        assert top["document_id"] == doc["id"] and top["name"] == "boiler.md"
        assert top["line_start"] is not None and "Pressure" in top["heading_path"]
        marked = [top["snippet"][a:b].lower() for a, b in top["highlights"]]
        assert "pressure" in marked and "**" not in top["snippet"]
        assert top["matched_by"] in ("text", "vector", "both")


def test_committed_openapi_matches_the_app(loci: Loci, tmp_path: Path) -> None:
    committed = json.loads((REPO / "openapi.json").read_text())
    current = build_api(Settings(home=tmp_path), loci, run_worker=False).openapi()
    assert current["openapi"].startswith("3.1")
    assert committed == json.loads(json.dumps(current)), (
        "the API changed: regenerate with `loci openapi > openapi.json` and commit the diff"
    )


def test_brains_create_rename_share_and_delete(server: LiveServer) -> None:
    bob, _ = server.accounts.add_user("bob")
    with server.client() as api:
        created = api.post("/brains", json={"name": "plans", "visibility": "restricted"})
        assert created.status_code == 201 and created.json()["role"] == "owner"
        assert api.post("/brains", json={"name": "plans"}).json()["error"] == "conflict"
        assert api.post("/brains", json={"name": "../etc"}).status_code == 422

        renamed = api.patch("/brains/plans", json={"name": "trips", "visibility": "workspace"})
        assert renamed.json()["name"] == "trips" and renamed.json()["visibility"] == "workspace"
        assert api.get("/brains/plans").status_code == 404

        member = api.put("/brains/trips/members/bob", json={"role": "editor"})
        assert member.json() == {"user": "bob", "role": "editor"}
        members = {m["user"]: m["role"] for m in api.get("/brains/trips/members").json()}
        assert members == {"owner": "owner", "bob": "editor"}
        # the last owner cannot leave or be demoted: the brain would be unmanageable
        assert api.delete("/brains/trips/members/owner").status_code == 409
        assert api.put("/brains/trips/members/owner", json={"role": "viewer"}).status_code == 409
        assert api.delete("/brains/trips/members/bob").status_code == 204
        assert api.delete("/brains/trips/members/bob").status_code == 404

        api.post("/brains/trips/notes", json={"text": "Pack the tent."})
        assert api.delete("/brains/trips").status_code == 204
        assert api.get("/brains/trips").status_code == 404
        assert "trips" not in [b["name"] for b in api.get("/brains").json()]
    assert bob.name == "bob"


def test_web_session_uses_an_httponly_cookie_and_needs_csrf_on_writes(server: LiveServer) -> None:
    with server.client("") as browser:
        signed = browser.post("/session", json={"token": server.owner_token})
        assert signed.status_code == 200
        cookie = signed.headers["set-cookie"].lower()
        assert "httponly" in cookie and "samesite=strict" in cookie
        csrf = signed.json()["csrf_token"]

        assert browser.get("/brains").status_code == 200  # reads need only the cookie
        refused = browser.post("/brains", json={"name": "nocsrf"})
        assert refused.status_code == 403 and "X-CSRF-Token" in refused.json()["message"]
        wrong = browser.post("/brains", json={"name": "nocsrf"}, headers={"X-CSRF-Token": "x"})
        assert wrong.status_code == 403
        ok = browser.post("/brains", json={"name": "withcsrf"}, headers={"X-CSRF-Token": csrf})
        assert ok.status_code == 201
        assert browser.get("/me").json()["csrf_token"] == csrf  # a reload recovers it

        assert browser.delete("/session").status_code == 204
        assert browser.get("/brains").status_code == 401


def test_revoking_the_token_ends_its_web_sessions(server: LiveServer) -> None:
    with server.client() as api:
        issued = api.post("/tokens", json={"name": "laptop"}).json()
    with server.client("") as browser:
        browser.post("/session", json={"token": issued["secret"]})
        assert browser.get("/me").status_code == 200
        with server.client() as api:
            assert api.delete(f"/tokens/{issued['id']}").status_code == 204
        assert browser.get("/me").status_code == 401


def test_tokens_are_shown_once_stored_hashed_and_scoped(server: LiveServer) -> None:
    with server.client() as api:
        api.post("/brains", json={"name": "work"})
        api.post("/brains", json={"name": "home"})
        made = api.post(
            "/tokens",
            json={"name": "gpt", "scope": "read", "brains": ["work"], "expires_in_days": 30},
        )
        assert made.status_code == 201
        body = made.json()
        secret = body["secret"]
        assert secret.startswith("loci_") and body["prefix"] == secret[:12]
        assert body["scope"] == "read" and body["expires_at"] is not None

        listed = api.get("/tokens").json()
        assert all("secret" not in t for t in listed)
        assert body["id"] in [t["id"] for t in listed]
    stored = server.loci.store.db.rows("SELECT secret_hash FROM api_tokens")  # type: ignore[attr-defined]
    assert secret not in [r["secret_hash"] for r in stored]

    with server.client(secret) as gpt:
        assert [b["name"] for b in gpt.get("/brains").json()] == ["work"]
        assert gpt.get("/brains/home").status_code == 404
        denied = gpt.post("/brains/work/notes", json={"text": "hello"})
        assert denied.status_code == 403 and denied.json()["error"] == "forbidden"
        assert gpt.post("/tokens", json={"name": "wider"}).status_code == 403


def test_notes_update_against_the_version_read(server: LiveServer) -> None:
    with server.client() as api:
        api.post("/brains", json={"name": "notes"})
        created = api.post(
            "/brains/notes/notes",
            json={"text": "Call the plumber on **Monday**.", "title": "Plumber",
                  "tags": ["house"], "color": "#ffcc00"},
        )  # fmt: skip
        assert created.status_code == 201
        doc = created.json()["document"]
        note = api.get(f"/brains/notes/notes/{doc['id']}").json()
        assert note["text"] == "Call the plumber on **Monday**."
        assert "<strong>Monday</strong>" in note["html"]
        assert note["document"]["color"] == "#ffcc00" and note["document"]["tags"] == ["house"]

        first = api.put(
            f"/brains/notes/notes/{doc['id']}",
            json={"text": "Call the plumber on Tuesday.", "title": "Plumber", "tags": ["house"],
                  "expected_hash": doc["content_hash"]},
        )  # fmt: skip
        assert first.status_code == 200
        # a second editor still holding the old version is told, not silently overwritten
        stale = api.put(
            f"/brains/notes/notes/{doc['id']}",
            json={"text": "Call the plumber on Friday.", "expected_hash": doc["content_hash"]},
        )
        assert stale.status_code == 409 and stale.json()["error"] == "conflict"
        current = api.get(f"/brains/notes/notes/{doc['id']}").json()
        assert current["text"] == "Call the plumber on Tuesday."

        ready = server.wait_ready(api, "notes", doc["id"])
        assert ready["status"] == "ready"
        hits = api.post("/brains/notes/search", json={"query": "plumber tuesday"}).json()["hits"]
        assert hits[0]["document_id"] == doc["id"] and "Tuesday" in hits[0]["text"]

        assert [n["id"] for n in api.get("/brains/notes/notes", params={"tag": "house"}).json()]
        assert api.get("/brains/notes/notes", params={"tag": "garden"}).json() == []
        assert api.delete(f"/brains/notes/notes/{doc['id']}").status_code == 204
        assert api.get(f"/brains/notes/notes/{doc['id']}").status_code == 404


def test_note_html_is_sanitized(server: LiveServer) -> None:
    with server.client() as api:
        api.post("/brains", json={"name": "x"})
        text = "<script>alert(1)</script> [click](javascript:alert(1)) <img src=x onerror=alert(1)>"
        doc = api.post("/brains/x/notes", json={"text": text}).json()["document"]
        html = api.get(f"/brains/x/notes/{doc['id']}").json()["html"]
    tree = lxml.html.fragment_fromstring(html, create_parent="div")
    assert not tree.xpath("//script | //img | //iframe")
    assert not [a for el in tree.iter() for a in el.attrib if a.startswith("on")]
    assert not [h for h in tree.xpath("//a/@href") if not h.startswith(("http", "mailto"))]
    assert "alert(1)" in tree.text_content()  # what was written is shown, as text


def test_files_preview_chunks_download_reprocess_and_delete(server: LiveServer) -> None:
    from tests.support import pdf_files

    pdf = pdf_files.two_page_pdf()
    with server.client() as api:
        api.post("/brains", json={"name": "docs"})
        result = api.post(
            "/brains/docs/files", files={"files": ("report.pdf", pdf, "application/pdf")}
        ).json()["results"][0]
        doc = server.wait_ready(api, "docs", result["document"]["id"])
        assert doc["status"] == "ready" and doc["size_bytes"] == len(pdf)

        listed = api.get("/brains/docs/files", params={"status": "ready"}).json()
        assert [d["name"] for d in listed] == ["report.pdf"]
        text = api.get(f"/brains/docs/files/{doc['id']}/text").json()
        assert text["text"] and not text["truncated"]
        chunks = api.get(f"/brains/docs/files/{doc['id']}/chunks").json()
        assert len(chunks) == doc["chunk_count"] and {c["page"] for c in chunks} == {1, 2}

        download = api.get(f"/brains/docs/files/{doc['id']}/download")
        assert download.content == pdf
        assert download.headers["content-disposition"].startswith("attachment;")
        assert download.headers["x-content-type-options"] == "nosniff"

        again = api.post(f"/brains/docs/files/{doc['id']}/reprocess")
        assert again.status_code == 202 and again.json()["status"] == "processing"
        assert server.wait_ready(api, "docs", doc["id"])["status"] == "ready"
        jobs = api.get("/brains/docs/jobs").json()
        assert jobs and all(j["document_id"] == doc["id"] for j in jobs)
        status = api.get("/brains/docs/status").json()
        assert status["documents_by_status"] == {"ready": 1} and status["chunks"] == len(chunks)

        assert api.delete(f"/brains/docs/files/{doc['id']}").status_code == 204
        assert api.get(f"/brains/docs/files/{doc['id']}").status_code == 404
        assert api.get(f"/brains/docs/files/{doc['id']}/download").status_code == 404
        # a file's id is not a note's
        assert api.get("/brains/docs/files").json() == []


def test_search_all_brains_merges_what_the_caller_can_read(server: LiveServer) -> None:
    with server.client() as api:
        for brain, text in (("a", "The cat sleeps on the red sofa."),
                            ("b", "The red kite circles above the hill.")):  # fmt: skip
            api.post("/brains", json={"name": brain})
            doc = api.post(f"/brains/{brain}/notes", json={"text": text}).json()["document"]
            server.wait_ready(api, brain, doc["id"])
        hits = api.post("/search", json={"query": "red", "mode": "text"}).json()["hits"]
        assert {h["brain"] for h in hits} == {"a", "b"}
        bad = api.post("/brains/a/search", json={"query": "red", "limit": 99})
        assert bad.status_code == 422 and bad.json()["error"] == "invalid_input"


def test_unknown_routes_and_methods_answer_in_the_error_shape(server: LiveServer) -> None:
    with server.client() as api:
        missing = api.get("/nothing-here")
        assert missing.status_code == 404 and missing.json()["error"] == "not_found"
        wrong = api.put("/health")
        assert wrong.status_code == 405 and wrong.json()["error"] == "method_not_allowed"


def test_web_app_is_served_with_a_content_security_policy(server: LiveServer) -> None:
    import httpx

    page = httpx.get(server.url + "/")
    assert page.status_code == 200 and "<html" in page.text.lower()
    policy = page.headers["content-security-policy"]
    assert "default-src 'self'" in policy and "frame-ancestors 'none'" in policy


def test_a_brain_stems_words_in_its_own_language(server: LiveServer, backend: str) -> None:
    with server.client() as api:
        api.post("/brains", json={"name": "reisen", "visibility": "restricted"})
        assert api.get("/brains/reisen/status").json()["language"] == "auto"
        switched = api.patch("/brains/reisen", json={"language": "german", "name": "fahrten"})
        # One stemmer for the whole brain, on either backend (Snowball, in Python)
        assert switched.status_code == 200 and switched.json()["name"] == "fahrten"
        assert api.get("/brains/fahrten/status").json()["language"] == "german"
        note = api.post("/brains/fahrten/notes", json={"text": "Wir fahren mit den Zügen."})
        doc_id = note.json()["document"]["id"]
        assert server.wait_ready(api, "fahrten", doc_id)["status"] == "ready"
        hits = api.post("/brains/fahrten/search", json={"query": "Zug", "mode": "text"})
        assert hits.json()["hits"]  # German stemming: "Zügen" is found by "Zug"
        unknown = api.patch("/brains/fahrten", json={"language": "klingon"})
        assert unknown.status_code == 400
