"""Content-addressed blob store: the canonical bytes of every document.

A blob's path is derived from the SHA-256 of its bytes, never from a user's file name, so no
name can escape the folder. Writes go to a temporary file first and are renamed into place, so a
crash never leaves a half-written blob under a real address.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from pathlib import Path

from loci.private_files import make_private_dir


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, digest: str) -> Path:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256 hex digest: {digest!r}")
        return self.root / digest[:2] / digest[2:4] / digest

    def put(self, data: bytes) -> str:
        digest = sha256_hex(data)
        target = self.path_for(digest)
        if target.exists():
            return digest
        make_private_dir(target.parent)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=".incoming-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, target)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return digest

    def get(self, digest: str) -> bytes:
        return self.path_for(digest).read_bytes()

    def exists(self, digest: str) -> bool:
        return self.path_for(digest).exists()

    def delete(self, digest: str) -> None:
        self.path_for(digest).unlink(missing_ok=True)

    def disk_usage(self) -> int:
        if not self.root.exists():
            return 0
        return sum(p.stat().st_size for p in self.root.rglob("*") if p.is_file())
