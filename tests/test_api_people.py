"""Invites, password sign-in, people management and the tokens page's calls, over real HTTP.

Each test drives a live server as its users would: an admin invites, the invited person opens
the link and chooses a password, signs in with it in a browser-like client (cookie + CSRF), makes
tokens, and is disabled or removed; on SQLite and on PostgreSQL.
"""

from __future__ import annotations

import statistics
import time

import pytest

from loci.auth.accounts import Accounts
from loci.auth.people import People
from loci.auth.secrets import hash_secret
from tests.support.live_server import LiveServer
from tests.support.people import PASSWORD, browser, invite, member, signed_in

pytestmark = pytest.mark.both_backends


def test_invite_accept_then_sign_in_with_the_password(server: LiveServer) -> None:
    made = invite(server, "sam", email="sam@example.org")
    secret = str(made["secret"])
    assert made["path"] == f"/#invite/{secret}"
    accounts = server.loci.store.accounts
    assert accounts.invite_by_hash(hash_secret(secret)) is not None  # kept as a hash only

    with browser(server) as tab:
        checked = tab.post("/invites/check", json={"secret": secret})
        assert checked.status_code == 200 and checked.json()["name"] == "sam"
        short = tab.post("/invites/accept", json={"secret": secret, "password": "short"})
        assert short.status_code == 422  # and the link is not used up by it
        accepted = signed_in(
            tab, tab.post("/invites/accept", json={"secret": secret, "password": PASSWORD})
        )
        assert accepted.get("/me").json()["user"]["name"] == "sam"
        assert accepted.post("/brains", json={"name": "sams"}).status_code == 201

    with browser(server) as tab:  # the link worked once
        again = tab.post("/invites/accept", json={"secret": secret, "password": PASSWORD + "!"})
        assert again.status_code == 404
        assert tab.post("/invites/check", json={"secret": secret}).status_code == 404

    with browser(server) as tab:
        session = signed_in(tab, tab.post("/session", json={"name": "SAM", "password": PASSWORD}))
        assert [b["name"] for b in session.get("/brains").json()] == ["sams"]
        assert session.delete("/session").status_code == 204
        assert session.get("/me").status_code == 401

    with browser(server) as tab:  # the token sign-in still works beside it
        assert tab.post("/session", json={"token": server.owner_token}).status_code == 200
        assert tab.get("/me").json()["user"]["name"] == "owner"

    with server.client() as admin:
        (sam,) = [p for p in admin.get("/people").json() if p["name"] == "sam"]
    assert sam["email"] == "sam@example.org" and sam["has_password"]
    assert sam["invite_expires_at"] is None and not sam["disabled"]
    stored = accounts.password_hash(sam["id"])
    assert stored is not None and stored.startswith("scrypt$ln=15,r=8,p=1$")
    assert PASSWORD not in stored


def test_an_expired_invite_is_refused(server: LiveServer) -> None:
    eight_days_ago = time.time() - 8 * 86400
    late = People(Accounts(server.loci.store, clock=lambda: eight_days_ago)).invite("late")
    with browser(server) as tab:
        checked = tab.post("/invites/check", json={"secret": late.secret})
        assert checked.status_code == 404 and "expired" in checked.json()["message"]
        body = {"secret": late.secret, "password": PASSWORD}
        assert tab.post("/invites/accept", json=body).status_code == 404
        assert tab.post("/session", json={"name": "late", "password": PASSWORD}).status_code == 401
    fresh = invite(server, "late")  # a new link for someone who has not signed up yet
    with browser(server) as tab:
        accept = {"secret": str(fresh["secret"]), "password": PASSWORD}
        assert tab.post("/invites/accept", json=accept).status_code == 200
    with server.client() as admin:  # once signed up, inviting the name again is a conflict
        assert admin.post("/invites", json={"name": "late"}).status_code == 409


