"""Assembling Loci from settings: the one place that reads configuration."""

from __future__ import annotations

from loci.config import Settings
from loci.embed.base import Embedder
from loci.ingest.fetch import FetchPolicy
from loci.ingest.indexer import IndexerSettings
from loci.jobs.worker import WorkerSettings
from loci.service import Loci, ServiceSettings
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "openai":
        from loci.embed.openai_compat import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(
            base_url=settings.embed_base_url or "https://api.openai.com/v1",
            api_key=settings.embed_api_key,
            model=settings.embed_model,
            dimensions=settings.embed_dimensions,
        )
    from loci.embed.local import LocalEmbedder

    return LocalEmbedder(threads=settings.embed_threads or None)


def service_settings(settings: Settings) -> ServiceSettings:
    return ServiceSettings(
        default_brain=settings.default_brain,
        max_file_bytes=settings.max_file_bytes,
        indexer=IndexerSettings(
            overlap_tokens=settings.chunk_overlap_tokens,
            max_chunks=settings.max_chunks_per_file,
        ),
        worker=WorkerSettings(
            lease_s=settings.job_lease_s,
            max_attempts=settings.job_max_attempts,
            retry_base_s=settings.job_retry_base_s,
        ),
        fetch=FetchPolicy(
            allow_private=settings.fetch_allow_private,
            allowed_networks=tuple(settings.fetch_allowed_networks),
            max_bytes=int(settings.fetch_max_mb * 1024 * 1024),
            total_timeout=settings.fetch_timeout_s,
        ),
    )


def build_service(settings: Settings) -> Loci:
    settings.home.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(
        settings.database_path,
        lexical_index_min_chunks=settings.lexical_index_min_chunks or None,
        vector_int8_min_chunks=settings.vector_int8_min_chunks or None,
    )
    return Loci(
        store=store,
        blobs=BlobStore(settings.blob_dir),
        embedder=lambda: build_embedder(settings),
        settings=service_settings(settings),
        database_path=settings.database_path,
    )
