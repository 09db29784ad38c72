"""How `Loci` and its services are configured: limits, and the settings of what it assembles."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from loci.confined_paths import Fence
from loci.curate.agent import AgentLimits
from loci.imports.items import Limits
from loci.ingest.fetch_policy import BrowserSettings, FetchPolicy
from loci.ingest.indexer import IndexerSettings
from loci.jobs.worker import WorkerSettings
from loci.search.engine import RankingParams


@dataclass(frozen=True)
class ScheduleSettings:
    lease_s: float = 300.0  # renewed while a run goes on
    backoff_cap_s: float = 86_400.0  # the longest wait after failures (or `every_s`, if longer)
    # Hosts (names, or "*.example.org" for a domain and its subdomains) a source over HTTP may
    # follow when the caller is not the machine's own administrator (the HTTP API of a shared
    # server); empty: none.
    allowed_hosts: tuple[str, ...] = ()
    # Where the kinds that keep a copy between runs keep it (a followed git repository's
    # clone); None: the system's temporary folder.
    cache_dir: Path | None = None


@dataclass(frozen=True)
class ServiceSettings:
    default_brain: str = "default"
    max_file_bytes: int = 50 * 1024 * 1024
    # Earlier contents kept per document when it is replaced in place (0: none).
    versions_keep: int = 10
    indexer: IndexerSettings = field(default_factory=IndexerSettings)
    worker: WorkerSettings = field(default_factory=WorkerSettings)
    fetch: FetchPolicy = field(default_factory=FetchPolicy)
    browser: BrowserSettings = field(default_factory=BrowserSettings)
    # The embedder's throughput for preflight estimates; None: what the embedder measures itself.
    ingest_chunks_per_s: float | None = None
    ranking: RankingParams = field(default_factory=RankingParams)
    # The configured embedder: its identity when known without loading it (a local model of
    # the catalog), and the languages (ISO 639-1) it reads, None for every one
    # (`fusion.vector_weight`). A brain on another model reads that model's languages.
    embed_model_id: str | None = None
    embed_languages: frozenset[str] | None = None
    # The model cache: the models added from the Hugging Face hub (`loci models add`).
    models_dir: Path | None = None
    curation: AgentLimits = field(default_factory=AgentLimits)
    # What one export given to `loci import` may hold.
    import_limits: Limits = field(default_factory=Limits)
    # Loci's own data (the data directory, the database's and the blobs' folders): never a
    # followed folder, never read by one that holds it.
    fence: Fence = field(default_factory=Fence)
    # Where an uploaded export waits while its request imports it (a folder of the data
    # directory, so it is as private as the rest); None: the system's temporary folder.
    scratch_dir: Path | None = None
    # Sources run on a schedule by the worker (feeds, web pages, ...).
    schedule: ScheduleSettings = field(default_factory=ScheduleSettings)
