"""Hybrid query latency at scale, on a synthetic corpus, including the query's embedding.

    python bench/search_latency.py --chunks 100000 [--queries 200] [--keep DIR] [--fast-only]
                                   [--passages-only]

Builds a brain of N synthetic chunks (Zipf-distributed vocabulary for BM25, random unit vectors
for the vector leg) directly through the store, then times `Searching.search` in hybrid mode for
natural-language queries: embedding the query, both legs, fusion and citation hydration.

Two stores open the same data directory: "plain" with the large-brain paths switched off (FTS5's
bm25(), float32 scan) and "fast" with the shipped thresholds (in-memory BM25 index, int8
pre-scan). Their queries alternate, so both see the same machine load and the ratio is fair on a
shared machine. Prints the time to build the derived indexes, p50/p95/p99 latency per mode and
path, and how far the fast legs agree with the plain ones (top-100 overlap). `--passages-only`
adds a third path, "passages": the fast store with the text leg reading passages alone (no
whole-document BM25, `loci.search.document_words`), and prints the BM25 file's size and what
its document-level index takes of it.
Figures go to docs/benchmarks-journal.md.
"""

from __future__ import annotations

import argparse
import dataclasses
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
from loci.models import Brain, ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.search.engine import SearchRequest
from loci.search.lexical import query_terms
from loci.service import Loci
from loci.store.blobs import BlobStore
from loci.store.document_index import DocumentIndex
from loci.store.lexical_files import index_path
from loci.store.lexical_index import LexicalIndex
from loci.store.sqlite import SqliteStore
from loci.store.sqlite.document_rows import document_rows
from loci.store.sqlite.rows import index_weights
from loci.store.stemming import analyze

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
                IndexedChunk(ChunkDraft(i, text, (), Location(None, 1, 1, 0, len(text)), 120, h), h)
            )
            new_vectors[h] = vectors[i]
        store.replace_index(doc.id, chunks, new_vectors, loci.embedder.model_id, "", None, None)
    store.db.execute("DELETE FROM jobs")


def service(home: Path, embedder: LocalEmbedder, plain: bool = False) -> Loci:
    """A service over the SQLite data directory `home`; `plain` turns the large-brain paths
    (in-memory BM25 index, int8 pre-scan) off."""
    settings = Settings(home=home)
    home.mkdir(parents=True, exist_ok=True)
    store = (
        SqliteStore(
            settings.database_path, lexical_index_min_chunks=None, vector_int8_min_chunks=None
        )
        if plain
        else SqliteStore(settings.database_path)
    )
    return Loci(store, BlobStore(settings.blob_dir), lambda: embedder, service_settings(settings))


def synthetic_brain(loci: Loci, n_chunks: int) -> Brain:
    """The "bench" brain, topped up to `n_chunks` synthetic chunks (a kept data directory that
    has them already is used as it is)."""
    have = loci.store.stats(loci.brain("bench").id).chunks
    if have < n_chunks:
        start = time.perf_counter()
        build(loci, n_chunks - have)
        print(f"built {n_chunks} chunks in {time.perf_counter() - start:.0f} s", flush=True)
    return loci.brain("bench")


def overlap(a: list[tuple[int, float]], b: list[tuple[int, float]]) -> float:
    return len({i for i, _ in a} & {i for i, _ in b}) / max(len(a), 1)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--keep", type=Path, help="reuse/keep the synthetic data directory here")
    parser.add_argument("--fast-only", action="store_true", help="skip the plain paths")
    parser.add_argument(
        "--passages-only", action="store_true", help="also time the text leg without documents"
    )
    args = parser.parse_args()
    home = args.keep or Path(tempfile.mkdtemp(prefix="loci-bench-"))
    embedder = LocalEmbedder()
    fast = service(home, embedder)
    brain = synthetic_brain(fast, args.chunks)
    embedder.embed(["warm up"])
    paths = {"fast": fast}
    if not args.fast_only:
        paths = {"plain": service(home, embedder, plain=True), "fast": fast}
    if args.passages_only:
        passages = service(home, embedder)
        engine = passages.searching.engine
        engine.params = dataclasses.replace(engine.params, document_words=0.0)
        paths["passages"] = passages
    for name, loci in paths.items():
        start = time.perf_counter()
        store = loci.store
        assert isinstance(store, SqliteStore)
        if store.search_index.lexical_index_min_chunks is not None:
            store.search_index.lexical_index(brain.id)  # built now rather than in the background
        for mode in ("text", "vector"):
            loci.searching.search(
                brain, SearchRequest(QUERIES[0], mode=mode)
            )  # build caches and indexes
        print(f"{name}: derived indexes loaded in {time.perf_counter() - start:.1f} s")
    if args.passages_only:
        store = fast.store
        assert isinstance(store, SqliteStore)
        documents = store.search_index._documents[brain.id].lexical
        postings = sum(len(s.rows) for s in documents.segments)
        passage_postings = sum(
            len(s.rows) for s in store.search_index.lexical_index(brain.id).segments
        )
        saved = index_path(store.search_index.folder, brain.id).stat().st_size
        index = store.search_index
        start = time.perf_counter()
        rebuilt = LexicalIndex(analyze, index_weights(), 0, *index.bm25)
        rebuilt.add(index._index_rows(brain.id, None))
        built = time.perf_counter() - start
        start = time.perf_counter()
        DocumentIndex(analyze, index_weights(), *index.bm25).add(
            document_rows(store.db, brain.id, None)
        )
        print(
            f"building the BM25 indexes from the chunks: passages {built:.1f} s,"
            f" documents {time.perf_counter() - start:.1f} s"
        )
        print(
            f"BM25 file {saved / 1e6:.1f} MB; postings: passages {passage_postings:,},"
            f" documents {postings:,} ({documents.size:,} documents)"
        )
    if "plain" in paths:
        store_p, store_f = paths["plain"].store, fast.store
        text_agree, vector_agree = [], []
        for i in range(min(args.queries, 40)):
            query = QUERIES[i % len(QUERIES)] + f" {i}"
            terms = query_terms(query)
            text_agree.append(
                overlap(
                    store_f.text_search(brain.id, terms, 100, SearchFilters()),
                    store_p.text_search(brain.id, terms, 100, SearchFilters()),
                )
            )
            vector = embedder.embed([query])[0]
            model = embedder.model_id
            vector_agree.append(
                overlap(
                    store_f.vector_search(brain.id, model, vector, 100, SearchFilters()),
                    store_p.vector_search(brain.id, model, vector, 100, SearchFilters()),
                )
            )
        print(
            f"top-100 overlap fast vs plain: text {statistics.mean(text_agree):.4f},"
            f" vector {statistics.mean(vector_agree):.4f} (recall@100 of the fast leg)"
        )
    for mode in ("text", "vector", "hybrid"):
        times: dict[str, list[float]] = {name: [] for name in paths}
        for i in range(args.queries):
            query = QUERIES[i % len(QUERIES)] + f" {i}"  # defeat any caching of the embedding
            for name, loci in paths.items():
                start = time.perf_counter()
                loci.searching.search(brain, SearchRequest(query, mode=mode))  # type: ignore[arg-type]
                times[name].append((time.perf_counter() - start) * 1000)
        for name, values in times.items():
            values.sort()
            print(
                f"{mode:7} {name:5} chunks={args.chunks} p50={statistics.median(values):.1f} ms "
                f"p95={percentile(values, 95):.1f} ms p99={percentile(values, 99):.1f} ms"
            )


if __name__ == "__main__":
    main()