def test_a_wrong_password_and_an_unknown_name_answer_alike(server: LiveServer) -> None:
    member(server, "ana")
    timings: dict[str, list[float]] = {"wrong": [], "unknown": []}
    answers = {}
    with browser(server) as tab:
        for _ in range(3):
            for case, name in (("wrong", "ana"), ("unknown", "nobody")):
                started = time.perf_counter()
                answer = tab.post("/session", json={"name": name, "password": "not it at all"})
                timings[case].append(time.perf_counter() - started)
                answers[case] = (answer.status_code, answer.json())
    assert answers["wrong"] == answers["unknown"]
    assert answers["wrong"][0] == 401
    # Both run one scrypt (~0.1 s); an unknown name that skipped it would answer in ~1 ms.
    wrong, unknown = (statistics.median(timings[c]) for c in ("wrong", "unknown"))
    assert unknown > 0.5 * wrong, timings


def test_failed_sign_ins_are_capped_per_name(server: LiveServer) -> None:
    member(server, "bo")
    member(server, "cy")
    with browser(server) as tab:
        for _ in range(10):
            assert (
                tab.post("/session", json={"name": "bo", "password": "guess-guess"}).status_code
                == 401
            )
        limited = tab.post("/session", json={"name": "Bo", "password": PASSWORD})
        assert limited.status_code == 429  # even the right password, for a while
        assert limited.json()["error"] == "rate_limited"
        assert 1 <= int(limited.headers["Retry-After"]) <= 15 * 60
        assert tab.post("/session", json={"name": "cy", "password": PASSWORD}).status_code == 200


def test_a_disabled_user_is_shut_out_at_once(server: LiveServer) -> None:
    member(server, "dee")
    with server.client() as admin:
        token = admin.post("/users", json={"name": "eve"}).json()["token"]["secret"]
    with browser(server) as tab, server.client(token) as eve:
        dee = signed_in(tab, tab.post("/session", json={"name": "dee", "password": PASSWORD}))
        assert dee.get("/brains").status_code == 200 and eve.get("/brains").status_code == 200
        with server.client() as admin:
            for name in ("dee", "eve"):
                changed = admin.patch(f"/users/{name}", json={"disabled": True})
                assert changed.status_code == 200 and changed.json()["disabled"] is True
        assert dee.get("/brains").status_code == 401
        assert eve.get("/brains").status_code == 401
        again = tab.post("/session", json={"name": "dee", "password": PASSWORD})
        assert again.status_code == 401 and again.json()["message"] == "wrong name or password"

        with server.client() as admin:
            assert admin.patch("/users/dee", json={"disabled": False}).json()["disabled"] is False
        assert tab.post("/session", json={"name": "dee", "password": PASSWORD}).status_code == 200
        assert eve.get("/brains").status_code == 401  # tokens stay revoked


def test_a_brains_last_owner_cannot_be_disabled_or_removed(server: LiveServer) -> None:
    member(server, "fay")
    with browser(server) as tab:
        fay = signed_in(tab, tab.post("/session", json={"name": "fay", "password": PASSWORD}))
        assert fay.post("/brains", json={"name": "fays"}).status_code == 201
        with server.client() as admin:
            for method, body in (("PATCH", {"disabled": True}), ("DELETE", None)):
                refused = admin.request(method, "/users/fay", json=body)
                assert refused.status_code == 409 and "'fays'" in refused.json()["message"]
            assert fay.get("/me").status_code == 200  # nothing happened to her
            assert fay.put("/brains/fays/members/owner", json={"role": "owner"}).status_code == 200
            assert admin.delete("/users/fay").status_code == 204
            assert fay.get("/me").status_code == 401
            assert "fay" not in [u["name"] for u in admin.get("/users").json()]
            assert admin.get("/brains/fays").status_code == 200  # the brain stays, owned

            me = admin.get("/me").json()["user"]["name"]
            itself = admin.patch(f"/users/{me}", json={"disabled": True})
            assert itself.status_code == 409 and "yourself" in itself.json()["message"]


