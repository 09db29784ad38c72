"""What `ask` tells its caller as it works: one event per step, then the answer's tokens, then
`done` with the answer, its citations and the time each step took (or `error`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

EventType = Literal[
    "status", "route", "scope", "rewrite", "queries", "grading", "sources", "token", "done", "error"
]


@dataclass(frozen=True)
class AskEvent:
    type: EventType
    data: dict[str, Any] = field(default_factory=dict)


def status(message: str) -> AskEvent:
    return AskEvent("status", {"message": message})


def token(text: str) -> AskEvent:
    return AskEvent("token", {"text": text})
