"""Password hashing with scrypt, from the standard library.

Unlike tokens (256 random bits, where a plain SHA-256 suffices), a password is guessable, so it is
stretched with a memory-hard function: scrypt, a fresh 16-byte salt per password. The stored form
names its parameters — `scrypt$ln=15,r=8,p=1$<salt>$<hash>` (base64) — so they can be raised
later: a hash made with weaker ones verifies as before and is replaced at the next sign-in
(`needs_rehash`).
"""

from __future__ import annotations

import base64
import hashlib
import secrets
from dataclasses import dataclass
from functools import cache

from loci.errors import InvalidInput

MIN_LENGTH = 10
MAX_LENGTH = 1024  # scrypt reads all of it; there is no reason for more


@dataclass(frozen=True)
class ScryptParams:
    log2_n: int  # cost: n = 2**log2_n
    r: int  # block size
    p: int  # parallelism

    @property
    def memory_bytes(self) -> int:
        return 128 * self.r * (1 << self.log2_n)

    def text(self) -> str:
        return f"ln={self.log2_n},r={self.r},p={self.p}"


# 32 MiB and about 0.13 s per hash on a busy 2-core VM (docs/benchmarks-journal.md).
CURRENT = ScryptParams(log2_n=15, r=8, p=1)
_SALT_BYTES = 16
_KEY_BYTES = 32


def check_strength(password: str) -> None:
    """The one rule: long enough (length beats composition rules), and not absurdly long."""
    if len(password) < MIN_LENGTH:
        raise InvalidInput(f"a password needs at least {MIN_LENGTH} characters")
    if len(password) > MAX_LENGTH:
        raise InvalidInput(f"a password may have at most {MAX_LENGTH} characters")
    if not password.strip():
        raise InvalidInput("a password cannot be only spaces")


def hash_password(password: str, params: ScryptParams = CURRENT) -> str:
    salt = secrets.token_bytes(_SALT_BYTES)
    derived = _derive(password, salt, params)
    return f"scrypt${params.text()}${_b64(salt)}${_b64(derived)}"


def verify_password(password: str, stored: str) -> bool:
    """Whether `password` matches `stored`; a malformed stored hash matches nothing."""
    parsed = _parse(stored)
    if parsed is None:
        return False
    params, salt, expected = parsed
    return secrets.compare_digest(_derive(password, salt, params), expected)


def needs_rehash(stored: str) -> bool:
    parsed = _parse(stored)
    return parsed is None or parsed[0] != CURRENT


@cache
def dummy_hash() -> str:
    """A hash no password matches, made once: an unknown user's sign-in verifies against it,
    so it costs what a known user's does and its timing tells nothing."""
    return hash_password(secrets.token_urlsafe(32))


def _derive(password: str, salt: bytes, params: ScryptParams) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"),
        salt=salt,
        n=1 << params.log2_n,
        r=params.r,
        p=params.p,
        maxmem=params.memory_bytes * 2,  # OpenSSL's default cap (32 MiB) is just too small
        dklen=_KEY_BYTES,
    )


def _parse(stored: str) -> tuple[ScryptParams, bytes, bytes] | None:
    try:
        scheme, params_text, salt, derived = stored.split("$")
        if scheme != "scrypt":
            return None
        values = dict(part.split("=", 1) for part in params_text.split(","))
        params = ScryptParams(int(values["ln"]), int(values["r"]), int(values["p"]))
        if not (1 <= params.log2_n <= 22 and 1 <= params.r <= 32 and 1 <= params.p <= 16):
            return None
        return params, _unb64(salt), _unb64(derived)
    except (ValueError, KeyError):
        return None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii").rstrip("=")


def _unb64(text: str) -> bytes:
    return base64.b64decode(text + "=" * (-len(text) % 4), validate=True)
