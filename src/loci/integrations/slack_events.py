"""What a Slack Events API delivery asks of us, read from its (already verified) JSON.

    url_verification          → answer the challenge (Slack checking the request URL)
    event_callback + message  → a message a person wrote: capture it …
      … unless it asks Loci   → answer it (see below)
    anything else             → ignored, with the reason (bot messages, edits, joins, …)

What asks Loci (`SlackMessage.asks`, the question with the cue removed):
    an `app_mention` event    → "@Loci when is the census?" anywhere the app is
    a direct message (`im`)   → starting with "?" or "ask " ("? when is the census")
A channel message that mentions the app arrives twice, as `message` and as `app_mention`: the
`message` copy is ignored when the payload names the app's bot user (`authorizations`), so it is
answered once and not also captured.

Only a plain message counts: any `subtype` (message_changed, channel_join, bot_message, …) or
a `bot_id` (our own confirmation replies among them) is ignored, so the bot never captures
itself and an edit never saves a second copy.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from typing import Any

from loci.errors import InvalidInput
from loci.json_input import read_json
from loci.nul import refuse_nul

SLACK_ID = re.compile(r"^[A-Z0-9][A-Za-z0-9_-]{0,40}$")
SLACK_TS = re.compile(r"^\d{1,12}(\.\d{1,9})?$")
MESSAGE_EVENTS = frozenset({"message", "app_mention"})
ASK_PREFIX = re.compile(r"^\s*(?:\?|ask\s)\s*", re.IGNORECASE)
MENTION = re.compile(r"<@([A-Z0-9][A-Za-z0-9_-]{0,40})(?:\|[^>]*)?>")


@dataclass(frozen=True)
class UrlVerification:
    challenge: str


@dataclass(frozen=True)
class SlackMessage:
    event_id: str
    team_id: str
    user_id: str
    channel: str
    ts: str
    thread_ts: str  # where the confirmation goes: the message's thread, or a new one under it
    text: str  # as Markdown; when `asks`, the question without its cue (mention or prefix)
    asks: bool = False  # a question for Loci: answered, not captured
    direct: bool = False  # a direct message to the app (channel_type "im")

    @property
    def in_thread(self) -> bool:
        """Written as a reply inside a thread (not the message that starts one)."""
        return self.thread_ts != self.ts

    @property
    def source(self) -> str:
        """The capture's source ref (provider:id): the message's permanent coordinates."""
        return f"slack:{self.team_id}/{self.channel}/{self.ts}"


@dataclass(frozen=True)
class Ignored:
    reason: str


SlackDelivery = UrlVerification | SlackMessage | Ignored


def _slack_id(value: Any) -> str | None:
    return value if isinstance(value, str) and SLACK_ID.match(value) else None


def read_delivery(body: bytes) -> SlackDelivery:
    """The delivery in `body`; `InvalidInput` if it is not a Slack Events API payload."""
    payload = read_json(body, "the body")
    if not isinstance(payload, dict):
        raise InvalidInput("the body is not a JSON object")
    refuse_nul("the body", payload)
    kind = payload.get("type")
    if kind == "url_verification":
        challenge = payload.get("challenge")
        if not isinstance(challenge, str) or not challenge or len(challenge) > 500:
            raise InvalidInput("url_verification without a challenge")
        return UrlVerification(challenge)
    if kind != "event_callback":
        return Ignored(f"delivery type {str(kind)[:40]!r}")
    event = payload.get("event")
    if not isinstance(event, dict):
        raise InvalidInput("event_callback without an event")
    if event.get("type") not in MESSAGE_EVENTS:
        return Ignored(f"event type {str(event.get('type'))[:40]!r}")
    if event.get("subtype") is not None:
        return Ignored(f"message subtype {str(event.get('subtype'))[:40]!r}")
    if event.get("bot_id") or event.get("bot_profile"):
        return Ignored("a bot's message")
    event_id = payload.get("event_id")
    team_id = _slack_id(payload.get("team_id")) or _slack_id(event.get("team"))
    user_id = _slack_id(event.get("user"))
    channel = _slack_id(event.get("channel"))
    ts = event.get("ts")
    if not isinstance(event_id, str) or not 0 < len(event_id) <= 100:
        raise InvalidInput("event_callback without an event_id")
    if not (team_id and user_id and channel and isinstance(ts, str) and SLACK_TS.match(ts)):
        raise InvalidInput("a message event needs team_id, user, channel and ts")
    thread_ts = event.get("thread_ts")
    if not (isinstance(thread_ts, str) and SLACK_TS.match(thread_ts)):
        thread_ts = ts
    raw = event["text"] if isinstance(event.get("text"), str) else ""
    bots = _bot_users(payload)
    direct = event.get("channel_type") == "im"
    asks = event["type"] == "app_mention"
    if asks:
        raw = _without_mentions(raw, bots)
    elif not direct and any(m.group(1) in bots for m in MENTION.finditer(raw)):
        return Ignored("a message that mentions the app (answered as its app_mention)")
    elif direct and ASK_PREFIX.match(raw):
        asks, raw = True, ASK_PREFIX.sub("", raw, count=1)
    text = plain_text(raw)
    if not text.strip():
        return Ignored("a question without words" if asks else "a message without text")
    return SlackMessage(
        event_id, team_id, user_id, channel, ts, thread_ts, text.strip() if asks else text,
        asks=asks, direct=direct,
    )  # fmt: skip


def _bot_users(payload: dict[str, Any]) -> set[str]:
    """The app's own bot user ids, as the delivery names them (who an @-mention is for)."""
    found = payload.get("authorizations")
    entries = found if isinstance(found, list) else []
    return {
        a["user_id"]
        for a in entries
        if isinstance(a, dict) and a.get("is_bot") and _slack_id(a.get("user_id"))
    }


def _without_mentions(text: str, bots: set[str]) -> str:
    """The question in an app_mention: the app's own mentions removed (the leading one, when the
    delivery does not say which user the app is)."""
    if bots:
        return MENTION.sub(lambda m: "" if m.group(1) in bots else m.group(0), text)
    return re.sub(r"^\s*" + MENTION.pattern, "", text, count=1)


LINK = re.compile(r"<((?:https?|mailto):[^|>\s]+)(?:\|([^>]*))?>")
SPECIAL = re.compile(r"<!(here|channel|everyone)(?:\|[^>]*)?>")


def plain_text(value: Any) -> str:
    """Slack's message markup as Markdown: `<url|label>` as a link, `<!here>` as @here, and
    the three characters Slack escapes (&, <, >) back as themselves. Mentions (`<@U123>`)
    stay as they are: the user id is what identifies the person."""
    if not isinstance(value, str):
        return ""
    text = LINK.sub(lambda m: f"[{m.group(2)}]({m.group(1)})" if m.group(2) else m.group(1), value)
    text = SPECIAL.sub(lambda m: "@" + m.group(1), text)
    return html.unescape(text) if "&" in text else text
