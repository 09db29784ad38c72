"""Slack capture: a message someone writes in Slack is saved into their brain, and a
reply in its thread says so — the confirmation makes the capture loop visible.

    delivery ─ signature (before anything is parsed) ─ url_verification? → the challenge
      └─ a person's message ─ linked Slack user? (else refused, logged) ─ may still write?
           └─ event_id claimed once ─ `Library.save` (an inbox draft, indexed in seconds)
                └─ after the answer: `chat.postMessage` in the message's thread

A retried delivery (same event_id) saves nothing and posts nothing again; a crash while saving
releases the claim so Slack's retry does the work. Slack wants an answer within three seconds,
so the reply is posted after answering (`confirm`), never before.

A message that asks Loci (`SlackMessage.asks`; in a DM, also a reply in a thread Loci answers
there) is answered instead (`loci.integrations.slack_ask`): checked and claimed here, before
Slack's 200, and answered in `confirm`, after it — asking takes longer than three seconds.
Someone not linked who asks is told, in the thread, how to get linked.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from loci.auth.accounts import Accounts
from loci.auth.records import User
from loci.errors import Conflict, FileTooLarge, InvalidInput, LociError, NotFound
from loci.integrations.signing import verify_slack
from loci.integrations.slack_api import SlackWebApi
from loci.integrations.slack_ask import Question, SlackAnswers
from loci.integrations.slack_events import (
    Ignored,
    SlackMessage,
    UrlVerification,
    read_delivery,
)
from loci.integrations.slack_format import escape
from loci.models import Brain
from loci.service import Loci

log = logging.getLogger(__name__)

DELIVERY_SOURCE = "slack"
CLAIM_LEASE_S = 120.0  # a handler silent this long crashed: Slack's next retry may take over
ASK_LEASE_S = 600.0  # an answer (search, then a model) may take minutes, never this long
KEEP_DELIVERIES_S = 3 * 86400.0  # Slack retries for minutes; remember ids for days anyway
Outcome = Literal["challenge", "saved", "asked", "duplicate", "ignored", "refused", "failed"]


@dataclass(frozen=True)
class Reply:
    channel: str
    thread_ts: str
    text: str


@dataclass(frozen=True)
class SlackResult:
    outcome: Outcome
    detail: str = ""
    challenge: str | None = None
    reply: Reply | None = None  # to post once Slack has its answer
    question: Question | None = None  # to answer (and post) once Slack has its answer

    @property
    def follows_up(self) -> bool:
        """Whether `SlackCapture.confirm` has something to do after the 200."""
        return self.reply is not None or self.question is not None


class SlackCapture:
    def __init__(
        self,
        loci: Loci,
        accounts: Accounts,
        signing_secret: str,
        api: SlackWebApi | None,
        clock: Callable[[], float] = time.time,
        answers: SlackAnswers | None = None,
    ) -> None:
        self.loci = loci
        self.accounts = accounts
        self.store = loci.store.integrations
        self._signing_secret = signing_secret
        self.api = api
        self.clock = clock
        self.answers = answers or SlackAnswers(loci)

    def handle(self, body: bytes, timestamp: str | None, signature: str | None) -> SlackResult:
        """One Events API delivery, given as received. `Unauthenticated` if Slack did not sign
        it; `InvalidInput` if it is signed but not an Events API payload."""
        now = self.clock()
        verify_slack(self._signing_secret, timestamp, signature, body, now)
        delivery = read_delivery(body)
        if isinstance(delivery, UrlVerification):
            return SlackResult("challenge", challenge=delivery.challenge)
        if isinstance(delivery, Ignored):
            log.debug("slack: ignored %s", delivery.reason)
            return SlackResult("ignored", delivery.reason)
        return self._capture(delivery, now)

    def _capture(self, message: SlackMessage, now: float) -> SlackResult:
        who = f"{message.team_id}/{message.user_id}"
        identity = self.store.slack_identity(message.team_id, message.user_id)
        if identity is None:
            log.warning("slack: refused a message from %s: not linked (loci slack link)", who)
            if message.asks:
                return self._unlinked(message, now)
            return SlackResult("refused", "this Slack user is not linked to a Loci user")
        brain = self.loci.store.get_brain_by_id(identity.brain_id)
        user = self.accounts.accounts.get_user(identity.user_id)
        if (
            message.direct
            and message.in_thread
            and not message.asks
            and self.answers.thread_conversation(message, user, brain) is not None
        ):
            message = dataclasses.replace(message, asks=True)  # a follow-up in an answer's thread
        if message.asks:
            return self._ask(message, user, brain, now)
        if not self.accounts.user_may_write(user, brain):
            log.warning(
                "slack: refused a message from %s: %s may not write brain %r",
                who, user.name, brain.name,
            )  # fmt: skip
            return SlackResult("refused", "the linked Loci user may not write that brain")
        if not self.store.claim_delivery(DELIVERY_SOURCE, message.event_id, now, CLAIM_LEASE_S):
            log.info("slack: event %s was already handled", message.event_id)
            return SlackResult("duplicate", "this event was already handled")
        try:
            captured = self.loci.library.save(
                brain, message.text, source=message.source, actor=user.name
            )
        except (InvalidInput, FileTooLarge, NotFound, Conflict) as error:
            # The message itself cannot be kept: retrying would fail the same way.
            self.store.finish_delivery(DELIVERY_SOURCE, message.event_id, now)
            log.warning("slack: could not save a message from %s: %s", who, error.message)
            text = f"Could not save this to Loci: {escape(error.message)}"
            return SlackResult("failed", error.message, reply=self._reply(message, text))
        except BaseException:
            self.store.release_delivery(DELIVERY_SOURCE, message.event_id)
            raise
        self.store.finish_delivery(DELIVERY_SOURCE, message.event_id, now)
        self.store.purge_deliveries(now - KEEP_DELIVERIES_S)
        draft = captured.draft
        log.info("slack: saved a message from %s into %s as %s", who, brain.name, draft.path)
        verb = "Already saved" if captured.deduped else "Saved"
        text = f"{verb} to Loci ({escape(brain.name)}): “{escape(draft.title)}” — {draft.path}"
        return SlackResult("saved", draft.path, reply=self._reply(message, text))

    def _unlinked(self, message: SlackMessage, now: float) -> SlackResult:
        """Someone Loci does not know asked: say (once) how to get linked, and ask nothing."""
        if not self.store.claim_delivery(DELIVERY_SOURCE, message.event_id, now, CLAIM_LEASE_S):
            return SlackResult("duplicate", "this event was already handled")
        self.store.finish_delivery(DELIVERY_SOURCE, message.event_id, now)
        text = (
            "Loci does not know who you are yet, so it cannot answer you. Ask a Loci "
            "administrator to link your Slack account: "
            f"`loci slack link --team {message.team_id} --user {message.user_id} "
            "--as <your Loci user> --brain <brain>`"
        )
        return SlackResult("refused", "this Slack user is not linked to a Loci user",
                           reply=self._reply(message, text))  # fmt: skip

    def _ask(self, message: SlackMessage, user: User, brain: Brain, now: float) -> SlackResult:
        who = f"{message.team_id}/{message.user_id}"
        if self.api is None:
            log.warning("slack: cannot answer %s: no bot token configured to reply with", who)
            return SlackResult("refused", "no bot token is configured to answer with")
        if not self.accounts.user_may_read(user, brain):
            log.warning(
                "slack: refused a question from %s: %s may not read brain %r",
                who, user.name, brain.name,
            )  # fmt: skip
            text = "Your linked Loci user may not read its brain any more, so Loci cannot answer."
            return SlackResult("refused", "the linked Loci user may not read that brain",
                               reply=self._reply(message, text))  # fmt: skip
        if not self.store.claim_delivery(DELIVERY_SOURCE, message.event_id, now, ASK_LEASE_S):
            log.info("slack: event %s was already handled", message.event_id)
            return SlackResult("duplicate", "this event was already handled")
        may_save = self.accounts.user_may_write(user, brain)
        return SlackResult("asked", brain.name, question=Question(message, user, brain, may_save))

    @staticmethod
    def _reply(message: SlackMessage, text: str) -> Reply:
        return Reply(message.channel, message.thread_ts, text)

    def confirm(self, result: SlackResult) -> None:
        """After Slack has had its answer: answer the result's question, if it has one, and
        post the reply in its thread."""
        reply = result.reply
        if result.question is not None:
            reply = self._answer(result.question)
        if reply is None:
            return
        if self.api is None:
            log.info("slack: no bot token configured, so no confirmation is posted")
            return
        self.api.post_message(reply.channel, reply.text, thread_ts=reply.thread_ts)

    def _answer(self, question: Question) -> Reply:
        message = question.message
        try:
            text = self.answers.answer(question)
        except LociError as error:
            log.warning("slack: could not answer event %s: %s", message.event_id, error.message)
            text = f"Loci could not answer this: {escape(error.message)}"
        except BaseException:
            # Slack has had its 200 and will not retry: the claim goes, so a manual resend may.
            self.store.release_delivery(DELIVERY_SOURCE, message.event_id)
            raise
        now = self.clock()
        self.store.finish_delivery(DELIVERY_SOURCE, message.event_id, now)
        self.store.purge_deliveries(now - KEEP_DELIVERIES_S)
        return self._reply(message, text)
