"""Assembling Loci from settings: the one place that reads configuration."""

from __future__ import annotations

import os
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from loci.auth.accounts import Accounts, IssuedToken
from loci.auth.secret_box import SecretBox
from loci.config import Settings, embedder_languages, load_settings
from loci.confined_paths import Fence
from loci.embed.base import Embedder
from loci.errors import InvalidInput
from loci.imports.items import Limits
from loci.ingest.fetch_policy import BrowserSettings, FetchPolicy
from loci.ingest.indexer import IndexerSettings
from loci.ingest.parsers import ParseBudgets
from loci.jobs.worker import WorkerSettings
from loci.private_files import secure_home
from loci.search.engine import RankingParams
from loci.service import Loci, ServiceSettings
from loci.service.settings import ScheduleSettings
from loci.store.base import Store
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore

# What only some commands build (the API and its integrations, the chat model, speech to text,
# a reranker) is imported where it is built: `loci list` should not load an HTTP client stack.
if TYPE_CHECKING:
    from fastapi import FastAPI

    from loci.auth.people import People
    from loci.auth.sso.provider import SsoProvider
    from loci.auth.user_models import UserModels
    from loci.integrations import Integrations
    from loci.integrations.slack_links import SlackLinks
    from loci.integrations.webhooks import Webhooks
    from loci.llm.client import Chat
    from loci.llm.transcribe import Transcriber
    from loci.search.rerank import Reranker
    from loci.service.watching import FolderWatcher
    from loci.store.postgres import PostgresStore

OWNER_TOKEN_FILE = "owner-token"
SECRET_KEY_FILE = "secret.key"  # seals users' model API keys; back it up with the database


def build_embedder(settings: Settings) -> Embedder:
    if settings.embedder == "openai":
        from loci.embed.openai_compat import OpenAICompatibleEmbedder

        return OpenAICompatibleEmbedder(
            base_url=settings.embed_base_url or "https://api.openai.com/v1",
            api_key=settings.embed_api_key,
            model=settings.embed_model,
            dimensions=settings.embed_dimensions,
            batch_tokens=settings.embed_batch_tokens,
            concurrency=settings.embed_concurrency,
            **({"max_tokens": settings.embed_max_tokens} if settings.embed_max_tokens else {}),
        )
    return build_local_embedder(settings, settings.embed_local_model)


def build_local_embedder(settings: Settings, name: str) -> Embedder:
    """The local model `name` of the catalog (`loci.embed.catalog`), on this installation."""
    from loci.embed.hub import added_models

    added = next((m for m in added_models(settings.models_dir) if m.name == name), None)
    if added is not None:
        from loci.embed.local import LocalEmbedder, LocalModel

        folder = settings.models_dir / added.folder
        return LocalEmbedder(
            model=LocalModel(
                model_id=added.name,
                dimensions=added.dimensions,
                max_sequence=added.max_sequence,
                unknown_token=added.unknown_token,
                languages=frozenset(added.languages) if added.languages is not None else None,
                query_prefix=added.query_prefix,
                passage_prefix=added.passage_prefix,
                reserved_tokens=added.reserved_tokens,
            ),
            threads=settings.embed_threads or None,
            model_path=folder / "model.onnx",
            tokenizer_path=folder / "tokenizer.json",
            calibration_dir=settings.calibration_dir,
        )
    if name == "multilingual-e5-small":
        from loci.embed.e5 import NAME, E5Embedder

        return E5Embedder(
            settings.models_dir / NAME,
            threads=settings.embed_threads or None,
            calibration_dir=settings.calibration_dir,
        )
    from loci.embed.local import LocalEmbedder

    return LocalEmbedder(
        threads=settings.embed_threads or None, calibration_dir=settings.calibration_dir
    )


def configured_model_id(settings: Settings) -> str | None:
    """The identity of the configured embedder when it is a local model (known without
    loading it); None for a remote one."""
    if settings.embedder != "local":
        return None
    from loci.embed.catalog import model_named

    model = model_named(settings.embed_local_model)
    return model.model_id if model else None


