from loci.store.sqlite.store import SqliteStore

__all__ = ["SqliteStore"]
