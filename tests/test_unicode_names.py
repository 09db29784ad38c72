"""Brain and user names in any script, over real HTTP on both backends: a brain named in
Japanese is made, reached at its percent-encoded URL, written to and searched; a person named
Jürgen signs in however they spell their name's case or accents, and no second Jürgen can be
made; a name mixing Latin with Cyrillic (a look-alike) is refused with the reason."""

from __future__ import annotations

import time
from urllib.parse import quote

import pytest

from loci.errors import InvalidInput
from loci.names import check_name, user_key
from tests.support.live_server import LiveServer
from tests.support.people import PASSWORD, browser, member, signed_in

pytestmark = pytest.mark.both_backends

BRAIN = "研究ノート"


def test_a_brain_named_in_japanese_is_made_reached_and_searched(server: LiveServer) -> None:
    with server.client() as owner:
        made = owner.post("/brains", json={"name": BRAIN})
        assert made.status_code == 201, made.text
        url = f"/brains/{quote(BRAIN)}"
        assert "%E7%A0%94" in url  # the name travels percent-encoded
        assert owner.get(url).json()["name"] == BRAIN
        note = owner.post(
            f"{url}/notes",
            json={"text": "会議は毎週火曜日の午前十時に始まります。", "title": "会議"},
        )
        assert note.status_code == 201, note.text
        document_id = note.json()["document"]["id"]
        deadline = time.monotonic() + 60
        while owner.get(f"{url}/files/{document_id}").json()["status"] != "ready":
            assert time.monotonic() < deadline, "the note was not indexed in time"
            time.sleep(0.1)
        found = owner.post(f"{url}/search", json={"query": "火曜日", "mode": "text"}).json()
        assert [h["document_id"] for h in found["hits"]] == [document_id]
        assert found["hits"][0]["brain"] == BRAIN
        assert owner.get(f"{url}/files/{document_id}").json()["language"] == "ja"
        status = owner.get(f"{url}/status").json()
        assert status["languages"] == {"ja": 1}
        assert BRAIN in [b["name"] for b in owner.get("/brains").json()]


def test_a_person_named_juergen_is_one_person_however_spelled(server: LiveServer) -> None:
    member(server, "Jürgen")
    for spelling in ("Jürgen", "JÜRGEN", "jurgen"):
        with browser(server) as tab:
            signed_in(tab, tab.post("/session", json={"name": spelling, "password": PASSWORD}))
            assert tab.get("/me").json()["user"]["name"] == "Jürgen"
    with server.client() as admin:
        again = admin.post("/invites", json={"name": "JÜRGEN"})
        assert again.status_code == 409, again.text


def test_a_look_alike_name_is_refused_with_its_reason(server: LiveServer) -> None:
    with server.client() as owner:
        refused = owner.post("/brains", json={"name": "pаypal"})  # a Cyrillic 'а'
    assert refused.status_code in (400, 422)
    assert "mixes alphabets" in refused.text


def test_names_are_kept_in_their_compatibility_form() -> None:
    assert check_name("brain", "заметки") == "заметки"
    assert check_name("brain", "Obsidianメモ") == "Obsidianメモ"  # Latin beside kana: allowed
    with pytest.raises(InvalidInput, match="must be written 'my'"):
        check_name("brain", "ｍｙ")
    # Accents fold for sign-in; the vowel signs of a Devanagari or Thai name do not.
    assert user_key("ÅSA") == "asa"
    assert user_key("नोट्स") == "नोट्स"
