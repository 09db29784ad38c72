"""Slack's side of the Slack capture suites: the app's secrets, the workspace and its people,
and deliveries signed as Slack signs them to a live server."""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from dataclasses import dataclass
from typing import Any

import httpx

from tests.support.fake_slack import FakeSlack
from tests.support.live_server import LiveServer
from tests.support.waiting import eventually

SIGNING_SECRET = "8f742231b10e8888abcd99yyyzzz85a5"

BOT_TOKEN = "xoxb-17653672481-19874698323-pdFZKVeTuE8sk7oOcBrzbqgy"

TEAM, ALICE_SLACK, STRANGER_SLACK = "T0001", "U0ALICE", "U0NOBODY"

EVENTS = "/integrations/slack/events"


@dataclass
class Slack:
    server: LiveServer
    fake: FakeSlack
    alice: str  # her Loci token
    counter: int = 0

    def api(self) -> httpx.Client:
        """A client with no Loci token: Slack has none."""
        return self.server.client("")

    def settled(self) -> None:
        """Wait until the server has done all it will do about the deliveries so far (its
        replies to Slack are posted after it has answered the delivery): then what Slack was
        sent is all it will be sent."""
        eventually(self.server.idle, timeout=60)

    def deliver(
        self,
        payload: dict[str, Any] | bytes,
        *,
        secret: str = SIGNING_SECRET,
        at: float | None = None,
        tamper: bool = False,
    ) -> httpx.Response:
        """POST a delivery signed as Slack signs it (v0, HMAC-SHA256 of v0:timestamp:body);
        bytes are sent as they are."""
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        stamp = str(int(time.time() if at is None else at))
        base = b"v0:" + stamp.encode() + b":" + body
        signature = "v0=" + hmac.new(secret.encode(), base, hashlib.sha256).hexdigest()
        if tamper:
            body = body.replace(b"Thursday", b"Saturday")
        headers = {
            "X-Slack-Request-Timestamp": stamp,
            "X-Slack-Signature": signature,
            "Content-Type": "application/json",
        }
        with self.api() as api:
            return api.post(EVENTS, content=body, headers=headers)

    def message(self, text: str, *, user: str = ALICE_SLACK, **event: Any) -> dict[str, Any]:
        """An event_callback for a message, with a fresh event id and ts."""
        self.counter += 1
        ts = f"17123456{self.counter:02d}.000100"
        return {
            "token": "deprecated-verification-token",
            "team_id": TEAM,
            "api_app_id": "A0LOCI",
            "type": "event_callback",
            "event_id": f"Ev0{self.counter:04d}",
            "event_time": int(time.time()),
            "event": {
                "type": "message",
                "channel": "C0GARDEN",
                "user": user,
                "text": text,
                "ts": ts,
                "channel_type": "channel",
                **event,
            },
        }

    def items(self) -> list[dict[str, Any]]:
        """The brain's kept items (what a capture writes first)."""
        with self.server.client(self.alice) as api:
            found: list[dict[str, Any]] = api.get("/brains/notes/files").json()
        return [d for d in found if d["kind"] == "item"]

    def search(self, query: str, timeout: float = 60) -> list[dict[str, Any]]:
        """Search alice's brain until something matches (indexing takes a moment)."""
        deadline = time.monotonic() + timeout
        with self.server.client(self.alice) as api:
            while True:
                hits: list[dict[str, Any]] = api.post(
                    "/brains/notes/search", json={"query": query, "mode": "text"}
                ).json()["hits"]
                if hits or time.monotonic() > deadline:
                    return hits
                time.sleep(0.1)
