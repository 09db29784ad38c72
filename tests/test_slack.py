"""Slack capture over real HTTP: a live server, Slack's deliveries signed as Slack signs them,
and a stand-in for Slack's Web API on loopback that receives the confirmation replies."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from loci.auth.accounts import Accounts
from loci.auth.secret_box import SecretBox
from loci.embed.base import Embedder
from loci.errors import InvalidInput
from loci.integrations import Integrations
from loci.integrations.slack_api import SlackWebApi
from loci.integrations.slack_capture import SlackCapture
from loci.integrations.slack_links import SlackLinks
from loci.integrations.webhooks import Webhooks
from loci.service import Loci
from tests.support.cli import run_cli
from tests.support.fake_slack import FakeSlack
from tests.support.live_server import LiveServer
from tests.support.services import make_service, open_store
from tests.support.slack import (
    ALICE_SLACK,
    BOT_TOKEN,
    EVENTS,
    SIGNING_SECRET,
    STRANGER_SLACK,
    TEAM,
    Slack,
)

pytestmark = pytest.mark.both_backends


@pytest.fixture
def slack(loci: Loci, tmp_path: Path) -> Iterator[Slack]:
    fake = FakeSlack(BOT_TOKEN).start()
    live = LiveServer(loci)
    _, issued = live.accounts.add_user("alice")
    box = SecretBox.from_file(tmp_path / "home" / "secret.key")
    capture = SlackCapture(
        loci, live.accounts, SIGNING_SECRET, SlackWebApi(BOT_TOKEN, fake.api_base, 5.0)
    )
    live.integrations = Integrations(Webhooks(loci.store, box), capture)
    live.start()
    with live.client(issued.secret) as api:
        assert api.post("/brains", json={"name": "notes"}).status_code == 201
    SlackLinks(live.accounts).link(TEAM, ALICE_SLACK, "alice", "notes")
    yield Slack(live, fake, issued.secret)
    live.stop()
    fake.stop()


def test_a_signed_message_is_saved_searchable_and_confirmed_in_its_thread(slack: Slack) -> None:
    text = "The quokka census is on Thursday at the east meadow &amp; the <https://example.org/map|map>"
    payload = slack.message(text)
    response = slack.deliver(payload)
    assert response.status_code == 200, response.text
    assert response.json() == {"ok": True, "outcome": "saved"}

    [item] = slack.items()
    assert item["name"] == f"slack:{TEAM}/C0GARDEN/{payload['event']['ts']}"
    hits = slack.search("quokka census")
    assert hits, "the message never became searchable"
    assert "east meadow & the [map](https://example.org/map)" in hits[0]["text"]

    [posted] = slack.fake.wait_for_posts(1)
    assert posted["channel"] == "C0GARDEN"
    assert posted["thread_ts"] == payload["event"]["ts"]  # a new thread under the message
    assert posted["text"].startswith("Saved to Loci (notes)")
    assert slack.fake.refused == []

    # a message written inside a thread is answered in that same thread
    reply_in_thread = slack.message("Bring two quokka counters", thread_ts="1712345600.000100")
    assert slack.deliver(reply_in_thread).json()["outcome"] == "saved"
    posts = slack.fake.wait_for_posts(2)
    assert posts[1]["thread_ts"] == "1712345600.000100"


def test_a_bad_signature_is_401_and_saves_nothing(slack: Slack) -> None:
    payload = slack.message("The quokka census is on Thursday")
    assert slack.deliver(payload, secret="not-the-signing-secret").status_code == 401
    assert slack.deliver(payload, tamper=True).status_code == 401  # body changed after signing
    with slack.api() as api:
        unsigned = api.post(EVENTS, json=payload)
        assert unsigned.status_code == 401
        assert unsigned.json()["error"] == "unauthenticated"
        no_stamp = api.post(EVENTS, json=payload, headers={"X-Slack-Signature": "v0=" + "0" * 64})
        assert no_stamp.status_code == 401
    assert slack.items() == []
    slack.settled()
    assert slack.fake.posted == []


def test_a_signed_body_nested_too_deeply_or_holding_a_nul_is_a_400(slack: Slack) -> None:
    deep = slack.deliver(b"[" * 100_000)
    assert deep.status_code == 400, deep.text
    assert "nests too deeply" in deep.json()["message"]
    nul = slack.deliver(slack.message("The quokka\x00 census"))
    assert nul.status_code == 400, nul.text
    assert "contains a NUL character" in nul.json()["message"]
    assert slack.items() == []
    saved = slack.deliver(slack.message("The quokka census is on Thursday"))  # still serving
    assert saved.status_code == 200 and saved.json()["outcome"] == "saved"


def test_a_stale_or_future_timestamp_is_401_even_when_correctly_signed(slack: Slack) -> None:
    payload = slack.message("Old news about quokkas")
    assert slack.deliver(payload, at=time.time() - 301).status_code == 401
    assert slack.deliver(payload, at=time.time() + 400).status_code == 401
    assert slack.items() == []
    assert slack.deliver(payload, at=time.time() - 200).status_code == 200  # inside the window


def test_url_verification_echoes_the_challenge_only_when_signed(slack: Slack) -> None:
    challenge = {
        "token": "Jhj5dZrVaK7ZwHHjRyZWjbDl",
        "challenge": "3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P",
        "type": "url_verification",
    }
    response = slack.deliver(challenge)
    assert response.status_code == 200
    assert response.json()["challenge"] == challenge["challenge"]
    with slack.api() as api:
        assert api.post(EVENTS, json=challenge).status_code == 401


def test_bot_messages_edits_and_joins_are_ignored(slack: Slack) -> None:
    own_reply = slack.message("Saved to Loci (notes): a quokka", bot_id="B0LOCI")
    bot = slack.message("Deploy finished", subtype="bot_message", bot_id="B0CI")
    edit = slack.message(
        "",
        subtype="message_changed",
        message={"type": "message", "user": ALICE_SLACK, "text": "edited quokka text"},
    )
    join = slack.message("<@U0ALICE> has joined the channel", subtype="channel_join")
    for payload in (own_reply, bot, edit, join):
        response = slack.deliver(payload)
        assert response.status_code == 200
        assert response.json()["outcome"] == "ignored"
    assert slack.items() == []
    slack.settled()
    assert slack.fake.posted == []


def test_an_unlinked_slack_user_is_refused_and_logged(
    slack: Slack, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="loci.integrations")
    response = slack.deliver(slack.message("Let me in", user=STRANGER_SLACK))
    assert response.status_code == 200  # Slack would retry anything else
    assert response.json()["outcome"] == "refused"
    assert any(
        f"{TEAM}/{STRANGER_SLACK}" in r.getMessage() and "not linked" in r.getMessage()
        for r in caplog.records
    )
    assert slack.items() == []


def test_a_linked_user_who_lost_write_access_is_refused(slack: Slack) -> None:
    owner = slack.server.client()
    with slack.server.client(slack.alice) as alice:
        # alice makes the owner co-owner, then the owner demotes her to viewer
        assert alice.put("/brains/notes/members/owner", json={"role": "owner"}).status_code < 300
    with owner:
        assert owner.put("/brains/notes/members/alice", json={"role": "viewer"}).status_code < 300
    response = slack.deliver(slack.message("Still capturing quokkas?"))
    assert response.json()["outcome"] == "refused"
    assert slack.items() == []


def test_a_retried_delivery_is_saved_once(slack: Slack) -> None:
    payload = slack.message("Quokka census moved to Friday")
    first = slack.deliver(payload)
    retry = slack.deliver(payload, at=time.time() + 1)  # Slack re-signs each retry
    assert first.json()["outcome"] == "saved"
    assert retry.status_code == 200 and retry.json()["outcome"] == "duplicate"
    assert len(slack.items()) == 1
    slack.fake.wait_for_posts(1)
    slack.settled()
    assert len(slack.fake.posted) == 1  # and confirmed once


def test_slack_capture_is_off_until_configured(server: LiveServer) -> None:
    with server.client("") as api:
        response = api.post(EVENTS, json={"type": "url_verification", "challenge": "x"})
    assert response.status_code == 404
    assert "not configured" in response.json()["message"]


def test_the_cli_links_lists_and_unlinks_slack_users(
    tmp_path: Path, embedder: Embedder, database_url: str | None
) -> None:
    home = tmp_path / "cli-home"
    env = {"LOCI_DATABASE_URL": database_url} if database_url else {}
    loci = make_service(home, embedder, database_url)
    accounts = Accounts(loci.store)
    accounts.add_user("bea", is_admin=True)  # an admin owns a brain nobody joined yet
    accounts.add_user("cy")
    loci.brain("default")
    with pytest.raises(InvalidInput, match="not a Slack user id"):
        SlackLinks(accounts).link(TEAM, "bea smith", "bea", "default")
    loci.store.close()

    def link(*args: str) -> subprocess.CompletedProcess[str]:
        return run_cli("slack", "link", "--team", TEAM, *args, home=home, env=env)

    missing = link("--user", "U0BEA", "--as", "bea", "--brain", "nope")
    assert missing.returncode == 3 and "nope" in missing.stderr
    no_access = link("--user", "U0CY", "--as", "cy", "--brain", "default")
    assert no_access.returncode == 1 and "may not write" in no_access.stderr
    linked = link("--user", "U0BEA", "--as", "bea", "--brain", "default")
    assert linked.returncode == 0, linked.stderr
    listing = json.loads(run_cli("slack", "list", "--json", home=home, env=env).stdout)
    found = [(i["team_id"], i["slack_user_id"], i["user_name"], i["brain_name"]) for i in listing]
    assert found == [(TEAM, "U0BEA", "bea", "default")]
    unlink = run_cli("slack", "unlink", "--team", TEAM, "--user", "U0BEA", home=home, env=env)
    assert unlink.returncode == 0, unlink.stderr
    store = open_store(home, database_url)
    assert store.integrations.slack_identities() == []
    store.close()


def test_a_delivery_is_claimed_once_and_a_crashed_claim_expires(loci: Loci) -> None:
    """What makes retries safe: one claim per event id; a claim released after a failure, or
    left by a handler that died (older than the lease), can be taken again; a finished one not."""
    deliveries = loci.store.integrations
    now = 1_000_000.0
    assert deliveries.claim_delivery("slack", "Ev1", now, 120)
    assert not deliveries.claim_delivery("slack", "Ev1", now + 1, 120)  # in flight
    assert deliveries.claim_delivery("slack", "Ev1", now + 121, 120)  # its handler died
    deliveries.finish_delivery("slack", "Ev1", now + 122)
    assert not deliveries.claim_delivery("slack", "Ev1", now + 10_000, 120)  # done stays done
    assert deliveries.claim_delivery("other", "Ev1", now, 120)  # ids are per source

    assert deliveries.claim_delivery("slack", "Ev2", now, 120)
    deliveries.release_delivery("slack", "Ev2")  # saving failed: Slack's retry does the work
    assert deliveries.claim_delivery("slack", "Ev2", now + 1, 120)

    assert deliveries.purge_deliveries(now + 50) == 2  # Ev1 (other) and Ev2 are older
    assert not deliveries.claim_delivery("slack", "Ev1", now + 10_000, 120)


def test_a_refused_confirmation_is_logged_without_the_token_and_the_capture_stays(
    slack: Slack, loci: Loci, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG, logger="loci")
    wrong = "xoxb-revoked-0000000000-zzzzzzzzzzzz"
    capture = SlackCapture(
        loci, slack.server.accounts, SIGNING_SECRET, SlackWebApi(wrong, slack.fake.api_base, 5.0)
    )
    payload = slack.message("The quokka boat leaves at nine")
    body = json.dumps(payload).encode()
    stamp = str(int(time.time()))
    digest = hmac.new(SIGNING_SECRET.encode(), f"v0:{stamp}:".encode() + body, hashlib.sha256)
    result = capture.handle(body, stamp, "v0=" + digest.hexdigest())
    assert result.outcome == "saved"
    capture.confirm(result)
    assert slack.fake.refused == ["invalid_auth"] and slack.fake.posted == []
    assert any("invalid_auth" in r.getMessage() for r in caplog.records)
    assert wrong not in caplog.text and SIGNING_SECRET not in caplog.text
    assert len(slack.items()) == 1
