"""The PostgreSQL + pgvector store (optional: `pip install loci[postgres]`)."""

from loci.store.postgres.store import PostgresStore, is_postgres_url

__all__ = ["PostgresStore", "is_postgres_url"]