def test_only_admins_invite_list_and_manage_people(server: LiveServer) -> None:
    member(server, "gus")
    with browser(server) as tab:
        gus = signed_in(tab, tab.post("/session", json={"name": "gus", "password": PASSWORD}))
        for response in (
            gus.get("/people"),
            gus.post("/invites", json={"name": "hal"}),
            gus.patch("/users/owner", json={"disabled": True}),
            gus.delete("/users/owner"),
            gus.patch("/users/gus", json={"is_admin": True}),
        ):
            assert response.status_code == 403, response.text
        assert gus.get("/users").status_code == 200  # names stay listable, to share brains
    with server.client() as admin:
        people = {p["name"]: p for p in admin.get("/people").json()}
        assert "hal" not in people and not people["gus"]["is_admin"]
        assert not people["owner"]["disabled"]
        limited = admin.post("/tokens", json={"name": "one brain", "brains": []}).json()
    with server.client(limited["secret"]) as narrow:  # an admin's narrowed token is not enough
        assert narrow.get("/people").status_code == 403


def test_the_tokens_page_calls_list_create_and_revoke(server: LiveServer) -> None:
    member(server, "ivy")
    with browser(server) as tab:
        ivy = signed_in(tab, tab.post("/session", json={"name": "ivy", "password": PASSWORD}))
        ivy.post("/brains", json={"name": "ivys"})
        ivy.post("/brains", json={"name": "other"})
        assert ivy.get("/tokens").json() == []  # the session's own token is not listed
        made = ivy.post("/tokens", json={"name": "extension", "scope": "read", "brains": ["ivys"]})
        assert made.status_code == 201
        issued = made.json()
        brain_id = ivy.get("/brains/ivys").json()["id"]
        assert issued["secret"].startswith("loci_") and issued["brain_ids"] == [brain_id]
        (listed,) = ivy.get("/tokens").json()
        assert "secret" not in listed and listed["name"] == "extension"
        assert listed["scope"] == "read" and listed["last_used_at"] is None

        with server.client(issued["secret"]) as extension:
            assert [b["name"] for b in extension.get("/brains").json()] == ["ivys"]
            assert extension.post("/brains/ivys/notes", json={"text": "x"}).status_code == 403
            (listed,) = ivy.get("/tokens").json()
            assert listed["last_used_at"] is not None
            assert ivy.delete(f"/tokens/{issued['id']}").status_code == 204
            assert extension.get("/brains").status_code == 401
        assert ivy.get("/tokens").json()[0]["revoked"] is True


def test_changing_a_password_needs_the_current_one(server: LiveServer) -> None:
    member(server, "jo")
    new = "a much better passphrase"
    with browser(server) as first, browser(server) as second:
        jo = signed_in(first, first.post("/session", json={"name": "jo", "password": PASSWORD}))
        other = signed_in(
            second, second.post("/session", json={"name": "jo", "password": PASSWORD})
        )
        wrong = jo.put("/me/password", json={"current_password": "nope", "new_password": new})
        assert wrong.status_code == 403
        missing = jo.put("/me/password", json={"new_password": new})
        assert missing.status_code == 403
        body = {"current_password": PASSWORD, "new_password": new}
        assert jo.put("/me/password", json=body).status_code == 204
        assert other.get("/me").status_code == 401  # the other browser is signed out
        assert jo.get("/me").status_code == 200  # this one stays
    with browser(server) as tab:
        assert tab.post("/session", json={"name": "jo", "password": PASSWORD}).status_code == 401
        assert tab.post("/session", json={"name": "jo", "password": new}).status_code == 200
    with server.client() as owner:  # a token-only user sets a first password without one
        assert owner.put("/me/password", json={"new_password": new}).status_code == 204
    with browser(server) as tab:
        assert tab.post("/session", json={"name": "owner", "password": new}).status_code == 200
