"""OpenAICompatibleEmbedder against a real HTTP server on 127.0.0.1 speaking the OpenAI protocol.

The server is a scripted stand-in at the HTTP boundary (a hosted model cannot run here): each test
queues the responses it wants and reads back the requests the client actually sent.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from loci.app import build_embedder
from loci.config import load_settings
from loci.embed import OpenAICompatibleEmbedder
from loci.errors import EmbedderMismatch, EmbeddingError
from tests.support.cli import run_cli
from tests.support.fake_embeddings import (
    DIMS,
    FakeEmbeddingsServer,
    Scripted,
    make_embedder,
    vector_for,
)


@pytest.fixture
def server() -> Iterator[FakeEmbeddingsServer]:
    srv = FakeEmbeddingsServer()
    srv.start()
    yield srv
    srv.stop()


def test_batches_200_inputs_as_96_96_8_in_order(server: FakeEmbeddingsServer) -> None:
    texts = [f"passage number {i}" for i in range(200)]
    with make_embedder(server, concurrency=1) as embedder:
        vectors = embedder.embed(texts)

    assert [len(r.body["input"]) for r in server.requests] == [96, 96, 8]
    assert [r.path for r in server.requests] == ["/v1/embeddings"] * 3
    first = server.requests[0].body
    assert first["model"] == "text-embedding-test"
    assert first["encoding_format"] == "float"
    assert vectors.shape == (200, DIMS)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    # Row i is the server's vector for text i, whatever order the server listed them in.
    for i in (0, 95, 96, 199):
        expected = np.asarray(vector_for(texts[i], DIMS))
        np.testing.assert_allclose(vectors[i], expected / np.linalg.norm(expected), rtol=1e-5)


def test_sends_bearer_token(server: FakeEmbeddingsServer) -> None:
    with make_embedder(server) as embedder:
        embedder.embed(["hello"])
    assert server.requests[0].headers["Authorization"] == "Bearer sk-test-key"


def test_no_authorization_header_without_key(server: FakeEmbeddingsServer) -> None:
    with OpenAICompatibleEmbedder(server.base_url, None, "local-model", DIMS) as embedder:
        embedder.embed(["hello"])
    assert "Authorization" not in server.requests[0].headers


def test_rate_limit_with_retry_after_zero_is_retried(server: FakeEmbeddingsServer) -> None:
    server.script = [Scripted(429, {"Retry-After": "0"}), Scripted(200)]
    with make_embedder(server) as embedder:
        vectors = embedder.embed(["one", "two"])
    assert len(server.requests) == 2
    assert vectors.shape == (2, DIMS)


def test_retry_after_as_http_date_is_honoured(server: FakeEmbeddingsServer) -> None:
    server.script = [Scripted(503, {"Retry-After": "Wed, 21 Oct 2015 07:28:00 GMT"}), Scripted()]
    with make_embedder(server) as embedder:
        vectors = embedder.embed(["a date in the past means: retry now"])
    assert len(server.requests) == 2
    assert vectors.shape == (1, DIMS)


def test_persistent_500_raises_embedding_error_naming_the_status(
    server: FakeEmbeddingsServer,
) -> None:
    server.script = [Scripted(500) for _ in range(10)]
    with make_embedder(server, max_retries=3) as embedder, pytest.raises(EmbeddingError) as info:
        embedder.embed(["doomed"])
    assert len(server.requests) == 4  # the first try and 3 retries
    message = str(info.value)
    assert "HTTP 500" in message
    assert "after 4 attempts" in message
    assert "\n" not in message
    assert not isinstance(info.value, EmbedderMismatch)


def test_client_error_is_not_retried(server: FakeEmbeddingsServer) -> None:
    server.script = [Scripted(401)]
    with make_embedder(server) as embedder, pytest.raises(EmbeddingError, match="HTTP 401"):
        embedder.embed(["who am I"])
    assert len(server.requests) == 1


def test_wrong_dimension_raises_embedder_mismatch(server: FakeEmbeddingsServer) -> None:
    server.script = [Scripted(200, dims=DIMS * 2)]
    with make_embedder(server) as embedder, pytest.raises(EmbedderMismatch) as info:
        embedder.embed(["too wide"])
    assert "16-dimensional" in str(info.value)
    assert f"{DIMS} dimensions are configured" in str(info.value)


def test_connection_refused_is_an_embedding_error() -> None:
    with socket.socket() as probe:  # a port that was free a moment ago and has no listener now
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    embedder = OpenAICompatibleEmbedder(
        f"http://127.0.0.1:{port}/v1",
        "k",
        "m",
        DIMS,
        max_retries=1,
        backoff_base=0.001,
        timeout=2.0,
    )
    with embedder, pytest.raises(EmbeddingError, match="after 2 attempts"):
        embedder.embed(["anyone there?"])


def test_empty_input_makes_no_request_and_empty_string_is_embedded(
    server: FakeEmbeddingsServer,
) -> None:
    with make_embedder(server) as embedder:
        assert embedder.embed([]).shape == (0, DIMS)
        assert server.requests == []
        vectors = embedder.embed([""])
    assert vectors.shape == (1, DIMS)
    assert server.requests[0].body["input"] == [" "]


def test_identity_and_token_estimate(server: FakeEmbeddingsServer) -> None:
    with make_embedder(server, max_tokens=512) as embedder:
        assert embedder.model_id == "text-embedding-test"
        assert embedder.dimensions == DIMS
        assert embedder.max_tokens == 512
        english = "The quick brown fox jumps over the lazy dog. " * 20
        # Real tokenizers give ~4 characters per English token; the estimate must not undercount.
        assert embedder.count_tokens(english) >= len(english) / 4
        assert embedder.count_tokens("") == 0


def test_requests_overlap_up_to_the_concurrency_and_vectors_keep_input_order(
    server: FakeEmbeddingsServer,
) -> None:
    texts = [f"passage number {i}" for i in range(40)]
    both_arrived = threading.Barrier(2, timeout=10)
    later_answered = threading.Event()

    def hold(inputs: list[str]) -> None:
        if inputs[0] in (texts[0], texts[10]):
            both_arrived.wait()  # raises (and the server answers 500) unless the two overlap
        if inputs[0] == texts[0]:
            # The first batch is answered last: its vectors must still land in rows 0-9.
            later_answered.wait(timeout=10)
        elif inputs[0] == texts[30]:
            later_answered.set()

    server.before_reply = hold
    with make_embedder(server, batch_size=10, concurrency=2, max_retries=0) as embedder:
        assert embedder.chunks_per_s() is None  # nothing measured yet
        vectors = embedder.embed(texts)
        rate = embedder.chunks_per_s()
        assert rate is not None and rate > 0
        embedder.embed(["a search's query"])  # one round trip: not an ingest rate
        assert embedder.chunks_per_s() == rate

    assert server.most_in_flight == 2  # overlapping, and never more than the setting
    assert sorted(len(r.body["input"]) for r in server.requests) == [1, 10, 10, 10, 10]
    for i, text in enumerate(texts):
        expected = np.asarray(vector_for(text, DIMS))
        np.testing.assert_allclose(vectors[i], expected / np.linalg.norm(expected), rtol=1e-5)


def test_requests_are_cut_by_estimated_tokens(server: FakeEmbeddingsServer) -> None:
    # count_tokens estimates one token per 3 bytes: 300 bytes are 100 tokens.
    texts = [f"{i}" + "a" * 299 for i in range(7)] + ["b" * 3000] + [f"{i}c" for i in range(3)]
    with make_embedder(server, batch_tokens=250, concurrency=3) as embedder:
        vectors = embedder.embed(texts)
        budget = [embedder.count_tokens(t) for t in texts]
    assert budget[0] == 100 and budget[7] == 1000 and budget[8] == 1

    sent = sorted((r.body["input"] for r in server.requests), key=lambda b: texts.index(b[0]))
    # Consecutive runs of at most 250 estimated tokens; the 1000-token text alone.
    assert [len(batch) for batch in sent] == [2, 2, 2, 1, 1, 3]
    assert [t for batch in sent for t in batch] == texts
    assert vectors.shape == (len(texts), DIMS)


def test_a_failed_request_fails_the_call_with_its_reason(server: FakeEmbeddingsServer) -> None:
    server.script = [Scripted(200), Scripted(401)]
    texts = [f"passage {i}" for i in range(30)]
    with (
        make_embedder(server, batch_size=5, concurrency=2) as embedder,
        pytest.raises(EmbeddingError, match="HTTP 401"),
    ):
        embedder.embed(texts)
    # The batches queued behind the failure were not sent.
    assert len(server.requests) < 6


def test_bad_concurrency_and_token_budget_are_refused() -> None:
    with pytest.raises(ValueError, match="concurrency"):
        OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", None, "m", DIMS, concurrency=0)
    with pytest.raises(ValueError, match="batch_tokens"):
        OpenAICompatibleEmbedder("http://127.0.0.1:9/v1", None, "m", DIMS, batch_tokens=0)


def test_the_settings_set_concurrency_and_request_size(
    server: FakeEmbeddingsServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in {
        "HOME": str(tmp_path / "home"),
        "EMBEDDER": "openai",
        "EMBED_BASE_URL": server.base_url,
        "EMBED_MODEL": "text-embedding-test",
        "EMBED_DIMENSIONS": str(DIMS),
        "EMBED_CONCURRENCY": "3",
        "EMBED_BATCH_TOKENS": "100",  # 2 texts of 100 bytes (34 estimated tokens each) a request
    }.items():
        monkeypatch.setenv(f"LOCI_{name}", value)
    all_three = threading.Barrier(3, timeout=10)
    texts = [f"{i:03d} " + "x" * 96 for i in range(18)]

    def hold(inputs: list[str]) -> None:
        if inputs[0] in (texts[0], texts[2], texts[4]):
            all_three.wait()

    server.before_reply = hold
    embedder = build_embedder(load_settings())
    assert isinstance(embedder, OpenAICompatibleEmbedder)
    with embedder:
        vectors = embedder.embed(texts)
    assert server.most_in_flight == 3
    assert sorted(len(r.body["input"]) for r in server.requests) == [2] * 9
    expected = np.asarray(vector_for(texts[17], DIMS))
    np.testing.assert_allclose(vectors[17], expected / np.linalg.norm(expected), rtol=1e-5)


def test_a_concurrency_of_zero_is_one_clear_line(tmp_path: Path) -> None:
    result = run_cli("list", home=tmp_path / "home", env={"LOCI_EMBED_CONCURRENCY": "0"})
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: invalid setting LOCI_EMBED_CONCURRENCY: Input should be greater than or equal to 1"
    )
