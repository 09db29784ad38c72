"""Request signatures of pushes from outside: Slack's `v0` scheme and Loci's own webhook scheme.

Both are an HMAC-SHA256 over a timestamp and the raw body, so a captured request cannot be
replayed after the window nor altered within it:

    Slack    X-Slack-Request-Timestamp: <unix>
             X-Slack-Signature: v0=<hex of HMAC(signing secret, "v0:<unix>:<body>")>
    Loci     X-Loci-Signature: t=<unix>,v1=<hex of HMAC(secret, "<unix>.<body>")>[,v1=…]

Checked over the bytes as received, before anything parses them; compared in constant time.
Every failure is `Unauthenticated` with a reason that reveals nothing of the secret.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Sequence

from loci.errors import Unauthenticated

REPLAY_WINDOW_S = 300  # five minutes, both ways (a sender's clock may run a little ahead)
SLACK_VERSION = "v0"
LOCI_VERSION = "v1"
MAX_HEADER = 2000  # a signature header longer than this is not one of ours


def _hmac(secret: str, message: bytes) -> str:
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def _timestamp(value: str | None, now: float) -> int:
    if not value or not value.strip().isdigit() or len(value) > 12:
        raise Unauthenticated("the request carries no valid signature timestamp")
    stamp = int(value)
    if abs(now - stamp) > REPLAY_WINDOW_S:
        raise Unauthenticated("the request's signature timestamp is outside the five-minute window")
    return stamp


def slack_signature(secret: str, timestamp: str, body: bytes) -> str:
    base = f"{SLACK_VERSION}:{timestamp}:".encode() + body
    return f"{SLACK_VERSION}={_hmac(secret, base)}"


def verify_slack(
    secret: str, timestamp: str | None, signature: str | None, body: bytes, now: float
) -> None:
    """Raise `Unauthenticated` unless Slack signed exactly this body within the window."""
    if not signature or len(signature) > MAX_HEADER:
        raise Unauthenticated("the request is not signed (X-Slack-Signature)")
    _timestamp(timestamp, now)
    assert timestamp is not None
    expected = slack_signature(secret, timestamp.strip(), body)
    if not hmac.compare_digest(expected.encode(), signature.strip().encode("utf-8", "replace")):
        raise Unauthenticated("the request's Slack signature does not match")


def verify_webhook(secrets: Sequence[str], header: str | None, body: bytes, now: float) -> None:
    """Raise `Unauthenticated` unless one of `secrets` signed this body within the window.

    Several `v1=` values are allowed (a sender rotating its secret signs with both), as are
    several live secrets on our side (rotate by creating a new one, then revoking the old)."""
    if not header or len(header) > MAX_HEADER:
        raise Unauthenticated("the request is not signed (X-Loci-Signature)")
    stamps: list[str] = []
    sent: list[str] = []
    for part in header.split(","):
        key, _, value = part.strip().partition("=")
        if key == "t":
            stamps.append(value.strip())
        elif key == LOCI_VERSION:
            sent.append(value.strip())
    if len(stamps) != 1 or not sent:
        raise Unauthenticated("X-Loci-Signature must be t=<unix time>,v1=<hex HMAC-SHA256>")
    stamp = _timestamp(stamps[0], now)
    message = f"{stamp}.".encode() + body
    for secret in secrets:
        expected = _hmac(secret, message).encode()
        # every pair is compared (no early exit) so the time taken says nothing either
        matched = [hmac.compare_digest(expected, s.encode("utf-8", "replace")) for s in sent]
        if any(matched):
            return
    raise Unauthenticated("the request's signature does not match")
