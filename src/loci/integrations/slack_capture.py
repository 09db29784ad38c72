"""Slack capture (seed 004): a message someone writes in Slack is saved into their brain, and a
reply in its thread says so — the confirmation makes the capture loop visible.

    delivery ─ signature (before anything is parsed) ─ url_verification? → the challenge
      └─ a person's message ─ linked Slack user? (else refused, logged) ─ may still write?
           └─ event_id claimed once ─ `Loci.save` (an inbox draft, indexed in seconds)
                └─ after the answer: `chat.postMessage` in the message's thread

A retried delivery (same event_id) saves nothing and posts nothing again; a crash while saving
releases the claim so Slack's retry does the work. Slack wants an answer within three seconds,
so the reply is posted after answering (`confirm`), never before.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from loci.auth.accounts import Accounts
from loci.errors import Conflict, FileTooLarge, InvalidInput, NotFound
from loci.integrations.signing import verify_slack
from loci.integrations.slack_api import SlackWebApi
from loci.integrations.slack_events import (
    Ignored,
    SlackMessage,
    UrlVerification,
    read_delivery,
)
from loci.service import Loci

log = logging.getLogger(__name__)

DELIVERY_SOURCE = "slack"
CLAIM_LEASE_S = 120.0  # a handler silent this long crashed: Slack's next retry may take over
KEEP_DELIVERIES_S = 3 * 86400.0  # Slack retries for minutes; remember ids for days anyway
Outcome = Literal["challenge", "saved", "duplicate", "ignored", "refused", "failed"]


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


def escape(text: str) -> str:
    """Text as Slack shows it literally: its three control characters escaped."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


class SlackCapture:
    def __init__(
        self,
        loci: Loci,
        accounts: Accounts,
        signing_secret: str,
        api: SlackWebApi | None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.loci = loci
        self.accounts = accounts
        self.store = loci.store.integrations
        self._signing_secret = signing_secret
        self.api = api
        self.clock = clock

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
            return SlackResult("refused", "this Slack user is not linked to a Loci user")
        brain = self.loci.store.get_brain_by_id(identity.brain_id)
        user = self.accounts.accounts.get_user(identity.user_id)
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
            captured = self.loci.save(brain, message.text, source=message.source, actor=user.name)
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

    @staticmethod
    def _reply(message: SlackMessage, text: str) -> Reply:
        return Reply(message.channel, message.thread_ts, text)

    def confirm(self, result: SlackResult) -> None:
        """Post the result's reply in its thread (after Slack has had its answer)."""
        if result.reply is None:
            return
        if self.api is None:
            log.info("slack: no bot token configured, so no confirmation is posted")
            return
        reply = result.reply
        self.api.post_message(reply.channel, reply.text, thread_ts=reply.thread_ts)
