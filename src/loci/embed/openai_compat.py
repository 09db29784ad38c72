"""Embeddings from any server that speaks OpenAI's `POST /embeddings`.

OpenAI itself, OpenRouter, Ollama, vLLM and llama.cpp's server all accept the same request:

    POST {base_url}/embeddings
    {"model": "...", "input": ["...", ...], "encoding_format": "float"}

and answer `{"data": [{"index": 0, "embedding": [...]}, ...]}`. `encoding_format` is explicit
because some local servers default to base64 or reject a missing field.

Inputs are sent in requests of at most `batch_size` texts and about `batch_tokens` tokens (by
`count_tokens`' over-estimate), up to `concurrency` requests at a time: a remote embedder's time is
mostly the round trip and the server's queue, not this process's CPU. Vectors come back in input
order whatever order the requests finish in.

Rate limits and server errors are retried with exponential backoff; what is left after the retries
becomes an `EmbeddingError` whose message is one line a person can act on.
"""

from __future__ import annotations

import logging
import math
import threading
import time
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import httpx
import numpy as np

from loci.embed.base import Vectors
from loci.errors import EmbedderMismatch, EmbeddingError
from loci.http_retry import (
    backoff_delay,
    describe_failure,
    describe_transport,
    is_retryable,
    retry_after_seconds,
)

log = logging.getLogger(__name__)

# OpenAI caps one request at 2048 inputs; 96 stays far below that and below the per-request token
# budgets of smaller servers, while still amortising the round trip.
DEFAULT_BATCH_SIZE = 96
DEFAULT_MAX_TOKENS = 8191  # text-embedding-3-*'s input limit
# Estimated tokens a request: ~40 full chunks of prose, well under the request budgets of hosted
# APIs (OpenAI: 300k) and small enough that a local server (Ollama, llama.cpp) answers in seconds
# rather than hitting a timeout. One input longer than this still goes, alone.
DEFAULT_BATCH_TOKENS = 8192
# Two requests in flight keep a server busy while the other's answer travels back; more mostly
# meets rate limits (hosted) or queues behind the same GPU (local).
DEFAULT_CONCURRENCY = 2
# Calls this small (a search's query) are one round trip each: they would make the rate measured
# for ingest estimates look far slower than ingest is.
_RATE_MIN_INPUTS = 8


