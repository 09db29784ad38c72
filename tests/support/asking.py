"""Asking a brain over HTTP: reading `/ask`'s event stream as a browser's EventSource does."""

from __future__ import annotations

import json
from typing import Any

import httpx


def events(api: httpx.Client, brain: str, body: dict[str, Any]) -> list[tuple[str, Any]]:
    """Read the stream the way a browser's EventSource does: `event:` then `data:` lines."""
    received: list[tuple[str, Any]] = []
    with api.stream("POST", f"/brains/{brain}/ask", json=body) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:") and kind:
                received.append((kind, json.loads(line[5:])))
    return received


def ask_for_conversation(api: httpx.Client, brain: str, question: str) -> int:
    """Ask (no model configured: the extractive answer) and return the conversation's id."""
    done = None
    with api.stream("POST", f"/brains/{brain}/ask", json={"question": question}) as response:
        assert response.status_code == 200
        kind = None
        for line in response.iter_lines():
            if line.startswith("event:"):
                kind = line[6:].strip()
            elif line.startswith("data:") and kind == "done":
                done = json.loads(line[5:])
    assert done is not None, "the answer stream ended without `done`"
    conversation_id: int = done["conversation_id"]
    return conversation_id