def build_chat(settings: Settings) -> Chat | None:
    """The configured chat model, or None: then every answer step uses its fallback."""
    if not settings.llm_base_url and not settings.llm_model:
        return None
    if not settings.llm_model:
        raise InvalidInput("LOCI_LLM_MODEL must name a model when LOCI_LLM_BASE_URL is set")
    from loci.llm.client import ChatSettings, OpenAICompatibleChat

    return OpenAICompatibleChat(
        ChatSettings(
            base_url=settings.llm_base_url or "https://api.openai.com/v1",
            api_key=settings.llm_api_key,
            model=settings.llm_model,
            fallback_models=tuple(settings.llm_fallback_models),
            timeout_s=settings.llm_timeout_s,
        )
    )


def build_transcriber(settings: Settings) -> Transcriber | None:
    """The configured speech-to-text service, or None: recordings are kept and marked failed."""
    if not settings.stt_base_url:
        return None
    from loci.llm.transcribe import OpenAICompatibleTranscriber, TranscriberSettings
    from loci.llm.transcript_cache import CachedTranscriber

    service = OpenAICompatibleTranscriber(
        TranscriberSettings(
            base_url=settings.stt_base_url,
            model=settings.stt_model,
            api_key=settings.stt_api_key,
            language=settings.stt_language or None,
            timeout_s=settings.stt_timeout_s,
            max_bytes=settings.stt_max_bytes,
        )
    )
    # Reindexing must not pay for every recording again: transcripts are kept by content.
    return CachedTranscriber(service, settings.transcript_dir, settings.stt_language or None)


def build_reranker(settings: Settings) -> Reranker | None:
    """The configured reranker, or None: hybrid search then keeps the fused order."""
    if not settings.rerank_base_url:
        return None
    if not settings.rerank_model:
        raise InvalidInput("LOCI_RERANK_MODEL must name a model when LOCI_RERANK_BASE_URL is set")
    from loci.search.rerank import HttpReranker

    return HttpReranker(
        settings.rerank_base_url,
        settings.rerank_model,
        api_key=settings.rerank_api_key,
        timeout_s=settings.rerank_timeout_s,
    )


def data_fence(settings: Settings) -> Fence:
    """Where Loci keeps its own data, which no followed folder may be or read: the data
    directory (`owner-token`, `secret.key`, caches), the SQLite database's folder and the
    blob folder."""
    folders = [settings.home]
    if not settings.database_url:
        folders.append(settings.database_path.parent)
    if settings.blobs == "files":
        folders.append(settings.blob_dir)
    return Fence(tuple(dict.fromkeys(folders)))


def service_settings(settings: Settings) -> ServiceSettings:
    return ServiceSettings(
        default_brain=settings.default_brain,
        ingest_chunks_per_s=settings.ingest_chunks_per_s,
        max_file_bytes=settings.max_file_bytes,
        versions_keep=settings.versions_keep,
        indexer=IndexerSettings(
            overlap_tokens=settings.chunk_overlap_tokens,
            max_chunks=settings.max_chunks_per_file,
            caption_images=settings.llm_vision,
            budgets=ParseBudgets(
                ocr_fallback=settings.ocr_fallback, max_memory_mb=settings.parse_memory_mb
            ),
            embed_slice_s=settings.embed_slice_s,
        ),
        worker=WorkerSettings(
            lease_s=settings.job_lease_s,
            max_attempts=settings.job_max_attempts,
            retry_base_s=settings.job_retry_base_s,
            quick_lane=settings.worker_quick_lane,
            vectors_wait_s=settings.vectors_wait_s,
        ),
        fetch=fetch_policy(settings),
        browser=BrowserSettings(
            enabled=settings.browser_render,
            executable=settings.browser_path,
            timeout_s=settings.browser_timeout_s,
        ),
        ranking=RankingParams(rerank_depth=settings.rerank_depth),
        embed_model_id=configured_model_id(settings),
        embed_languages=embedder_languages(settings),
        models_dir=settings.models_dir,
        fence=data_fence(settings),
        scratch_dir=settings.home / "scratch",
        schedule=ScheduleSettings(
            lease_s=settings.sources_lease_s,
            backoff_cap_s=settings.sources_backoff_max_s,
            allowed_hosts=tuple(settings.sources_allowed_hosts),
            cache_dir=settings.home / "cache" / "sources",
        ),
        import_limits=Limits(
            max_items=settings.import_max_items,
            max_bytes=int(settings.import_max_mb * 1024 * 1024),
            max_item_bytes=settings.max_file_bytes,
        ),
    )


