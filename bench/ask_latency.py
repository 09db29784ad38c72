"""`ask` latency: end to end without a model, and the pipeline's own cost per step with one.

    python bench/ask_latency.py [--chunks 10000] [--questions 60] [--keep DIR]

Builds a synthetic brain through the store (bench/search_latency.py's corpus: Zipf vocabulary,
random unit vectors), then:
1. times `Answers.ask` with no model configured (rule router, score grading, extractive answer) —
   target p95 ≤ 300 ms on a 10k-chunk brain;
2. times each step against a scripted OpenAI-compatible server on 127.0.0.1 that answers every
   call at once, so what a step costs is the pipeline's own overhead (HTTP round trip, JSON,
   prompt building, parsing) — target ≤ 50 ms per step beyond the model's time.
Prints figures only; docs/benchmarks-journal.md records them.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from search_latency import QUERIES, service, synthetic_brain  # noqa: E402
from tests.support.scripted_llm import Reply, ScriptedLLM  # noqa: E402

from loci.answer.events import final_answer  # noqa: E402
from loci.embed.local import LocalEmbedder  # noqa: E402
from loci.eval.metrics import percentile  # noqa: E402
from loci.llm.client import ChatSettings, OpenAICompatibleChat  # noqa: E402

STEPS = ("route", "expand", "search", "grade", "answer")


def instant_model(request: dict[str, Any]) -> Reply:
    """Valid replies for every step, at once: the model's own time is ~0."""
    system = request["messages"][0]["content"]
    if "You classify" in system:
        return Reply(json.dumps({"intent": "simple_lookup", "confidence": 0.9}))
    if "search queries" in system:
        return Reply(json.dumps({"queries": ["budget committee decision", "annual maintenance"]}))
    if "You judge" in system:
        numbers = re.findall(r'number="(\d+)"', request["messages"][-1]["content"])
        grades = [
            {"source": int(n), "reasoning": "on topic", "relevance": "relevant", "score": 0.8}
            for n in numbers
        ]
        return Reply(json.dumps({"grades": grades}))
    return Reply("The committee decides it each spring [1]. Maintenance comes first [2].")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--keep", type=Path, help="reuse/keep the synthetic data directory here")
    args = parser.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="loci-ask-bench-"))
    loci = service(home, LocalEmbedder())
    brain = synthetic_brain(loci, args.chunks)
    list(loci.answers.ask(brain, QUERIES[0]))  # warm caches and the model

    totals: list[float] = []
    decisions: dict[str, int] = {}
    for i in range(args.questions):
        question = QUERIES[i % len(QUERIES)] + f" {i}"
        start = time.perf_counter()
        done = final_answer(loci.answers.ask(brain, question))
        totals.append((time.perf_counter() - start) * 1000)
        decisions[done.decision] = decisions.get(done.decision, 0) + 1
    totals.sort()
    print(
        f"no model   chunks={args.chunks} p50={statistics.median(totals):.0f} ms "
        f"p95={percentile(totals, 95):.0f} ms  decisions={decisions}"
    )

    llm = ScriptedLLM(responder=instant_model).start()
    chat = OpenAICompatibleChat(ChatSettings(base_url=llm.base_url, model="instant"))
    try:
        per_step: dict[str, list[float]] = {step: [] for step in (*STEPS, "total")}
        for i in range(args.questions):
            question = QUERIES[i % len(QUERIES)] + f" {i}"
            done = final_answer(loci.answers.ask(brain, question, chat=chat))
            assert not done.fallbacks, done.fallbacks
            for step, ms in done.timings.items():
                per_step.setdefault(step, []).append(ms)
        line = "  ".join(
            f"{step} {statistics.median(v):.1f}/{percentile(sorted(v), 95):.1f}"
            for step, v in per_step.items()
            if v
        )
        print(f"instant model, ms per step (p50/p95): {line}")
    finally:
        chat.close()
        llm.stop()


if __name__ == "__main__":
    main()
