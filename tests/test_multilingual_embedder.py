"""A multilingual embedder is one setting away: a model behind an OpenAI-compatible endpoint
(Ollama, text-embeddings-inference and vLLM all serve `POST /v1/embeddings`) on a loopback
server speaking that protocol. Its leg takes part in hybrid search for a Japanese question,
which the bundled English model's leg would not (`LOCI_EMBED_LANGUAGES`), and passages are cut
to the model's input limit (`LOCI_EMBED_MAX_TOKENS`).

The server is a stand-in at the HTTP boundary (no multilingual model's weights are installed in
the test environment): its vectors are hashed character bigrams, so texts that share words in
any script are close, as a multilingual model's would be.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tests.support.cli import run_cli
from tests.support.loopback import Loopback, QuietHandler

DIMS = 64
NOTES = {
    "会議": "会議は毎週火曜日の午前十時に始まります。議事録は共有フォルダに保存します。",
    "予算": "来年度の予算案は三月末までに提出してください。",
    "Garden": "The tomatoes in the garden need water every morning in July.",
}


def bigram_vector(text: str) -> list[float]:
    vector = np.zeros(DIMS)
    chars = [c for c in text.lower() if c.isalnum()]
    for a, b in zip(chars, chars[1:], strict=False):
        vector[hashlib.blake2b((a + b).encode(), digest_size=2).digest()[0] % DIMS] += 1.0
    return [float(x) for x in vector + 1e-3]


class Embeddings:
    def __init__(self) -> None:
        self.inputs: list[str] = []
        server = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.inputs += body["input"]
                data = [
                    {"object": "embedding", "index": i, "embedding": bigram_vector(text)}
                    for i, text in enumerate(body["input"])
                ]
                reply = {"object": "list", "data": data, "model": body["model"]}
                self.send(200, json.dumps(reply), "application/json")

        self.web = Loopback(Handler)


@pytest.fixture
def embeddings() -> Iterator[Embeddings]:
    server = Embeddings()
    with server.web:
        yield server


def settings(server: Embeddings, **more: str) -> dict[str, str]:
    return {
        "LOCI_EMBEDDER": "openai",
        "LOCI_EMBED_BASE_URL": server.web.url("/v1"),
        "LOCI_EMBED_MODEL": "multilingual-e5-small",
        "LOCI_EMBED_DIMENSIONS": str(DIMS),
        "LOCI_EMBED_MAX_TOKENS": "128",
        **more,
    }


def search(home: Path, env: dict[str, str], question: str) -> list[dict[str, Any]]:
    found = run_cli("search", question, "--json", home=home, env=env)
    assert found.returncode == 0, found.stderr
    hits: list[dict[str, Any]] = json.loads(found.stdout)["hits"]
    return hits


def test_a_multilingual_endpoint_takes_part_in_a_japanese_search(
    embeddings: Embeddings, tmp_path: Path
) -> None:
    home = tmp_path / "home"
    env = settings(embeddings, LOCI_EMBED_LANGUAGES="*")
    for title, text in NOTES.items():
        assert run_cli("note", text, "--title", title, home=home, env=env).returncode == 0
    long_note = "長い記録です。" * 200  # 1,400 characters: cut to the model's limit
    assert run_cli("note", long_note, "--title", "記録", home=home, env=env).returncode == 0
    # 128 tokens, estimated at 3 bytes each, less the room for the title line: no input longer
    assert max(len(text.encode()) for text in embeddings.inputs) <= 128 * 3

    hits = search(home, env, "議事録の保存場所")
    assert hits[0]["title"] == "会議"
    assert hits[0]["vector_rank"] is not None  # the multilingual leg counted

    # The same brain asked as if the endpoint read English only: BM25 alone for Japanese.
    english_only = {**env, "LOCI_EMBED_LANGUAGES": "en"}
    hits = search(home, english_only, "議事録の保存場所")
    assert hits[0]["title"] == "会議"
    assert all(h["vector_rank"] is None for h in hits)
    garden = search(home, english_only, "when do the tomatoes need water")
    assert garden[0]["title"] == "Garden" and garden[0]["vector_rank"] is not None
