"""Every error Loci raises on purpose, in one tree.

    LociError                      base; `code` is a stable machine-readable name
    ├── NotFound                   a brain, document or job that does not exist (or is not yours)
    ├── Conflict                   a name already taken, or an edit based on a stale version
    ├── Unauthenticated            no valid token or session (expired, revoked, unknown)
    ├── Forbidden                  a brain you can see but may not change (viewer, read token)
    ├── RateLimited                too many failed attempts (password sign-in); try again later
    ├── InvalidInput               a request that cannot be satisfied as asked
    │   ├── FileTooLarge           bytes over the configured cap
    │   └── UnsupportedSource      a path or URL that cannot be read at all
    ├── ParseError                 a file whose bytes could not be turned into text
    │   ├── NoParser               stored, but no parser knows this type
    │   ├── EncryptedDocument      password-protected PDF
    │   └── BudgetExceeded         decompressed size, page count or time over a parser budget
    ├── FetchError                 a URL that could not be fetched
    │   ├── BlockedAddress         private, loopback or link-local target (or redirect to one)
    │   └── ChallengePage          a bot-challenge or interstitial page instead of content
    ├── EmbeddingError             the embedder failed after its retries
    │   └── EmbedderMismatch       a vector of another model identity than the brain's
    ├── LLMError                   the chat model failed, after retries and fallback models
    │   ├── LLMTimeout             no answer (or no next token) within the step's time budget
    │   └── LLMMalformed           an answer that is not what the step asked for (bad JSON, …)
    ├── TranscriptionError         speech to text failed after its retries (the job is retried)
    │   └── TranscriptionRefused   not configured, over its size limit, or this file refused (4xx)
    ├── RerankError                the reranker failed or answered nonsense (search falls back)
    └── StoreError                 the database refused or is inconsistent

Each carries a one-line human message: the CLI prints it as is, the API puts it in `message`.
"""

from __future__ import annotations


class LociError(Exception):
    code = "error"

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


class NotFound(LociError):
    code = "not_found"


class Conflict(LociError):
    code = "conflict"


class Unauthenticated(LociError):
    code = "unauthenticated"


class Forbidden(LociError):
    code = "forbidden"


class RateLimited(LociError):
    code = "rate_limited"

    def __init__(self, message: str, retry_after_s: float) -> None:
        super().__init__(message)
        self.retry_after_s = retry_after_s


class InvalidInput(LociError):
    code = "invalid_input"


class FileTooLarge(InvalidInput):
    code = "file_too_large"


class UnsupportedSource(InvalidInput):
    code = "unsupported_source"


class ParseError(LociError):
    code = "parse_failed"


class NoParser(ParseError):
    code = "no_parser"


class EncryptedDocument(ParseError):
    code = "encrypted"


class BudgetExceeded(ParseError):
    code = "budget_exceeded"


class FetchError(LociError):
    code = "fetch_failed"


class BlockedAddress(FetchError):
    code = "blocked_address"


class ChallengePage(FetchError):
    code = "challenge_page"


class EmbeddingError(LociError):
    code = "embedding_failed"


class EmbedderMismatch(EmbeddingError):
    code = "embedder_mismatch"


class LLMError(LociError):
    code = "llm_failed"


class LLMTimeout(LLMError):
    code = "llm_timeout"


class LLMMalformed(LLMError):
    code = "llm_malformed"


class TranscriptionError(LociError):
    code = "transcription_failed"


class TranscriptionRefused(TranscriptionError):
    """No retry can help: the configuration or the file must change first."""

    code = "transcription_refused"


class RerankError(LociError):
    code = "rerank_failed"


class StoreError(LociError):
    code = "store_error"
