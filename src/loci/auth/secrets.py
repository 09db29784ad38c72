"""Token and session secrets: random, prefixed, and stored only as a SHA-256 hash.

The secrets carry 256 bits from `secrets.token_urlsafe`, so a plain SHA-256 is enough to keep
the database useless to a reader (no password stretching needed: nothing to brute-force).
"""

from __future__ import annotations

import hashlib
import secrets

TOKEN_PREFIX = "loci_"
SESSION_PREFIX = "locis_"
SHOWN_PREFIX_LENGTH = 12  # what listings show so a person can tell their tokens apart


def new_secret(prefix: str = TOKEN_PREFIX) -> str:
    return prefix + secrets.token_urlsafe(32)


def hash_secret(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


def shown_prefix(secret: str) -> str:
    return secret[:SHOWN_PREFIX_LENGTH]


def same(a: str, b: str) -> bool:
    """Constant-time comparison, for CSRF tokens."""
    return secrets.compare_digest(a.encode("utf-8"), b.encode("utf-8"))