def fetch_policy(settings: Settings) -> FetchPolicy:
    return FetchPolicy(
        allow_private=settings.fetch_allow_private,
        allowed_networks=tuple(settings.fetch_allowed_networks),
        max_bytes=int(settings.fetch_max_mb * 1024 * 1024),
        total_timeout=settings.fetch_timeout_s,
    )


def build_service(settings: Settings) -> Loci:
    secure_home(settings.home)
    store = build_store(settings)
    return Loci(
        store=store,
        blobs=build_blobs(settings, store),
        embedder=lambda: build_embedder(settings),
        models=partial(build_local_embedder, settings),
        settings=service_settings(settings),
        chat=lambda: build_chat(settings),
        reranker=build_reranker(settings),
        transcriber=lambda: build_transcriber(settings),
        secrets=lambda: secret_box(settings),
    )


def build_blobs(settings: Settings, store: Store) -> BlobStore:
    if settings.blobs == "database":
        from loci.store.postgres import PostgresStore
        from loci.store.postgres.blobs import PostgresBlobStore

        if not isinstance(store, PostgresStore):
            raise InvalidInput("LOCI_BLOBS=database needs LOCI_DATABASE_URL (PostgreSQL)")
        return PostgresBlobStore(store.db)
    return BlobStore(settings.blob_dir)


def build_store(settings: Settings) -> Store:
    """PostgreSQL when `database_url` is set, else the embedded SQLite database."""
    if settings.database_url:
        try:
            from loci.store.postgres import PostgresStore
        except ImportError as error:
            raise InvalidInput(
                "LOCI_DATABASE_URL names PostgreSQL, but its driver is missing:"
                " pip install 'loci[postgres]'"
            ) from error
        return PostgresStore(
            settings.database_url,
            owner_url=settings.database_owner_url,
            pool_size=settings.database_pool_size,
        )
    return SqliteStore(
        settings.database_path,
        lexical_index_min_chunks=settings.lexical_index_min_chunks or None,
        vector_int8_min_chunks=settings.vector_int8_min_chunks or None,
        vector_ann_min_chunks=settings.vector_ann_min_chunks or None,
    )


def owner_token_path(settings: Settings) -> Path:
    return settings.home / OWNER_TOKEN_FILE


def bootstrap_owner(settings: Settings, accounts: Accounts) -> IssuedToken | None:
    """On first start, create the owner account; its token is saved (0600) for the local CLI
    and scripts, and returned so the caller can show it once."""
    issued = accounts.bootstrap_owner()
    if issued is not None:
        path = owner_token_path(settings)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(issued.secret + "\n")
        path.chmod(0o600)  # in case the file existed with wider permissions
    return issued


def secret_box(settings: Settings) -> SecretBox:
    return SecretBox.from_file(settings.home / SECRET_KEY_FILE)


def build_user_models(settings: Settings, loci: Loci) -> UserModels:
    from loci.auth.user_models import UserModels

    return UserModels(
        loci.store.accounts, secret_box(settings), loci.settings.fetch, settings.llm_timeout_s
    )


def build_integrations(
    settings: Settings, loci: Loci, accounts: Accounts, models: UserModels | None = None
) -> Integrations:
    """Signed webhooks always; Slack capture (and asking) once its signing secret is set."""
    from loci.integrations import Integrations
    from loci.integrations.slack_api import SlackWebApi
    from loci.integrations.slack_ask import SlackAnswers
    from loci.integrations.slack_capture import SlackCapture
    from loci.integrations.webhooks import Webhooks

    slack = None
    if settings.slack_signing_secret is not None:
        api = None
        if settings.slack_bot_token is not None:
            api = SlackWebApi(
                settings.slack_bot_token.get_secret_value(),
                settings.slack_api_base,
                settings.slack_timeout_s,
            )
        secret = settings.slack_signing_secret.get_secret_value()
        answers = SlackAnswers(loci, models.chat_for if models else None, settings.public_url)
        slack = SlackCapture(loci, accounts, secret, api, answers=answers)
    return Integrations(Webhooks(loci.store, secret_box(settings)), slack)


