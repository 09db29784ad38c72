"""Hybrid query latency at scale, on a synthetic corpus, including the query's embedding.

    python bench/search_latency.py --chunks 100000 [--queries 200] [--keep DIR]

Builds a brain of N synthetic chunks (Zipf-distributed vocabulary for BM25, random unit vectors
for the vector leg) directly through the store, then times `Loci.search` in hybrid mode for
natural-language queries: embedding the query, both legs, fusion and citation hydration.
Prints build time and p50/p95/p99 latency per mode. Figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from pathlib import Path

import numpy as np

from loci.app import service_settings
from loci.config import Settings
from loci.embed.local import LocalEmbedder
from loci.eval.metrics import percentile
from loci.models import ChunkDraft, IndexedChunk, NewDocument
from loci.search.engine import SearchRequest
from loci.service import Loci
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore

CHUNKS_PER_DOC = 50
QUERIES = [
    "how does the committee decide on the annual budget for maintenance",
    "effects of temperature on enzyme activity in cold water fish",
    "which supplier delivered the replacement parts late last spring",
    "summary of the security review findings for the payment service",
    "when is the next inspection of the heating system due",
    "protein expression changes after exercise in older adults",
    "what did we agree about remote work on fridays",
    "error codes reported by the pressure sensor during startup",
]


def build(loci: Loci, n_chunks: int, seed: int = 7) -> None:
    rng = np.random.default_rng(seed)
    vocab = [f"w{i}" for i in range(50_000)]
    # a few real words so the benchmark queries match something, at realistic frequencies
    vocab[:400] = list({w for q in QUERIES for w in q.split()} | {f"term{i}" for i in range(400)})[
        :400
    ]
    ranks = np.arange(1, len(vocab) + 1)
    probs = 1.0 / ranks**1.07
    probs /= probs.sum()
    store = loci.store
    assert isinstance(store, SqliteStore)
    brain = loci.brain("bench")
    store.set_brain_embedder(brain.id, loci.embedder.model_id, loci.embedder.dimensions)
    n_docs = n_chunks // CHUNKS_PER_DOC
    for d in range(n_docs):
        digest = hashlib.sha256(f"doc{d}".encode()).hexdigest()
        doc = store.create_document(
            brain.id,
            NewDocument("file", f"doc-{d}.txt", f"Document {d}", None, "text/plain", 1000, digest),
            "none",
        )
        words = rng.choice(len(vocab), size=(CHUNKS_PER_DOC, 120), p=probs)
        vectors = rng.standard_normal((CHUNKS_PER_DOC, 384)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        chunks, new_vectors = [], {}
        for i in range(CHUNKS_PER_DOC):
            text = " ".join(vocab[w] for w in words[i])
            h = hashlib.sha256(f"{d}-{i}".encode()).hexdigest()
            chunks.append(
                IndexedChunk(ChunkDraft(i, text, (), None, 1, 1, 0, len(text), 120, h), h)
            )
            new_vectors[h] = vectors[i]
        store.replace_index(doc.id, chunks, new_vectors, loci.embedder.model_id, "", None, None)
    store.db.execute("DELETE FROM jobs")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="reuse/keep the synthetic data directory here")
    args = parser.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="loci-bench-"))
    settings = Settings(home=home)
    home.mkdir(parents=True, exist_ok=True)
    embedder = LocalEmbedder()
    loci = Loci(
        SqliteStore(settings.database_path),
        BlobStore(settings.blob_dir),
        lambda: embedder,
        service_settings(settings),
    )
    brain = loci.brain("bench")
    have = loci.store.stats(brain.id).chunks
    if have < args.chunks:
        start = time.perf_counter()
        build(loci, args.chunks - have)
        print(f"built {args.chunks} chunks in {time.perf_counter() - start:.0f} s")
    brain = loci.brain("bench")
    embedder.embed(["warm up"])
    for mode in ("text", "vector", "hybrid"):
        loci.search(brain, SearchRequest(QUERIES[0], mode=mode))  # load caches
        times = []
        for i in range(args.queries):
            query = QUERIES[i % len(QUERIES)] + f" {i}"  # defeat any caching of the embedding
            start = time.perf_counter()
            loci.search(brain, SearchRequest(query, mode=mode))  # type: ignore[arg-type]
            times.append((time.perf_counter() - start) * 1000)
        times.sort()
        print(
            f"{mode:7} chunks={args.chunks} p50={statistics.median(times):.1f} ms "
            f"p95={percentile(times, 95):.1f} ms p99={percentile(times, 99):.1f} ms"
        )


if __name__ == "__main__":
    main()
