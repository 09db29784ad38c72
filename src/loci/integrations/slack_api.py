"""The one call Loci makes to Slack's Web API: `chat.postMessage`, the capture's confirmation.

JSON body, the bot token (`xoxb-…`) as a bearer, and Slack's envelope in reply: `{"ok": true}`
or `{"ok": false, "error": "channel_not_found"}` (often with HTTP 200). The base URL is a
setting, so a test can point it at a server on loopback. The token never reaches a log line.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import httpx

log = logging.getLogger(__name__)
DEFAULT_API_BASE = "https://slack.com/api"


@dataclass(frozen=True)
class SlackWebApi:
    bot_token: str = field(repr=False)
    base_url: str = DEFAULT_API_BASE
    timeout_s: float = 10.0

    def post_message(self, channel: str, text: str, *, thread_ts: str | None = None) -> bool:
        """Post `text` in `channel` (in the thread of `thread_ts`); True if Slack took it.
        A failure is logged with Slack's error code and never raised: the capture it confirms
        is already saved."""
        body: dict[str, str] = {"channel": channel, "text": text}
        if thread_ts:
            body["thread_ts"] = thread_ts
        url = self.base_url.rstrip("/") + "/chat.postMessage"
        headers = {"Authorization": f"Bearer {self.bot_token}"}
        try:
            response = httpx.post(url, json=body, headers=headers, timeout=self.timeout_s)
            reply = response.json() if response.content else {}
        except (httpx.HTTPError, ValueError) as error:
            log.warning("slack: chat.postMessage failed: %s", type(error).__name__)
            return False
        if response.status_code != 200 or not isinstance(reply, dict) or not reply.get("ok"):
            code = reply.get("error") if isinstance(reply, dict) else None
            log.warning("slack: chat.postMessage refused (HTTP %s, %s)", response.status_code, code)
            return False
        return True