class OpenAICompatibleEmbedder:
    """Vectors from an OpenAI-compatible embeddings endpoint, normalised to unit length.

    `dimensions` is what the brain expects; a vector of any other length raises `EmbedderMismatch`
    instead of being stored next to vectors it cannot be compared with.

    Retries: a 429, 408/409/425, any 5xx, a timeout or a connection failure is retried up to
    `max_retries` times. The wait is `backoff_base * 2**attempt` seconds with jitter, or what the
    server's `Retry-After` asks, and never more than `max_backoff`.

    Token counts are estimated: no tokenizer for remote models is available offline (see
    `count_tokens`).

    `chunks_per_s()` is the rate this instance has measured on its own calls of several texts so
    far (None before the first), for the dry run's time estimate.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        model: str,
        dimensions: int,
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        batch_tokens: int = DEFAULT_BATCH_TOKENS,
        concurrency: int = DEFAULT_CONCURRENCY,
        timeout: float = 60.0,
        max_retries: int = 5,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        backoff_base: float = 0.5,
        max_backoff: float = 30.0,
    ) -> None:
        if dimensions < 1:
            raise ValueError("dimensions must be at least 1")
        if batch_size < 1:
            raise ValueError("batch_size must be at least 1")
        if batch_tokens < 1:
            raise ValueError("batch_tokens must be at least 1")
        if concurrency < 1:
            raise ValueError("concurrency must be at least 1")
        if max_retries < 0:
            raise ValueError("max_retries cannot be negative")
        self._url = base_url.rstrip("/") + "/embeddings"
        self._model = model
        self._dimensions = dimensions
        self._batch_size = batch_size
        self._batch_tokens = batch_tokens
        self._concurrency = concurrency
        self._measured = (0, 0.0)  # inputs embedded, wall seconds spent on them
        self._measured_lock = threading.Lock()
        self._max_retries = max_retries
        self._max_tokens = max_tokens
        self._backoff_base = backoff_base
        self._max_backoff = max_backoff
        headers = {"Accept": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(headers=headers, timeout=timeout)

    @property
    def model_id(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int:
        return self._dimensions

    @property
    def max_tokens(self) -> int:
        return self._max_tokens

    def count_tokens(self, text: str) -> int:
        """An over-estimate: one token per 3 bytes of UTF-8.

        The remote model's tokenizer is not available offline. English averages about 4
        characters per token in OpenAI's tokenizers, so this counts roughly a third too many and
        a text it says fits will fit; CJK characters take 3 bytes and about one token each.
        """
        return math.ceil(len(text.encode("utf-8")) / 3)

    def words_in_pieces(self, text: str) -> int | None:
        return None  # the remote model's tokenizer is not available offline

    def embed(self, texts: Sequence[str]) -> Vectors:
        if isinstance(texts, str):
            raise TypeError("embed() takes a sequence of texts, not a single string")
        out = np.empty((len(texts), self._dimensions), dtype=np.float32)
        if not texts:
            return out
        started = time.perf_counter()
        batches = list(self._batches(texts))
        if len(batches) == 1 or self._concurrency == 1:
            for start, batch in batches:
                out[start : start + len(batch)] = self._embed_batch(batch)
        else:
            workers = min(self._concurrency, len(batches))
            pool = ThreadPoolExecutor(workers, thread_name_prefix="loci-embed")
            try:
                results = pool.map(lambda item: self._embed_batch(item[1]), batches)
                for (start, batch), vectors in zip(batches, results, strict=True):
                    out[start : start + len(batch)] = vectors
            finally:
                # A failed request fails the call: the batches not yet sent are not sent.
                pool.shutdown(wait=True, cancel_futures=True)
        if len(texts) >= _RATE_MIN_INPUTS:
            with self._measured_lock:
                count, seconds = self._measured
                self._measured = (count + len(texts), seconds + time.perf_counter() - started)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        out /= np.maximum(norms, 1e-12)
        return out

    def chunks_per_s(self) -> float | None:
        count, seconds = self._measured
        return count / seconds if count and seconds > 0 else None

    def _batches(self, texts: Sequence[str]) -> Iterator[tuple[int, list[str]]]:
        """Consecutive runs of `texts` within the request's size and token budgets, with where
        each run starts."""
        start, batch, tokens = 0, list[str](), 0
        for index, text in enumerate(texts):
            cost = self.count_tokens(text)
            if batch and (len(batch) >= self._batch_size or tokens + cost > self._batch_tokens):
                yield start, batch
                start, batch, tokens = index, [], 0
            batch.append(text)
            tokens += cost
        if batch:
            yield start, batch

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> OpenAICompatibleEmbedder:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    def _embed_batch(self, batch: list[str]) -> Vectors:
        # OpenAI answers 400 to an empty string; a single space embeds as "nothing" everywhere.
        payload = {
            "model": self._model,
            "input": [text if text else " " for text in batch],
            "encoding_format": "float",
        }
        response = self._post_with_retries(payload)
        return self._parse(response, len(batch))

    def _post_with_retries(self, payload: dict[str, Any]) -> httpx.Response:
        attempts = self._max_retries + 1
        for attempt in range(attempts):
            try:
                response = self._client.post(self._url, json=payload)
            except httpx.TransportError as exc:
                reason = describe_transport(exc)
                retry_after = None
            else:
                if response.is_success:
                    return response
                reason = describe_failure(response)
                if not is_retryable(response.status_code):
                    raise EmbeddingError(f"embedding request to {self._url} failed: {reason}")
                retry_after = retry_after_seconds(response)
            if attempt + 1 < attempts:
                delay = self._delay(attempt, retry_after)
                log.warning(
                    "embedding request failed (%s); retry %d/%d in %.2fs",
                    reason,
                    attempt + 1,
                    self._max_retries,
                    delay,
                )
                time.sleep(delay)
        raise EmbeddingError(
            f"embedding request to {self._url} failed after {attempts} attempts: {reason}"
        )

    def _delay(self, attempt: int, retry_after: float | None) -> float:
        return backoff_delay(attempt, retry_after, self._backoff_base, self._max_backoff)

    def _parse(self, response: httpx.Response, expected: int) -> Vectors:
        try:
            body = response.json()
            items = sorted(body["data"], key=lambda item: int(item["index"]))
            rows = [item["embedding"] for item in items]
        except (ValueError, KeyError, TypeError) as exc:
            raise EmbeddingError(
                f"embedding endpoint {self._url} returned an unexpected body ({exc!r})"
            ) from exc
        if len(rows) != expected:
            raise EmbeddingError(
                f"embedding endpoint {self._url} returned {len(rows)} vectors for {expected} inputs"
            )
        for row in rows:
            if not isinstance(row, list):
                raise EmbeddingError(
                    f"embedding endpoint {self._url} did not return float lists "
                    "(does it support encoding_format=float?)"
                )
            if len(row) != self._dimensions:
                raise EmbedderMismatch(
                    f"model {self._model!r} returned {len(row)}-dimensional vectors but "
                    f"{self._dimensions} dimensions are configured; set the embedder's dimensions "
                    "to match the model, or reindex the brain with the new embedder"
                )
        try:
            return np.asarray(rows, dtype=np.float32)
        except (ValueError, TypeError) as exc:
            raise EmbeddingError(
                f"embedding endpoint {self._url} returned non-numeric vectors"
            ) from exc
