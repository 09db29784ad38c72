"""How long a snippet takes on real text that is not plain ASCII (accents, curly quotes, Greek
letters: a third of SciFact's abstracts), where search spends most of a query outside its two
legs (docs/benchmarks-journal.md, "Side by side with LanceDB").

    python bench/snippet_speed.py --datasets DIR [--passages 600] [--rounds 3]

Prints the best of the rounds for the passages, and a digest of the snippets made, so two
versions of the code can be checked to make the same ones.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import time
from pathlib import Path

from loci.search.lexical import query_terms
from loci.search.snippets import make_snippet

log = logging.getLogger("snippet_speed")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=Path, required=True, help="holds scifact/ (BEIR)")
    parser.add_argument("--passages", type=int, default=600)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    scifact = args.datasets / "scifact"
    with (scifact / "corpus.jsonl").open() as corpus:
        docs = [json.loads(line) for line in corpus]
    texts = [(d.get("title", "") + ". " + d["text"])[:1500] for d in docs]
    passages = [t for t in texts if not t.isascii()][: args.passages]
    with (scifact / "queries.jsonl").open() as queries:
        asked = [query_terms(json.loads(line)["text"]) for line in queries]
    best, made = float("inf"), []
    for round_ in range(args.rounds):
        start = time.perf_counter()
        snippets = [make_snippet(t, asked[i % len(asked)]) for i, t in enumerate(passages)]
        best = min(best, time.perf_counter() - start)
        if round_ == 0:
            made = snippets
    digest = hashlib.sha256(repr(made).encode()).hexdigest()[:16]
    log.info("%d passages: best %.3f s, %.2f ms a snippet; digest %s", len(passages), best,
             1000 * best / max(1, len(passages)), digest)  # fmt: skip


if __name__ == "__main__":
    main()
