"""Content-addressed blob store: the canonical bytes of every document.

A blob's path is derived from the SHA-256 of its bytes, never from a user's file name, so no
name can escape the folder. Writes go to a temporary file first and are renamed into place, so a
crash never leaves a half-written blob under a real address.

`put_many` keeps several at once: each is still flushed to the disk before it is renamed into
place, but the flushes run side by side, so the file system commits them together (ext4's
journal takes concurrent fsyncs in one commit: 100 small files took 0.1–0.4 ms each so, against
3.6–4.6 ms one after another, on this project's machine).
"""

from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from loci.private_files import make_private_dir


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


FLUSHES_AT_ONCE = 16  # threads flushing blobs side by side (they wait on the disk, not a core)
_pool: ThreadPoolExecutor | None = None
_pool_guard = threading.Lock()


def _flushers() -> ThreadPoolExecutor:
    """The threads that write blobs side by side, started once (starting 16 threads for each
    batch cost as much as the batch's flushes)."""
    global _pool
    with _pool_guard:
        if _pool is None:
            _pool = ThreadPoolExecutor(FLUSHES_AT_ONCE, thread_name_prefix="loci-blobs")
        return _pool


class BlobStore:
    def __init__(self, root: Path) -> None:
        self.root = root

    def path_for(self, digest: str) -> Path:
        if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest):
            raise ValueError(f"not a sha256 hex digest: {digest!r}")
        return self.root / digest[:2] / digest[2:4] / digest

    def put(self, data: bytes) -> str:
        return self.put_many([data])[0]

    def put_many(self, datas: Sequence[bytes]) -> list[str]:
        """Keep each of `datas` (durably, before this returns); their digests, in order."""
        digests = [sha256_hex(data) for data in datas]
        todo = {d: data for d, data in zip(digests, datas, strict=True)}
        todo = {d: data for d, data in todo.items() if not self.path_for(d).exists()}
        if len(todo) == 1:
            self._write(*next(iter(todo.items())))
        elif todo:
            list(_flushers().map(self._write, todo.keys(), todo.values()))
        return digests

    def _write(self, digest: str, data: bytes) -> None:
        target = self.path_for(digest)
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
