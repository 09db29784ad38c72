"""An optional reranker: a cross-encoder behind an HTTP endpoint reorders the best passages.

Fusion only combines what BM25 and a small embedding model already think. A cross-encoder reads
the question and each passage together, which neither leg can, and is the usual last step of a
retrieval pipeline, after fusion. No such model ships with Loci — none is
available offline from the package registries — so it is a seam to a server the user runs or
rents. Jina, Cohere, vLLM, llama.cpp's server, Infinity and LocalAI accept the same request:

    POST {base_url}/rerank
    {"model": "...", "query": "...", "documents": ["...", ...], "top_n": N}

and answer `{"results": [{"index": 0, "relevance_score": 0.93}, ...]}`. Hugging Face's
text-embeddings-inference answers a bare list of `{"index", "score"}`; both are read.

A reranker is a refinement, never a dependency: any failure (down, slow, malformed) raises
`RerankError`, and the search engine keeps the fused order.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from loci.errors import RerankError
from loci.http_retry import describe_failure, describe_transport

if TYPE_CHECKING:
    import httpx


class Reranker(Protocol):
    """Scores passages against a question; higher is more relevant. One score per passage."""

    def scores(self, query: str, passages: Sequence[str]) -> list[float]: ...


class HttpReranker:
    """A reranker behind `POST {base_url}/rerank` (see the module docstring).

    One attempt per search: a question waits for the answer, so a slow or failing reranker costs
    at most `timeout_s` before the fused order is used instead.
    """

    def __init__(
        self,
        base_url: str,
        model: str,
        api_key: str | None = None,
        timeout_s: float = 5.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        import httpx  # here, not at the top: every search imports this module, few rerank

        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.model = model
        self._url = base_url.rstrip("/") + "/rerank"
        self._client = httpx.Client(headers=headers, timeout=timeout_s, transport=transport)

    def scores(self, query: str, passages: Sequence[str]) -> list[float]:
        if not passages:
            return []
        body: dict[str, object] = {
            "model": self.model,
            "query": query,
            "documents": list(passages),
            "top_n": len(passages),
        }
        import httpx

        try:
            response = self._client.post(self._url, json=body)
        except httpx.TransportError as error:
            raise RerankError(f"reranker unreachable: {describe_transport(error)}") from error
        if response.status_code != 200:
            raise RerankError(f"reranker refused: {describe_failure(response)}")
        try:
            payload = response.json()
        except ValueError as error:
            raise RerankError("reranker answered something that is not JSON") from error
        return read_scores(payload, len(passages))

    def close(self) -> None:
        self._client.close()


def read_scores(payload: Any, count: int) -> list[float]:
    """The score of each of `count` passages from a /rerank answer, in passage order."""
    results = payload.get("results") if isinstance(payload, dict) else payload
    if not isinstance(results, list):
        raise RerankError("reranker answer has no results list")
    found: dict[int, float] = {}
    for result in results:
        if not isinstance(result, dict):
            raise RerankError("reranker answer has a result that is not an object")
        index = result.get("index")
        score = result.get("relevance_score", result.get("score"))
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < count:
            raise RerankError(f"reranker answer has a result for passage {index!r} of {count}")
        if (
            isinstance(score, bool)
            or not isinstance(score, int | float)
            or not math.isfinite(score)
        ):
            raise RerankError(f"reranker answer has no usable score for passage {index}")
        found[index] = float(score)
    if len(found) != count:
        raise RerankError(f"reranker scored {len(found)} of {count} passages")
    return [found[i] for i in range(count)]
