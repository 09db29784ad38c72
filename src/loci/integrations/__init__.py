"""Pushes from outside into a brain: Slack capture and signed webhooks.

    signing        HMAC request signatures (Slack's v0, Loci's t=…,v1=…), replay window
    slack_events   what a Slack Events API delivery asks for
    slack_api      chat.postMessage, the capture's confirmation (or the answer) in the thread
    slack_capture  verify → filter → linked user → save (or ask) once per event → confirm
    slack_ask      a question from Slack answered from the linked brain, a thread = a conversation
    slack_format   an answer and its sources as Slack mrkdwn, escaped and capped
    slack_links    `loci slack link`: which Loci user and brain a Slack user writes as
    webhooks       per-integration secrets (sealed) and verifying a signed push

Both sit beside `Loci` and `Accounts` (they call them, never the HTTP layer); the API gets them
assembled in an `Integrations`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

# Type-only: `loci slack link` imports `slack_links` from here and should not pay for the
# capture pipeline (the HTTP client, the answer pipeline) at start-up.
if TYPE_CHECKING:
    from loci.integrations.slack_capture import SlackCapture
    from loci.integrations.webhooks import Webhooks


@dataclass(frozen=True)
class Integrations:
    webhooks: Webhooks
    slack: SlackCapture | None = None  # None: no signing secret configured, the route is off
