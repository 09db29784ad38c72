"""Embedding throughput of the shipped local model on ~200-word chunks.

    .venv/bin/python bench/embed_throughput.py                  # 512 chunks, all cores
    .venv/bin/python bench/embed_throughput.py --threads 1 --rounds 5

Chunks are consecutive 200-word windows of the SciFact corpus (`../shared/datasets/scifact` beside
the repository) when it is there, else of a built-in paragraph shuffled with a fixed seed. Prints
chunks/s for each round and the median, after one warm-up call that loads the model. Machines that
share their cores with neighbours are noisy: look at the median and the spread, not one number.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
from pathlib import Path

from loci.embed.local import LocalEmbedder

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "scifact"

FALLBACK = (
    "Retrieval augmented generation pairs a search index with a language model so that answers "
    "cite the passages they came from. Documents are parsed, split into chunks that respect "
    "headings and sentences, embedded into vectors and stored beside a full-text index. A query "
    "runs both legs, fuses the rankings and returns the best passages with their page and line."
)


def make_chunks(dataset: Path, count: int, words: int) -> list[str]:
    corpus = dataset / "corpus.jsonl"
    pool: list[str] = []
    if corpus.exists():
        with open(corpus, encoding="utf-8") as f:
            for line in f:
                row = json.loads(line)
                pool.extend((row["title"] + " " + row["text"]).split())
                if len(pool) >= count * words:
                    break
    else:
        rng = random.Random(0)
        base = FALLBACK.split()
        while len(pool) < count * words:
            rng.shuffle(base)
            pool.extend(base)
    return [" ".join(pool[i * words : (i + 1) * words]) for i in range(count)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=512)
    parser.add_argument("--words", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=1, help="LocalEmbedder's batch_size")
    parser.add_argument("--model", type=Path, default=None, help="another ONNX file to measure")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = parser.parse_args()

    chunks = make_chunks(args.dataset, args.chunks, args.words)
    embedder = LocalEmbedder(
        threads=args.threads, batch_size=args.batch_size, model_path=args.model
    )
    embedder.embed(chunks[:2])
    tokens = [min(embedder.count_tokens(c), embedder.max_tokens) for c in chunks]
    print(
        f"{len(chunks)} chunks of {args.words} words, {statistics.mean(tokens):.0f} tokens on "
        f"average after truncation; batch size {args.batch_size}, threads {args.threads or 'all'}"
    )
    rates = []
    for round_number in range(1, args.rounds + 1):
        started = time.perf_counter()
        embedder.embed(chunks)
        rates.append(len(chunks) / (time.perf_counter() - started))
        print(f"round {round_number}: {rates[-1]:.1f} chunks/s", flush=True)
    median = statistics.median(rates)
    print(f"median: {median:.1f} chunks/s (min {min(rates):.1f}, max {max(rates):.1f})")


if __name__ == "__main__":
    main()
