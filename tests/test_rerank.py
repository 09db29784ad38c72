"""The optional reranker: a cross-encoder server reorders hybrid search's best passages.

No cross-encoder runs here, so the reranker is a stand-in on loopback that speaks the /rerank
protocol (Jina, Cohere, vLLM, llama.cpp, Infinity; TEI's bare-list answer too) and judges by a
rule the test chooses. What is checked is Loci's side: what it sends, that the reranker's order
is the order a user sees, and that a reranker that fails in any way leaves search answering
in the fused order.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from loci.app import build_reranker
from loci.config import Settings
from loci.embed.base import Embedder
from loci.errors import InvalidInput
from loci.models import Brain, Hit
from loci.search.engine import SearchRequest
from loci.service import Loci
from tests.support.loopback import ApiHandler, Loopback
from tests.support.services import make_service

NOTES = {
    "Descaling the kettle": "Fill the kettle with one part vinegar to two parts water, bring it "
    "to the boil, leave it for an hour, then rinse it twice with fresh water.",
    "Kettle shopping": "We compared kettle prices: the steel kettle was cheapest, the glass "
    "kettle prettiest, and the kettle with a thermometer the most expensive kettle.",
    "Tea for guests": "Warm the pot first; black tea wants water just off the boil and four "
    "minutes, green tea cooler water and two minutes.",
    "Garden beds": "The raised beds need compost in March and a mulch of straw in June.",
}
QUESTION = "how do I get limescale out of the kettle"

Judge = Callable[[str, list[str]], Any]  # (query, documents) -> the JSON body to answer


class RerankServer:
    """A /rerank endpoint on loopback: records each request, answers with `judge`'s body, or
    with `status` and a plain body when `status` is not 200, after `delay` seconds."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.judge: Judge = by_rule(lambda _query, _doc: 0.5)
        self.status = 200
        self.delay = 0.0
        server = self

        class Handler(ApiHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                server.requests.append(body)
                server.headers.append(dict(self.headers.items()))
                time.sleep(server.delay)
                if self.path != "/v1/rerank":
                    self.send(404, "no such route")
                elif server.status != 200:
                    self.send(server.status, '{"error": "overloaded"}', "application/json")
                else:
                    answer = server.judge(body["query"], body["documents"])
                    raw = answer if isinstance(answer, str) else json.dumps(answer)
                    self.send(200, raw, "application/json")

        self.site = Loopback(Handler)

    @property
    def base_url(self) -> str:
        return self.site.url("/v1")


def by_rule(score: Callable[[str, str], float]) -> Judge:
    """A Jina/Cohere-style answer, best first, scoring each document by `score`."""

    def judge(query: str, documents: list[str]) -> Any:
        results = [
            {"index": i, "relevance_score": score(query, d)} for i, d in enumerate(documents)
        ]
        return {
            "model": "stand-in",
            "results": sorted(results, key=lambda r: -r["relevance_score"]),
        }

    return judge


@pytest.fixture
def reranker() -> Iterator[RerankServer]:
    server = RerankServer()
    with server.site:
        yield server


def service(home: Path, embedder: Embedder, base_url: str) -> Loci:
    return make_service(
        home,
        embedder,
        rerank_base_url=base_url,
        rerank_model="bge-reranker-v2-m3",
        rerank_api_key="rk-test",
        rerank_timeout_s=1.0,  # the "slow" stand-in waits 1.5 s
    )


def fill(loci: Loci) -> Brain:
    brain = loci.brain("kitchen")
    ids = [
        loci.library.add_note(brain, text, title=title).document.id for title, text in NOTES.items()
    ]
    loci.library.wait_for(brain, ids)
    return brain


def titles(hits: list[Hit]) -> list[str | None]:
    return [h.citation.title for h in hits]


@pytest.fixture
def plain(tmp_path: Path, embedder: Embedder) -> Iterator[tuple[Loci, Brain]]:
    loci = make_service(tmp_path / "plain", embedder)
    yield loci, fill(loci)
    loci.store.close()


@pytest.fixture
def reranked(
    tmp_path: Path, embedder: Embedder, reranker: RerankServer
) -> Iterator[tuple[Loci, Brain]]:
    loci = service(tmp_path / "reranked", embedder, reranker.base_url)
    yield loci, fill(loci)
    loci.store.close()


def test_the_rerankers_order_is_the_order_a_user_sees(
    plain: tuple[Loci, Brain], reranked: tuple[Loci, Brain], reranker: RerankServer
) -> None:
    loci, brain = reranked
    fused = titles(plain[0].searching.search(plain[1], SearchRequest(QUESTION, limit=4)))
    # A judge that knows limescale comes off with vinegar, whatever the words of the question.
    reranker.judge = by_rule(lambda _q, doc: 0.97 if "vinegar" in doc else 0.02)
    hits = loci.searching.search(brain, SearchRequest(QUESTION, limit=4))
    assert hits[0].citation.title == "Descaling the kettle"
    assert hits[0].score == pytest.approx(0.97) and all(h.reranked for h in hits)
    assert set(titles(hits)) == set(fused)  # the same passages, reordered

    # A judge that prefers whatever it is given last: the user sees the fused order reversed.
    reranker.judge = lambda _q, docs: {
        "results": [{"index": i, "relevance_score": float(i)} for i in range(len(docs))]
    }
    hits = loci.searching.search(brain, SearchRequest(QUESTION, limit=4))
    sent = reranker.requests[-1]["documents"]
    assert [next(n for n, d in enumerate(sent) if h.text in d) for h in hits] == [3, 2, 1, 0]
    assert titles(hits) == fused[::-1]


def test_what_loci_sends_to_the_reranker(
    reranked: tuple[Loci, Brain], reranker: RerankServer
) -> None:
    loci, brain = reranked
    loci.searching.search(brain, SearchRequest(QUESTION, limit=3))
    body, headers = reranker.requests[-1], reranker.headers[-1]
    assert body["model"] == "bge-reranker-v2-m3" and body["query"] == QUESTION
    # Every passage of the small brain (depth 30 > 4), each with its title in front.
    assert len(body["documents"]) == len(NOTES) == body["top_n"]
    opening = "Descaling the kettle\n\nFill the kettle with one part vinegar"
    assert any(d.startswith(opening) for d in body["documents"])
    assert headers["Authorization"] == "Bearer rk-test"


def test_text_and_vector_modes_never_ask_the_reranker(
    reranked: tuple[Loci, Brain], reranker: RerankServer
) -> None:
    loci, brain = reranked
    for mode in ("text", "vector"):
        hits = loci.searching.search(brain, SearchRequest(QUESTION, mode=mode))
        assert hits and not any(h.reranked for h in hits)
    assert reranker.requests == []


def test_evaluation_ranks_through_the_reranker(
    reranked: tuple[Loci, Brain], reranker: RerankServer
) -> None:
    loci, brain = reranked
    reranker.judge = by_rule(lambda _q, doc: 1.0 if "raised beds" in doc else 0.0)
    ranked = loci.searching.ranked_documents(brain, QUESTION)
    garden = next(d for d in loci.library.documents(brain) if d.title == "Garden beds")
    assert ranked[0][0] == garden.id  # what `loci eval` measures is what search returns


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("status", "HTTP 503"),
        ("not json", "not JSON"),
        ("too few", "scored 1 of 4"),
        ("bad index", "passage 9 of 4"),
        ("nan score", "no usable score"),
        ("slow", "unreachable"),
        ("down", "unreachable"),
    ],
)
def test_a_failing_reranker_leaves_the_fused_order(
    fault: str,
    reason: str,
    plain: tuple[Loci, Brain],
    reranked: tuple[Loci, Brain],
    reranker: RerankServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    loci, brain = reranked
    if fault == "status":
        reranker.status = 503
    elif fault == "not json":
        reranker.judge = lambda _q, _d: "<html>gateway</html>"
    elif fault == "too few":
        reranker.judge = lambda _q, _d: {"results": [{"index": 0, "relevance_score": 1.0}]}
    elif fault == "bad index":
        reranker.judge = lambda _q, d: {"results": [{"index": 9, "relevance_score": 1.0}] * len(d)}
    elif fault == "nan score":
        reranker.judge = lambda _q, d: (
            '{"results": ['
            + ",".join(f'{{"index": {i}, "score": NaN}}' for i in range(len(d)))
            + "]}"
        )
    elif fault == "slow":
        reranker.delay = 1.5  # the service's timeout is 1 s
    else:
        reranker.site.stop()
    request = SearchRequest(QUESTION, limit=4)
    with caplog.at_level(logging.WARNING, logger="loci.search.engine"):
        hits = loci.searching.search(brain, request)
    expected = plain[0].searching.search(plain[1], request)
    assert titles(hits) == titles(expected)
    assert [h.score for h in hits] == pytest.approx([h.score for h in expected])
    assert not any(h.reranked for h in hits)
    assert any(reason in r.getMessage() for r in caplog.records), caplog.text


def test_text_embeddings_inference_answers_are_read(
    reranked: tuple[Loci, Brain], reranker: RerankServer
) -> None:
    loci, brain = reranked
    # TEI answers a bare list with "score".
    reranker.judge = lambda _q, docs: [
        {"index": i, "score": 0.9 if "green tea" in d else 0.1} for i, d in enumerate(docs)
    ]
    hits = loci.searching.search(brain, SearchRequest(QUESTION, limit=2))
    assert hits[0].citation.title == "Tea for guests" and hits[0].reranked


def test_a_reranker_needs_a_model(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, rerank_base_url="http://127.0.0.1:9/v1")
    with pytest.raises(InvalidInput, match="LOCI_RERANK_MODEL"):
        build_reranker(settings)
    assert build_reranker(Settings(home=tmp_path)) is None
