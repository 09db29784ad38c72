"""Embedding throughput of the shipped local model on the chunks Loci really makes of SciFact.

    .venv/bin/python bench/embed_throughput.py                     # 512 chunks, all cores
    .venv/bin/python bench/embed_throughput.py --batch-size 1 4 8 16 32 --rounds 3
    .venv/bin/python bench/embed_throughput.py --words 200         # fixed 200-word windows

Each SciFact abstract (`../shared/datasets/scifact` beside the repository) becomes a note as
`loci eval --beir` adds it, is parsed and chunked by Loci's own chunker at the local model's
limit, and gets the title line the indexer embeds with each chunk. Without the dataset, a built-in
paragraph shuffled with a fixed seed stands in.

Reports, per batch size: chunks per CPU-second of this process (user + system time, from
`resource.getrusage`: steadier than wall time on cores shared with neighbours), chunks per wall
second, and the load average; plus the CPU model and the token lengths measured. Each round is one
`embed()` call over every chunk, after a warm-up that loads the model; the median is printed with
the spread. `--check` also reports the cosine of every vector to the batch-size-1 vector.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import time
from pathlib import Path

import numpy as np

from loci.context_line import context_line
from loci.embed.calibration import cpu_model
from loci.embed.local import LocalEmbedder
from loci.ingest.chunking import chunk_document
from loci.ingest.indexer import CONTEXT_TOKENS
from loci.ingest.parsers import ParseBudgets
from loci.ingest.plan import plan_file
from loci.ingest.sources import note_markdown, note_name

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "scifact"

FALLBACK = (
    "Retrieval augmented generation pairs a search index with a language model so that answers "
    "cite the passages they came from. Documents are parsed, split into chunks that respect "
    "headings and sentences, embedded into vectors and stored beside a full-text index. A query "
    "runs both legs, fuses the rankings and returns the best passages with their page and line."
)


def _entries(dataset: Path) -> list[tuple[str, str]]:
    corpus = dataset / "corpus.jsonl"
    if not corpus.exists():
        rng = random.Random(0)
        words = FALLBACK.split()
        out = []
        for i in range(2000):
            rng.shuffle(words)
            out.append((f"Passage {i}", " ".join(words * 3)))
        return out
    with open(corpus, encoding="utf-8") as f:
        return [(row["title"], row["text"]) for row in map(json.loads, f)]


def loci_chunks(embedder: LocalEmbedder, dataset: Path, count: int) -> list[str]:
    """What the indexer embeds for the first notes of the corpus: title line, then chunk text."""
    out: list[str] = []
    for title, text in _entries(dataset):
        plan = plan_file(note_name(text, title), note_markdown(text, title, ()), kind="note")
        parsed = plan.parse(ParseBudgets())
        result = chunk_document(
            parsed, embedder.count_tokens, max_tokens=embedder.max_tokens - CONTEXT_TOKENS
        )
        for chunk in result.chunks:
            context = context_line(parsed.title or title, chunk.heading_path)
            out.append(f"{context}\n\n{chunk.text}" if context else chunk.text)
        if len(out) >= count:
            return out[:count]
    return out


def word_windows(dataset: Path, count: int, words: int) -> list[str]:
    pool: list[str] = []
    for title, text in _entries(dataset):
        pool.extend((title + " " + text).split())
        if len(pool) >= count * words:
            break
    return [" ".join(pool[i * words : (i + 1) * words]) for i in range(count)]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(embedder: LocalEmbedder, chunks: list[str], rounds: int) -> dict[str, float]:
    per_cpu, per_wall, loads = [], [], []
    for _ in range(rounds):
        wall, cpu = time.perf_counter(), _cpu_seconds()
        embedder.embed(chunks)
        per_wall.append(len(chunks) / (time.perf_counter() - wall))
        per_cpu.append(len(chunks) / (_cpu_seconds() - cpu))
        loads.append(os.getloadavg()[0])
    return {
        "cpu": statistics.median(per_cpu),
        "cpu_min": min(per_cpu),
        "cpu_max": max(per_cpu),
        "wall": statistics.median(per_wall),
        "wall_min": min(per_wall),
        "wall_max": max(per_wall),
        "load": statistics.mean(loads),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chunks", type=int, default=512)
    parser.add_argument("--words", type=int, default=None, help="fixed windows instead of chunks")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch-size", type=int, nargs="+", default=[1])
    parser.add_argument("--check", action="store_true", help="cosine to batch size 1")
    parser.add_argument("--model", type=Path, default=None, help="another ONNX file to measure")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = parser.parse_args()

    probe = LocalEmbedder(threads=args.threads, model_path=args.model)
    if args.words:
        chunks = word_windows(args.dataset, args.chunks, args.words)
        what = f"{args.words}-word windows"
    else:
        chunks = loci_chunks(probe, args.dataset, args.chunks)
        source = "SciFact" if (args.dataset / "corpus.jsonl").exists() else "built-in"
        what = f"Loci chunks of {source} notes"
    tokens = np.array([min(probe.count_tokens(c), probe.max_tokens) + 2 for c in chunks])
    p = np.percentile(tokens, [10, 25, 50, 75, 90])
    print(
        f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; CPU: {cpu_model()}, "
        f"{len(os.sched_getaffinity(0))} usable cores; threads {args.threads or 'all'}"
    )
    print(
        f"{len(chunks)} {what}; tokens with [CLS]/[SEP]: mean {tokens.mean():.0f}, "
        f"p10/25/50/75/90 {' / '.join(f'{v:.0f}' for v in p)}, max {tokens.max()}"
    )
    reference = probe.embed(chunks) if args.check else None
    for batch_size in args.batch_size:
        embedder = LocalEmbedder(threads=args.threads, batch_size=batch_size, model_path=args.model)
        vectors = embedder.embed(chunks)  # warm-up: loads the model
        result = measure(embedder, chunks, args.rounds)
        line = (
            f"batch {batch_size:>2}: {result['cpu']:.1f} chunks/CPU-s "
            f"({result['cpu_min']:.1f}-{result['cpu_max']:.1f}), {result['wall']:.1f} chunks/s "
            f"wall ({result['wall_min']:.1f}-{result['wall_max']:.1f}), load {result['load']:.2f}"
        )
        if reference is not None:
            cosines = np.sum(reference * vectors, axis=1)
            line += f"; cosine to batch 1: mean {cosines.mean():.5f}, min {cosines.min():.5f}"
        print(line, flush=True)


if __name__ == "__main__":
    main()