def build_watcher(settings: Settings, loci: Loci) -> FolderWatcher | None:
    """What watches the registered folders in a server or worker; None when
    LOCI_SOURCES_WATCH=off."""
    if settings.sources_watch == "off":
        return None
    from loci.service.watching import FolderWatcher, WatchSettings

    watch = WatchSettings(mode=settings.sources_watch, poll_ms=int(settings.sources_poll_s * 1000))
    return FolderWatcher(loci.sources, loci.store, watch)


def build_api(settings: Settings, loci: Loci, *, run_worker: bool = True) -> FastAPI:
    from loci.server import create_server

    accounts = Accounts(loci.store)
    models = build_user_models(settings, loci)
    return create_server(
        loci,
        accounts,
        models,
        run_worker=run_worker,
        integrations=build_integrations(settings, loci, accounts, models),
        trusted_proxies=settings.trusted_proxies,
        sources_allowed_roots=settings.sources_allowed_roots,
        public_url=settings.public_url,
        sso_providers=build_sso_providers(settings),
        password_sign_in=settings.password_sign_in,
        # The process that indexes also watches the folders (each under a lease).
        watcher=build_watcher(settings, loci) if run_worker else None,
    )


def build_sso_providers(settings: Settings) -> list[SsoProvider]:
    from loci.auth.sso.provider import SsoProvider

    return [
        SsoProvider(
            name=p.name,
            label=p.label or p.name,
            issuer=p.issuer,
            client_id=p.client_id,
            client_secret=p.client_secret.get_secret_value() if p.client_secret else None,
            scopes=tuple(p.scopes),
            username_claim=p.username_claim,
            groups_claim=p.groups_claim,
            allowed_domains=tuple(p.allowed_domains),
            allowed_groups=tuple(p.allowed_groups),
            link_by_email=p.link_by_email,
            admin_groups=tuple(p.admin_groups),
            group_brains={g: dict(b) for g, b in p.group_brains.items()},
        )
        for p in settings.oidc_providers
    ]


SERVE_WORKER_ENV = "LOCI_SERVE_RUN_WORKER"  # how `loci serve --workers N` tells its processes


def api_from_environment() -> FastAPI:
    """The app for each process of `loci serve --workers N` (uvicorn imports this factory in
    every process; settings come from the environment as for any command)."""
    settings = load_settings()
    run_worker = os.environ.get(SERVE_WORKER_ENV, "1") == "1"
    return build_api(settings, build_service(settings), run_worker=run_worker)


# What the CLI works with besides the service, built here like everything else so a command
# receives it instead of constructing it.
def build_accounts(loci: Loci) -> Accounts:
    return Accounts(loci.store)


def build_people(accounts: Accounts) -> People:
    from loci.auth.people import People

    return People(accounts)


def build_slack_links(accounts: Accounts) -> SlackLinks:
    from loci.integrations.slack_links import SlackLinks

    return SlackLinks(accounts)


def build_webhooks(settings: Settings, loci: Loci) -> Webhooks:
    from loci.integrations.webhooks import Webhooks

    return Webhooks(loci.store, secret_box(settings))


def open_migration(settings: Settings, target_url: str) -> tuple[SqliteStore, PostgresStore]:
    """The data directory's SQLite database and the PostgreSQL database `loci migrate` copies
    it into."""
    from loci.store.postgres import PostgresStore

    source = SqliteStore(settings.database_path)
    try:
        target = PostgresStore(target_url, owner_url=settings.database_owner_url, pool_size=2)
    except BaseException:
        source.close()
        raise
    return source, target
