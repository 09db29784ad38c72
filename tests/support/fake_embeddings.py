"""A scripted stand-in for an OpenAI-compatible embeddings server on loopback: each test queues
the replies it wants and reads back the requests the client sent."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from loci.embed import OpenAICompatibleEmbedder
from tests.support.loopback import Loopback, QuietHandler

DIMS = 8


@dataclass
class Scripted:
    """A canned reply; `status` 200 means "answer with real vectors of `dims` dimensions"."""

    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    dims: int = DIMS


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


class FakeEmbeddingsServer:
    def __init__(self) -> None:
        self.script: list[Scripted] = []
        self.requests: list[Received] = []
        self.in_flight = 0
        self.most_in_flight = 0
        # Set by a test: called with each request's inputs before it is answered (to hold it).
        self.before_reply: Callable[[list[str]], None] | None = None
        self._lock = threading.Lock()
        self._web = Loopback(self._handler())

    @property
    def base_url(self) -> str:
        return self._web.url("/v1")

    def start(self) -> None:
        self._web.start()

    def stop(self) -> None:
        self._web.stop()

    def _next(self, body: dict[str, Any], path: str, headers: dict[str, str]) -> Scripted:
        with self._lock:
            self.requests.append(Received(path, headers, body))
            return self.script.pop(0) if self.script else Scripted()

    def _handler(self) -> type[QuietHandler]:
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                reply = server._next(body, self.path, dict(self.headers.items()))
                with server._lock:
                    server.in_flight += 1
                    server.most_in_flight = max(server.most_in_flight, server.in_flight)
                try:
                    if server.before_reply is not None:
                        server.before_reply(body["input"])
                finally:
                    with server._lock:
                        server.in_flight -= 1
                if reply.status == 200:
                    data = [
                        {
                            "object": "embedding",
                            "index": i,
                            "embedding": vector_for(text, reply.dims),
                        }
                        for i, text in enumerate(body["input"])
                    ]
                    # Reversed on purpose: clients must order by "index", not by position.
                    payload: dict[str, Any] = {
                        "object": "list",
                        "data": data[::-1],
                        "model": body["model"],
                    }
                else:
                    payload = {"error": {"message": f"scripted failure {reply.status}"}}
                self.send(reply.status, json.dumps(payload), "application/json", reply.headers)

        return Handler


def vector_for(text: str, dims: int) -> list[float]:
    """A deterministic, deliberately un-normalised vector that identifies its input text."""
    rng = np.random.default_rng(abs(hash(text)) % 2**32)
    return [float(x) for x in rng.normal(size=dims) * 5.0]


def make_embedder(server: FakeEmbeddingsServer, **overrides: Any) -> OpenAICompatibleEmbedder:
    options: dict[str, Any] = {"backoff_base": 0.001, "max_backoff": 0.05, "timeout": 5.0}
    options.update(overrides)
    return OpenAICompatibleEmbedder(
        server.base_url, "sk-test-key", "text-embedding-test", DIMS, **options
    )
