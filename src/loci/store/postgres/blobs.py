"""Blobs kept in PostgreSQL (`LOCI_BLOBS=database`): a deployment that needs nothing but the
database — no shared volume between API processes and workers.

The same content-addressed contract as the filesystem store: a blob's key is the SHA-256 of its
bytes, a write of bytes already present is a no-op, and a blob is whole or absent (one INSERT).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from loci.store.blobs import BlobStore, sha256_hex
from loci.store.postgres.connection import Database


class PostgresBlobStore(BlobStore):
    def __init__(self, db: Database) -> None:
        super().__init__(Path("postgresql-blobs"))  # no folder: `path_for` names no real file
        self.db = db

    def put(self, data: bytes) -> str:
        return self.put_many([data])[0]

    def put_many(self, datas: Sequence[bytes]) -> list[str]:
        """All in one transaction: one commit for the lot."""
        digests = [sha256_hex(data) for data in datas]
        with self.db.tx() as cur:
            cur.executemany(
                "INSERT INTO blobs(hash, data, size) VALUES (%s, %s, %s)"
                " ON CONFLICT (hash) DO NOTHING",
                [(d, data, len(data)) for d, data in zip(digests, datas, strict=True)],
            )
        return digests

    def get(self, digest: str) -> bytes:
        self.path_for(digest)  # validates the digest
        value = self.db.scalar("SELECT data FROM blobs WHERE hash = %s", (digest,))
        if value is None:
            raise FileNotFoundError(f"no blob {digest}")
        return bytes(value)

    def exists(self, digest: str) -> bool:
        return self.db.scalar("SELECT 1 FROM blobs WHERE hash = %s", (digest,)) is not None

    def delete(self, digest: str) -> None:
        self.db.rows("DELETE FROM blobs WHERE hash = %s", (digest,))

    def disk_usage(self) -> int:
        return int(self.db.scalar("SELECT coalesce(sum(size), 0) FROM blobs"))
