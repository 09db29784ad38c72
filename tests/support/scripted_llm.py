"""A scripted OpenAI-compatible chat server on 127.0.0.1, for tests.

It speaks the real protocol over real HTTP — `POST /v1/chat/completions`, JSON or Server-Sent
Events when `stream` is true — and answers from a script each test writes: a queue of `Reply`s
consumed in order, and/or a `responder` function that picks a reply from the request (e.g. by the
step's system prompt). Every request is recorded for assertions. A reply may carry `tool_calls`
(OpenAI function calls) for agent loops; their `arguments` go out as JSON text, or as given when
already a string (so a test can send arguments that are not JSON).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.loopback import ApiHandler, Loopback


@dataclass
class Reply:
    text: str = ""
    status: int = 200
    delay_s: float = 0.0  # before the response starts
    token_delay_s: float = 0.0  # between streamed pieces
    retry_after: str | None = None
    malformed: bool = False  # a 200 whose body is not a completion
    truncate: bool = False  # a stream that stops without its end marker
    error_message: str = "scripted failure"
    tool_calls: list[ToolCallSpec] = field(default_factory=list)


@dataclass
class ToolCallSpec:
    name: str
    arguments: dict[str, Any] | str = field(default_factory=dict)
    id: str | None = None


def tool_call(name: str, arguments: dict[str, Any] | str | None = None) -> ToolCallSpec:
    return ToolCallSpec(name, {} if arguments is None else arguments)


@dataclass
class ScriptedLLM:
    script: list[Reply] = field(default_factory=list)
    responder: Callable[[dict[str, Any]], Reply] | None = None
    requests: list[dict[str, Any]] = field(default_factory=list)
    _web: Loopback | None = None

    @property
    def base_url(self) -> str:
        assert self._web is not None
        return self._web.url("/v1")

    def start(self) -> ScriptedLLM:
        owner = self

        class Handler(ApiHandler):
            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                body["_authorization"] = self.headers.get("Authorization")
                owner.requests.append(body)
                if self.path != "/v1/chat/completions":
                    self._json(404, {"error": {"message": "no such route"}})
                    return
                reply = owner._next(body)
                time.sleep(reply.delay_s)
                if reply.status != 200:
                    headers = {"Retry-After": reply.retry_after} if reply.retry_after else {}
                    self._json(reply.status, {"error": {"message": reply.error_message}}, headers)
                elif body.get("stream"):
                    self._stream(reply, body["model"])
                elif reply.malformed:
                    self.send(200, b'{"choices": [ {"oops": ', "application/json")
                else:
                    self._json(200, _completion(reply, body["model"], len(owner.requests)))

            def _json(self, status: int, value: Any, headers: dict[str, str] | None = None) -> None:
                self.send(status, json.dumps(value), "application/json", headers)

            def _stream(self, reply: Reply, model: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Connection", "close")
                self.end_headers()
                pieces = _pieces(reply.text)
                if reply.truncate:
                    pieces = pieces[: max(1, len(pieces) // 2)]
                try:
                    for piece in pieces:
                        chunk = {
                            "object": "chat.completion.chunk",
                            "model": model,
                            "choices": [{"index": 0, "delta": {"content": piece}}],
                        }
                        if reply.malformed:
                            self.wfile.write(b"data: {not json\n\n")
                        else:
                            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                        time.sleep(reply.token_delay_s)
                    if not reply.truncate:
                        self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                except (BrokenPipeError, ConnectionResetError):
                    pass
                self.close_connection = True

        self._web = Loopback(Handler).start()
        return self

    def stop(self) -> None:
        if self._web is not None:
            self._web.stop()

    def _next(self, body: dict[str, Any]) -> Reply:
        if self.script:
            return self.script.pop(0)
        if self.responder is not None:
            return self.responder(body)
        return Reply(status=500, error_message="the script ran out")


@dataclass
class AnswerSteps:
    """A responder for an answer's pipeline: each step's reply, told apart by the step's system
    prompt. Routing says "simple lookup", every passage shown is graded relevant, and the
    answer is `answer` (a test may swap it between questions); any other step is refused."""

    answer: Reply
    rewritten: str
    queries: list[str]

    def __call__(self, request: dict[str, Any]) -> Reply:
        system = request["messages"][0]["content"]
        user = request["messages"][-1]["content"]
        if "You classify a question" in system:
            return Reply(json.dumps({"intent": "simple_lookup", "confidence": 0.9}))
        if "Rewrite the user's latest question" in system:
            return Reply(json.dumps({"rewritten": self.rewritten}))
        if "different search queries" in system:
            return Reply(json.dumps({"queries": self.queries}))
        if "You judge whether passages" in system:
            grades = [
                {"source": int(n), "reasoning": "states it", "relevance": "relevant", "score": 0.9}
                for n in re.findall(r'number="(\d+)"', user)
            ]
            return Reply(json.dumps({"grades": grades}))
        if "You answer the user's question" in system:
            return self.answer
        return Reply(status=400, error_message="not scripted")


def _completion(reply: Reply, model: str, number: int) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text}
    if reply.tool_calls:
        message["content"] = reply.text or None
        message["tool_calls"] = [
            {
                "id": call.id or f"call_{number}_{i}",
                "type": "function",
                "function": {
                    "name": call.name,
                    "arguments": call.arguments
                    if isinstance(call.arguments, str)
                    else json.dumps(call.arguments),
                },
            }
            for i, call in enumerate(reply.tool_calls)
        ]
    finish = "tool_calls" if reply.tool_calls else "stop"
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "model": model,
        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
    }


def _pieces(text: str) -> list[str]:
    """Word-sized pieces, spaces kept, as real servers stream them."""
    pieces, current = [], ""
    for char in text:
        current += char
        if char == " ":
            pieces.append(current)
            current = ""
    if current:
        pieces.append(current)
    return pieces or [""]


# with a scripted model ---------------------------------------------------------------------
def step_of(request: dict[str, Any]) -> str:
    system = request["messages"][0]["content"]
    for name, marker in (
        ("route", "You classify a question"),
        ("rewrite", "Rewrite the user's latest question"),
        ("expand", "different search queries"),
        ("grade", "You judge whether passages"),
        ("answer", "You answer the user's question"),
        ("summary", "Summarize the document"),
        ("greet", "Reply to the greeting"),
    ):
        if marker in system:
            return name
    raise AssertionError(f"unknown step: {system[:80]}")
