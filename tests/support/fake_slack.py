"""A stand-in for Slack's Web API on 127.0.0.1, for tests: `POST /api/chat.postMessage`.

It checks what Slack checks — a bearer bot token, a JSON body with `channel` and `text` — and
answers as Slack does, `{"ok": true, "channel": …, "ts": …}` or `{"ok": false, "error": …}`
with HTTP 200. Every accepted message is recorded for assertions.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import ApiHandler, Loopback


@dataclass
class FakeSlack:
    bot_token: str
    posted: list[dict[str, Any]] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    _web: Loopback | None = None

    @property
    def api_base(self) -> str:
        assert self._web is not None
        return self._web.url("/api")

    def start(self) -> FakeSlack:
        owner = self

        class Handler(ApiHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if self.path != "/api/chat.postMessage":
                    self._reply({"ok": False, "error": "unknown_method"})
                    return
                if self.headers.get("Authorization") != f"Bearer {owner.bot_token}":
                    owner.refused.append("invalid_auth")
                    self._reply({"ok": False, "error": "invalid_auth"})
                    return
                if not (self.headers.get("Content-Type") or "").startswith("application/json"):
                    owner.refused.append("invalid_form_data")
                    self._reply({"ok": False, "error": "invalid_form_data"})
                    return
                body = json.loads(raw)
                if not body.get("channel") or not body.get("text"):
                    owner.refused.append("no_text")
                    self._reply({"ok": False, "error": "no_text"})
                    return
                owner.posted.append(body)
                self._reply({"ok": True, "channel": body["channel"], "ts": f"{time.time():.6f}"})

            def _reply(self, payload: dict[str, Any]) -> None:
                self.send(200, json.dumps(payload), "application/json; charset=utf-8")

        self._web = Loopback(Handler).start()
        return self

    def stop(self) -> None:
        if self._web is not None:
            self._web.stop()

    def wait_for_posts(self, count: int, timeout: float = 10.0) -> list[dict[str, Any]]:
        deadline = time.monotonic() + timeout
        while len(self.posted) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        return list(self.posted)
