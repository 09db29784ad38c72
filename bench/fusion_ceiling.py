"""What fusion by ceilings costs: BM25's best possible score for a question, beside the BM25 leg.

    python bench/fusion_ceiling.py --chunks 100000 [--rounds 30] [--keep DIR]

Builds (or reuses) search_latency.py's synthetic brain, loads its in-memory BM25 index, and times
`LexicalIndex.search` (the text leg, top 100) and `LexicalIndex.ceiling` for the same natural-
language questions, interleaved so both see the same machine load. Prints medians and p95 in
milliseconds and the ceiling's cost as a share of the leg. Figures go to docs/benchmarks-journal.md.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from search_latency import QUERIES, service, synthetic_brain

from loci.embed.local import LocalEmbedder
from loci.eval.metrics import percentile
from loci.search.lexical import query_terms
from loci.store.sqlite import SqliteStore
from loci.store.stemming import ENGLISH, query_tokens


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--keep", type=Path, help="reuse/keep the synthetic data directory here")
    args = parser.parse_args()
    scratch = None if args.keep else tempfile.TemporaryDirectory(prefix="loci-ceiling-")
    home = args.keep or Path(scratch.name if scratch else ".")
    loci = service(home, LocalEmbedder())
    brain = synthetic_brain(loci, args.chunks)
    store = loci.store
    assert isinstance(store, SqliteStore)
    index = store.search_index.lexical_index(brain.id)
    questions = [query_tokens(query_terms(q), [ENGLISH]) for q in QUERIES]
    leg: list[float] = []
    ceiling: list[float] = []
    for _ in range(args.rounds):
        for tokens in questions:
            started = time.perf_counter()
            index.search(tokens, 100)
            leg.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()
            index.ceiling(tokens)
            ceiling.append((time.perf_counter() - started) * 1000)
    print(f"chunks {index.size}, questions {len(questions)} x {args.rounds} rounds")
    for name, times in (("BM25 leg (top 100)", leg), ("ceiling", ceiling)):
        print(
            f"{name:20} p50 {statistics.median(times):7.2f} ms  p95 {percentile(times, 95):7.2f} ms"
        )
    print(f"ceiling / leg (medians): {statistics.median(ceiling) / statistics.median(leg):.2f}")
    if scratch:
        scratch.cleanup()


if __name__ == "__main__":
    main()
