"""Asking Loci from Slack over real HTTP: a live server, deliveries signed as Slack signs them, a
stand-in for Slack's Web API on loopback that receives the answers, and (where the model's
part matters) a scripted chat model on loopback."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loci.auth.records import User
from loci.auth.secret_box import SecretBox
from loci.integrations import Integrations
from loci.integrations.slack_api import SlackWebApi
from loci.integrations.slack_ask import ChatFor, SlackAnswers
from loci.integrations.slack_capture import SlackCapture
from loci.integrations.slack_format import MAX_REPLY, answer_message, to_mrkdwn
from loci.integrations.slack_links import SlackLinks
from loci.integrations.webhooks import Webhooks
from loci.llm.client import Chat, ChatSettings, OpenAICompatibleChat
from loci.service import Loci
from tests.support.fake_slack import FakeSlack
from tests.support.live_server import LiveServer
from tests.support.scripted_llm import Reply, ScriptedLLM
from tests.support.slack import ALICE_SLACK, BOT_TOKEN, SIGNING_SECRET, STRANGER_SLACK, TEAM, Slack

pytestmark = pytest.mark.both_backends
BOT_USER = "U0LOCIBOT"
CENSUS = (
    "# Quokka census\n\nThe quokka census is on Thursday at the east meadow.\n"
    "Counters meet at the north gate at seven.\n"
)
VAULT = "# Vault\n\nThe vault code for the archive room is 4417-ZEBRA.\n"


class Asking(Slack):
    def mention(self, text: str, *, user: str = ALICE_SLACK, **event: Any) -> dict[str, Any]:
        """An app_mention (as Slack sends it, naming the app's bot user in `authorizations`)."""
        payload = self.message(f"<@{BOT_USER}> {text}", user=user, **event)
        payload["event"]["type"] = "app_mention"
        payload["event"].pop("channel_type")
        payload["authorizations"] = [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]
        return payload

    def dm(self, text: str, **event: Any) -> dict[str, Any]:
        payload = self.message(text, channel="D0ALICE", channel_type="im", **event)
        payload["authorizations"] = [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]
        return payload

    def upload(self, token: str, brain: str, name: str, text: str) -> int:
        with self.server.client(token) as api:
            created = api.post(f"/brains/{brain}/files", files={"files": (name, text.encode())})
            assert created.status_code in (200, 201, 202), created.text
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                docs = api.get(f"/brains/{brain}/files", params={"status": "ready"}).json()
                found = [d["id"] for d in docs if d["name"] == name]
                if found:
                    return int(found[0])
                time.sleep(0.1)
        raise AssertionError(f"{name} was never indexed")

    def conversations(self) -> list[dict[str, Any]]:
        with self.server.client(self.alice) as api:
            found: list[dict[str, Any]] = api.get("/brains/notes/conversations").json()
        return found

    def messages(self, conversation_id: int) -> list[dict[str, Any]]:
        with self.server.client(self.alice) as api:
            detail = api.get(f"/brains/notes/conversations/{conversation_id}").json()
        found: list[dict[str, Any]] = detail["messages"]
        return found


class Wiring:
    """Which chat model answers (none: extractive answers), settable per test."""

    def __init__(self) -> None:
        self.chat_for: ChatFor | None = None

    def __call__(self, user: User) -> Chat | None:
        return self.chat_for(user) if self.chat_for is not None else None


@pytest.fixture
def wiring() -> Wiring:
    return Wiring()


@pytest.fixture
def slack(loci: Loci, tmp_path: Path, wiring: Wiring) -> Iterator[Asking]:
    fake = FakeSlack(BOT_TOKEN).start()
    live = LiveServer(loci)
    _, issued = live.accounts.add_user("alice")
    box = SecretBox.from_file(tmp_path / "home" / "secret.key")
    answers = SlackAnswers(loci, wiring)
    capture = SlackCapture(
        loci, live.accounts, SIGNING_SECRET, SlackWebApi(BOT_TOKEN, fake.api_base, 5.0),
        answers=answers,
    )  # fmt: skip
    live.integrations = Integrations(Webhooks(loci.store, box), capture)
    live.start()
    answers.public_url = live.url  # known once it listens
    with live.client(issued.secret) as api:
        assert api.post("/brains", json={"name": "notes"}).status_code == 201
    SlackLinks(live.accounts).link(TEAM, ALICE_SLACK, "alice", "notes")
    yield Asking(live, fake, issued.secret)
    live.stop()
    fake.stop()


def test_a_mention_is_answered_in_its_thread_with_linked_sources(slack: Asking) -> None:
    doc_id = slack.upload(slack.alice, "notes", "census.md", CENSUS)
    payload = slack.mention("When is the quokka census?")
    response = slack.deliver(payload)
    assert response.status_code == 200, response.text
    assert response.json() == {"ok": True, "outcome": "asked"}

    [posted] = slack.fake.wait_for_posts(1)
    assert posted["channel"] == "C0GARDEN"
    assert posted["thread_ts"] == payload["event"]["ts"]
    answer, _, sources = posted["text"].partition("*Sources*\n")
    assert "Thursday" in answer and "[1]" in answer
    link = f"{slack.server.url}/api/v1/brains/notes/files/{doc_id}/download"
    assert sources.startswith(f"[1] <{link}|census.md>, lines ")
    with slack.server.client(slack.alice) as api:  # the link opens the document for her
        opened = api.get(link)
    assert opened.status_code == 200 and "east meadow" in opened.text

    [conversation] = slack.conversations()  # kept as her conversation, as in the web app
    assert [m["role"] for m in slack.messages(conversation["id"])] == ["user", "assistant"]
    assert slack.messages(conversation["id"])[0]["content"] == "When is the quokka census?"
    assert slack.items() == []  # answered, not captured


def test_a_follow_up_in_the_thread_continues_the_conversation(
    slack: Asking, wiring: Wiring
) -> None:
    llm = ScriptedLLM().start()
    try:

        def reply(request: dict[str, Any]) -> Reply:
            system = request["messages"][0]["content"]
            if "You classify a question" in system:
                follow_up = "meet" in request["messages"][-1]["content"]
                intent = "follow_up" if follow_up else "simple_lookup"
                return Reply(json.dumps({"intent": intent, "confidence": 0.9}))
            if "Rewrite the user's latest question" in system:
                return Reply(json.dumps({"rewritten": "Where do quokka census counters meet?"}))
            if "different search queries" in system:
                return Reply(json.dumps({"queries": ["quokka census counters meet"]}))
            if "You judge whether passages" in system:
                numbers = re.findall(r'number="(\d+)"', request["messages"][-1]["content"])
                grades = [{"source": int(n), "reasoning": "states it", "relevance": "relevant",
                           "score": 0.9} for n in numbers]  # fmt: skip
                return Reply(json.dumps({"grades": grades}))
            if "You answer the user's question" in system:
                return Reply("**Thursday**, at the [east meadow](https://example.org/map) [1].")
            return Reply("ok")

        llm.responder = reply
        settings = ChatSettings(base_url=llm.base_url, model="scripted", timeout_s=5.0,
                                backoff_base_s=0.01)  # fmt: skip
        wiring.chat_for = lambda user: OpenAICompatibleChat(settings)
        slack.upload(slack.alice, "notes", "census.md", CENSUS)

        first = slack.mention("When is the quokka census?")
        assert slack.deliver(first).json()["outcome"] == "asked"
        [answer] = slack.fake.wait_for_posts(1)
        # Markdown as Slack's mrkdwn: bold with single stars, links as <url|label>
        assert answer["text"].startswith("*Thursday*, at the <https://example.org/map|east meadow>")
        asked_before = len(llm.requests)

        thread = first["event"]["ts"]
        follow = slack.mention("And where do the counters meet?", thread_ts=thread)
        assert slack.deliver(follow).json()["outcome"] == "asked"
        posts = slack.fake.wait_for_posts(2)
        assert posts[1]["thread_ts"] == thread
    finally:
        llm.stop()

    # the follow-up was read with the thread's history: the first question reached the model
    later = json.dumps(llm.requests[asked_before:])
    assert "When is the quokka census?" in later
    [conversation] = slack.conversations()
    questions = [m["content"] for m in slack.messages(conversation["id"]) if m["role"] == "user"]
    assert questions == ["When is the quokka census?", "And where do the counters meet?"]

    # a new mention outside the thread opens a conversation of its own
    assert slack.deliver(slack.mention("Who counts the quokkas?")).json()["outcome"] == "asked"
    slack.fake.wait_for_posts(3)
    assert len(slack.conversations()) == 2


def test_a_question_in_a_dm_and_replies_in_its_thread_are_answered(slack: Asking) -> None:
    slack.upload(slack.alice, "notes", "census.md", CENSUS)
    question = slack.dm("? when is the quokka census")
    assert slack.deliver(question).json()["outcome"] == "asked"
    [answer] = slack.fake.wait_for_posts(1)
    assert answer["channel"] == "D0ALICE" and "Thursday" in answer["text"]
    # in the answer's thread, a reply without the "?" is a follow-up too, not a capture
    reply = slack.dm("where do counters meet", thread_ts=question["event"]["ts"])
    assert slack.deliver(reply).json()["outcome"] == "asked"
    assert len(slack.fake.wait_for_posts(2)) == 2
    [conversation] = slack.conversations()
    assert len(slack.messages(conversation["id"])) == 4
    assert slack.deliver(slack.dm("Ask: who counts")).json()["outcome"] == "saved"  # no cue


def test_a_redelivered_question_is_answered_once(slack: Asking) -> None:
    slack.upload(slack.alice, "notes", "census.md", CENSUS)
    payload = slack.mention("When is the quokka census?")
    first = slack.deliver(payload)
    retry = slack.deliver(payload, at=time.time() + 1)  # Slack re-signs each retry
    assert first.json()["outcome"] == "asked"
    assert retry.status_code == 200 and retry.json()["outcome"] == "duplicate"
    slack.fake.wait_for_posts(1)
    slack.settled()
    assert len(slack.fake.posted) == 1
    [conversation] = slack.conversations()
    assert len(slack.messages(conversation["id"])) == 2


def test_an_unlinked_asker_is_told_how_to_link_and_nothing_is_asked(
    slack: Asking, wiring: Wiring
) -> None:
    asked: list[str] = []
    wiring.chat_for = lambda user: asked.append(user.name)
    payload = slack.mention("When is the quokka census?", user=STRANGER_SLACK)
    response = slack.deliver(payload)
    assert response.status_code == 200 and response.json()["outcome"] == "refused"
    [hint] = slack.fake.wait_for_posts(1)
    assert hint["thread_ts"] == payload["event"]["ts"]
    assert f"loci slack link --team {TEAM} --user {STRANGER_SLACK}" in hint["text"]
    assert slack.deliver(payload, at=time.time() + 1).json()["outcome"] == "duplicate"
    slack.settled()
    assert len(slack.fake.posted) == 1  # the hint once
    assert asked == [] and slack.conversations() == []
    assert BOT_TOKEN not in hint["text"] and SIGNING_SECRET not in hint["text"]


def test_an_answer_never_carries_passages_the_asker_cannot_read(
    slack: Asking, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("DEBUG", logger="loci")
    with slack.server.client() as owner:
        assert owner.post("/brains", json={"name": "vault"}).status_code == 201
    slack.upload(slack.server.owner_token, "vault", "vault.md", VAULT)
    slack.upload(slack.alice, "notes", "census.md", CENSUS)

    slack.deliver(slack.mention("What is the vault code for the archive room?"))
    [answer] = slack.fake.wait_for_posts(1)
    assert "4417" not in answer["text"] and "vault.md" not in answer["text"]

    # alice leaves her own brain (the owner stays): now she may read nothing there
    with slack.server.client(slack.alice) as alice:
        assert alice.put("/brains/notes/members/owner", json={"role": "owner"}).status_code < 300
    with slack.server.client() as owner:
        assert owner.delete("/brains/notes/members/alice").status_code < 300
    response = slack.deliver(slack.mention("When is the quokka census?"))
    assert response.json()["outcome"] == "refused"
    posts = slack.fake.wait_for_posts(2)
    assert "may not read" in posts[1]["text"] and "Thursday" not in posts[1]["text"]
    assert BOT_TOKEN not in caplog.text and SIGNING_SECRET not in caplog.text


def test_plain_messages_are_still_captured_and_a_mention_is_not_captured_too(
    slack: Asking,
) -> None:
    plain = slack.message("The quokka census moved to Friday")
    assert slack.deliver(plain).json()["outcome"] == "saved"
    note = slack.dm("Counters should bring water")  # a DM without the cue is a capture
    assert slack.deliver(note).json()["outcome"] == "saved"
    # a mention arrives twice; its `message` copy is neither captured nor answered again
    doubled = slack.message(f"<@{BOT_USER}> when is the census?")
    doubled["authorizations"] = [{"team_id": TEAM, "user_id": BOT_USER, "is_bot": True}]
    assert slack.deliver(doubled).json()["outcome"] == "ignored"
    posts = slack.fake.wait_for_posts(2)
    assert all(p["text"].startswith("Saved to Loci") for p in posts)
    assert len(slack.items()) == 2


def test_retrieved_text_is_shown_literally_and_the_reply_is_capped() -> None:
    hostile = "<!channel> see <https://evil.example|your bank> & **act now**"
    shown = to_mrkdwn(hostile)
    assert shown.startswith("&lt;!channel&gt; see &lt;https://evil.example|your bank&gt; &amp;")
    assert shown.endswith("*act now*")
    citations: list[dict[str, Any]] = [
        {"number": n, "name": f"notes-{n}.md", "brain": "notes", "document_id": n,
         "page": None, "line_start": 3, "line_end": 9, "heading_path": []}
        for n in range(1, 15)
    ]  # fmt: skip
    text = answer_message("word " * 5000, citations, None)
    assert len(text) <= MAX_REPLY and "shortened" in text
    short = answer_message("The census is on Thursday [1].", citations[:1], None)
    assert short == "The census is on Thursday [1].\n\n*Sources*\n[1] notes-1.md, lines 3–9"
