"""Retrying calls to remote model servers (embeddings, chat): which failures are worth another
try, how long to wait, and how to say what went wrong in one line.

A 429, 408/409/425 or any 5xx is retried; the wait is what `Retry-After` asks (seconds or an
HTTP date) or an exponential backoff with jitter, capped by the caller.
"""

from __future__ import annotations

import email.utils
import random
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # only described here: importing httpx costs every command start-up
    import httpx

_RETRYABLE_STATUS = frozenset({408, 409, 425, 429})  # plus every 5xx


def is_retryable(status: int) -> bool:
    return status in _RETRYABLE_STATUS or status >= 500


def describe_failure(response: httpx.Response) -> str:
    """`HTTP 429 Too Many Requests: <the server's own message>`, on one line."""
    reason = f"HTTP {response.status_code} {response.reason_phrase}".rstrip()
    message = ""
    try:
        error = response.json().get("error")
        if isinstance(error, dict):
            message = str(error.get("message") or "")
        elif isinstance(error, str):
            message = error
    except (ValueError, AttributeError):
        message = response.text
    message = " ".join(message.split())[:200]
    return f"{reason}: {message}" if message else reason


def describe_transport(error: httpx.TransportError) -> str:
    return f"{type(error).__name__}: {error}" if str(error) else type(error).__name__


def retry_after_seconds(response: httpx.Response) -> float | None:
    """Seconds asked for by `Retry-After` (delta-seconds or an HTTP date), or None."""
    value = response.headers.get("Retry-After")
    if value is None:
        return None
    value = value.strip()
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def backoff_delay(attempt: int, retry_after: float | None, base: float, ceiling: float) -> float:
    if retry_after is not None:
        return min(max(retry_after, 0.0), ceiling)
    top = min(base * 2.0**attempt, ceiling)
    # Half fixed, half random: clients that failed together do not retry together.
    return top / 2 + random.uniform(0, top / 2)
