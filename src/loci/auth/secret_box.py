"""Encryption at rest for secrets Loci must use later, such as a user's own model API key.

Fernet (AES-128-CBC with an HMAC-SHA256 tag): a stored value can be neither read nor altered
without the server's key. The key lives outside the database — a file of its own in the data
directory, readable only by its owner — so a copy of `loci.db` alone reveals no API key.
"""

from __future__ import annotations

import os
from pathlib import Path

from cryptography.fernet import Fernet, InvalidToken

from loci.errors import StoreError


class SecretBox:
    def __init__(self, key: bytes) -> None:
        self._fernet = Fernet(key)

    @classmethod
    def from_file(cls, path: Path) -> SecretBox:
        """The key in `path`, created (mode 0600) on first use."""
        if not path.exists():
            try:
                descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except FileExistsError:
                pass  # another process made it first: use theirs
            else:
                with os.fdopen(descriptor, "wb") as handle:
                    handle.write(Fernet.generate_key())
        return cls(path.read_bytes().strip())

    def seal(self, secret: str) -> str:
        return self._fernet.encrypt(secret.encode("utf-8")).decode("ascii")

    def open(self, sealed: str) -> str:
        try:
            return self._fernet.decrypt(sealed.encode("ascii")).decode("utf-8")
        except InvalidToken:
            raise StoreError(
                "a stored secret cannot be decrypted: the server's key file changed"
            ) from None
