"""Loci side by side with LanceDB: one corpus, the same vectors and queries, interleaved.

    python bench/peers.py [--chunks 100000] [--queries 200] [--datasets DIR] [--cache DIR]
                          [--keep DIR] [--ef 100] [--paths exact,ann] [--no-rss]

The corpus is real English: the passages of the BEIR corpora in `--datasets` (SciFact, MS MARCO,
DBPedia), then passages cut again from their sentences with other windows and offsets until there
are `--chunks`, so no two passages are the same text. Every passage and query is embedded once
with Loci's shipped model (all-MiniLM-L6-v2); the vectors are kept in `--cache` (a scratch
folder) and a later run, at this size or a smaller one, reads them instead of embedding again.

Both systems get the same texts and vectors: Loci through its store (as bench/search_latency.py
builds brains), LanceDB in a table with an IVF_HNSW_SQ vector index (cosine) and a full-text
index. Queries are the datasets' own questions, given to both as the same text and the same
vector (the query's embedding is not timed for either); their searches alternate, so both see
the same machine load. `--paths` says which Loci vector paths to time: `exact` (the int8 scan
with float32 rescoring), `ann` (the HNSW index of `loci.store.vector_ann`); each is a store of
its own over the same data directory.

Loci answers with passages (`by_document=False`), ten of them, each with its snippet, as
LanceDB returns ten rows. Prints per mode (hybrid, text, vector) p50/p95 ms per system and the
paired median ratio Loci/LanceDB, vector recall@10 of each vector leg against exact float32
search, the build time, disk size and the serving RSS (a fresh process per system that opens
the data and answers the queries). LanceDB is a benchmark-only dependency:
`pip install -e '.[bench]'`.
Figures go to docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

# LanceDB's Rust side warns on stderr about a default that will change, once per query.
os.environ.setdefault("LANCEDB_LOG", "error")

CORPORA = ("scifact", "msmarco-subset", "dbpedia-subset")
CHUNKS_PER_DOC = 50
MAX_WORDS = 120  # a passage MiniLM reads whole (it stops at 256 tokens)
GENERATOR = "peers-1"  # bump when the corpus changes: cached vectors are keyed by it
EMBED_BLOCK = 2_000  # passages embedded between two saves of the cache
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"(])")
LIMIT = 10
MODES = ("hybrid", "text", "vector")


# --- the corpus ------------------------------------------------------------------------------
def _records(datasets: Path, name: str) -> Iterator[dict[str, Any]]:
    with (datasets / name / "corpus.jsonl").open(encoding="utf-8") as stream:
        for line in stream:
            yield json.loads(line)


def passages(datasets: Path, count: int) -> list[str]:
    """`count` distinct passages of real text, always the same ones in the same order (so a
    smaller corpus is a prefix of a larger one and shares its cached vectors)."""
    found: list[str] = []
    seen: set[str] = set()
    sentences: list[str] = []

    def take(text: str) -> bool:
        text = " ".join(text.split())
        if text and text not in seen:
            seen.add(text)
            found.append(text)
        return len(found) >= count

    for name in CORPORA:
        for record in _records(datasets, name):
            text = record["text"]
            sentences += [s for s in SENTENCE_END.split(" ".join(text.split())) if s]
            title = record.get("title") or ""
            if take(f"{title}. {text}" if title else text):
                return found
    # Later rounds cut the sentence stream into windows of 2-5 sentences at shifting offsets:
    # real sentences in new company, no passage repeated.
    for round_ in range(1, 1000):
        width = 2 + round_ % 4
        start = round_ % width
        for at in range(start, len(sentences) - width, width):
            words = " ".join(sentences[at : at + width]).split()[:MAX_WORDS]
            if take(" ".join(words)):
                return found
    raise ValueError(f"the datasets give fewer than {count} passages")


def queries(datasets: Path, count: int) -> list[str]:
    """`count` questions from the datasets' query files, taken in turn from each."""
    per: list[list[str]] = []
    for name in CORPORA:
        with (datasets / name / "queries.jsonl").open(encoding="utf-8") as stream:
            per.append([json.loads(line)["text"] for line in stream])
    mixed: list[str] = []
    for i in range(max(len(p) for p in per)):
        mixed += [p[i] for p in per if i < len(p)]
    return mixed[:count]


def embedded(texts: Sequence[str], cache: Path, name: str) -> npt.NDArray[np.float32]:
    """The vectors of `texts` from the shipped model: read from `cache` as far as it has them
    (for the same texts), the rest embedded and added to it as they come."""
    from loci.embed.local import LocalEmbedder

    embedder = LocalEmbedder()
    cache.mkdir(parents=True, exist_ok=True)
    stem = cache / f"{name}-{GENERATOR}-{embedder.model_id.replace('/', '_')}"
    vectors_path, digests_path = stem.with_suffix(".npy"), stem.with_suffix(".sha256")
    digests = [hashlib.sha256(t.encode()).hexdigest()[:16] for t in texts]
    have = np.zeros((0, embedder.dimensions), np.float32)
    if vectors_path.exists() and digests_path.exists():
        known = digests_path.read_text().split()
        stored = np.load(vectors_path)
        same = 0
        while same < min(len(known), len(stored), len(texts)) and known[same] == digests[same]:
            same += 1
        have = stored[:same]
        if same >= len(texts):
            return np.ascontiguousarray(have[: len(texts)])
        known, stored = known[:same], stored[:same]
    else:
        known, stored = [], have
    start = time.perf_counter()
    done = len(have)
    for at in range(done, len(texts), EMBED_BLOCK):
        block = embedder.embed(list(texts[at : at + EMBED_BLOCK]))
        stored = np.concatenate([stored, block])
        known += digests[at : at + EMBED_BLOCK]
        np.save(vectors_path, stored)
        digests_path.write_text("\n".join(known))
        rate = (len(stored) - done) / (time.perf_counter() - start)
        print(f"embedded {len(stored):,}/{len(texts):,} {name} ({rate:.0f}/s)", flush=True)
    return np.ascontiguousarray(stored[: len(texts)])


# --- Loci ------------------------------------------------------------------------------------
class KnownQueries:
    """The shipped embedder, except that the benchmark's queries come back as the vectors
    LanceDB is given too (embedding them is timed for neither system)."""

    def __init__(self, inner: Any, known: dict[str, npt.NDArray[np.float32]]) -> None:
        self.inner, self.known = inner, known

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)

    def embed(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        if all(t in self.known for t in texts):
            return np.stack([self.known[t] for t in texts])
        return np.asarray(self.inner.embed(texts), np.float32)


def loci_service(home: Path, embedder: Any, ann: bool) -> Any:
    """A service over the SQLite data directory `home`: the vector leg on the HNSW graph
    (`ann`, from any size) or on the exact scan (the shipped int8 threshold)."""
    from loci.app import service_settings
    from loci.config import Settings
    from loci.service import Loci
    from loci.store.blobs import BlobStore
    from loci.store.sqlite import SqliteStore

    settings = Settings(home=home)
    home.mkdir(parents=True, exist_ok=True)
    store = SqliteStore(settings.database_path, vector_ann_min_chunks=1 if ann else None)
    return Loci(store, BlobStore(settings.blob_dir), lambda: embedder, service_settings(settings))


def build_loci(loci: Any, texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> None:
    """The passages as documents of CHUNKS_PER_DOC chunks, written through the store with
    their vectors (as bench/search_latency.py builds brains)."""
    from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument

    store = loci.store
    brain = loci.brain("peers")
    store.set_brain_embedder(brain.id, loci.embedder.model_id, loci.embedder.dimensions)
    for first in range(0, len(texts), CHUNKS_PER_DOC):
        digest = hashlib.sha256(f"peers-doc{first}".encode()).hexdigest()
        doc = store.create_document(
            brain.id,
            NewDocument("file", f"doc-{first}.txt", None, None, "text/plain", 1000, digest),
            "none",
        )
        chunks, new_vectors = [], {}
        for i in range(first, min(first + CHUNKS_PER_DOC, len(texts))):
            text = texts[i]
            h = f"p{i}"
            draft = ChunkDraft(i - first, text, (), Location(None, 1, 1, 0, len(text)), 100, h)
            chunks.append(IndexedChunk(draft, h))
            new_vectors[h] = vectors[i]
        store.replace_index(doc.id, chunks, new_vectors, loci.embedder.model_id, "", None, None)
    store.db.execute("DELETE FROM jobs")


def warm_loci(loci: Any, query: str, ann: bool) -> None:
    """Build (or load) every derived index now rather than on the first timed query."""
    from loci.search.engine import SearchRequest
    from loci.store.sqlite import search_index

    brain = loci.brain("peers")
    index = loci.store.search_index
    index.lexical_index(brain.id)
    if ann:
        search_index.ANN_SYNC_BUILD_MAX = 10**9  # in the foreground, to time it
        model = loci.embedder.model_id
        assert index.ann(brain.id, model, index.matrix(brain.id, model)) is not None
    for mode in MODES:
        loci.searching.search(brain, SearchRequest(query, mode=mode))  # type: ignore[arg-type]


def passage_numbers(loci: Any) -> dict[int, int]:
    """Chunk id -> passage number (the vector's row)."""
    rows = loci.store.db.conn.execute("SELECT id, embed_hash FROM chunks")
    return {int(cid): int(h[1:]) for cid, h in rows}


def loci_search(loci: Any, query: str, mode: str) -> None:
    from loci.search.engine import SearchRequest

    # Passages, as LanceDB returns rows (by document, each hit would carry its document's other
    # passages, each with a snippet).
    request = SearchRequest(query, mode=mode, limit=LIMIT, by_document=False)  # type: ignore[arg-type]
    loci.searching.search(loci.brain("peers"), request)


def loci_vector_leg(loci: Any, vector: npt.NDArray[np.float32], limit: int = LIMIT) -> list[int]:
    """The store's vector leg alone: what the graph replaces, without fusion or hydration."""
    from loci.models import SearchFilters

    brain = loci.brain("peers")
    found = loci.store.vector_search(
        brain.id, loci.embedder.model_id, vector, limit, SearchFilters()
    )
    return [i for i, _ in found]


# --- LanceDB ---------------------------------------------------------------------------------
def build_lance(folder: Path, texts: Sequence[str], vectors: npt.NDArray[np.float32]) -> Any:
    import lancedb
    import pyarrow as pa

    db = lancedb.connect(folder)
    flat = pa.array(vectors.reshape(-1), pa.float32())
    data = pa.table(
        {
            "id": pa.array(np.arange(len(texts)), pa.int64()),
            "text": pa.array(list(texts), pa.string()),
            "vector": pa.FixedSizeListArray.from_arrays(flat, vectors.shape[1]),
        }
    )
    table = db.create_table("passages", data=data, mode="overwrite")
    table.create_index(metric="cosine", vector_column_name="vector", index_type="IVF_HNSW_SQ")
    table.create_fts_index("text")
    return table


def open_lance(folder: Path) -> Any:
    import lancedb

    return lancedb.connect(folder).open_table("passages")


def lance_search(
    table: Any, query: str, vector: npt.NDArray[np.float32], mode: str, ef: int | None
) -> list[int]:
    if mode == "text":
        builder = table.search(query, query_type="fts")
    elif mode == "vector":
        builder = table.search(vector, query_type="vector")
    else:
        builder = table.search(query_type="hybrid").vector(vector).text(query)
    if ef is not None and mode != "text":
        builder = builder.ef(ef)
    return [int(i) for i in builder.limit(LIMIT).select(["id"]).to_arrow()["id"].to_pylist()]


# --- measuring -------------------------------------------------------------------------------
def folder_size(path: Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def percentile(values: Sequence[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(share / 100 * (len(ordered) - 1))))]


def recall(found: Sequence[int], truth: Sequence[int]) -> float:
    return len(set(found) & set(truth)) / len(truth)


def serve(args: argparse.Namespace) -> None:
    """One system alone in this process: open its data, answer every query in every mode, then
    print the process's resident memory (what serving this corpus costs)."""
    texts = queries(args.datasets, args.queries)
    vectors = embedded(texts, args.cache, "queries")
    if args.serve == "lancedb":
        table = open_lance(args.home / "lance")
        for mode in MODES:
            for text, vector in zip(texts, vectors, strict=True):
                lance_search(table, text, vector, mode, args.ef)
    else:
        from loci.embed.local import LocalEmbedder

        embedder = KnownQueries(LocalEmbedder(), dict(zip(texts, vectors, strict=True)))
        loci = loci_service(args.home / "loci", embedder, ann=args.serve == "loci-ann")
        for mode in MODES:
            for text in texts:
                loci_search(loci, text, mode)
    status = Path("/proc/self/status").read_text()
    rss = {k: int(v.split()[0]) for k, v in re.findall(r"^(VmRSS|VmHWM):\s*(.+)$", status, re.M)}
    print(json.dumps({"rss_mb": rss["VmRSS"] / 1024, "peak_mb": rss["VmHWM"] / 1024}))


def serving_rss(args: argparse.Namespace, home: Path, system: str) -> dict[str, float]:
    command = [
        sys.executable,
        __file__,
        "--serve",
        system,
        "--home",
        str(home),
        "--cache",
        str(args.cache),
        "--datasets",
        str(args.datasets),
        "--queries",
        str(args.queries),
    ]
    if args.ef is not None:
        command += ["--ef", str(args.ef)]
    done = subprocess.run(command, capture_output=True, text=True, check=True)
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run(args: argparse.Namespace) -> None:
    from loci.embed.local import LocalEmbedder

    home = args.keep or Path(tempfile.mkdtemp(prefix="loci-peers-"))
    texts = passages(args.datasets, args.chunks)
    question = queries(args.datasets, args.queries)
    vectors = embedded(texts, args.cache, "passages")
    query_vectors = embedded(question, args.cache, "queries")
    if args.embed_only:
        return
    embedder = KnownQueries(LocalEmbedder(), dict(zip(question, query_vectors, strict=True)))
    paths = [p for p in args.paths.split(",") if p]
    built: dict[str, float] = {}

    loci_home = home / "loci"
    fresh = not (loci_home / "loci.db").exists()
    start = time.perf_counter()
    first = loci_service(loci_home, embedder, ann=False)
    if fresh:
        build_loci(first, texts, vectors)
        built["loci store"] = time.perf_counter() - start
    systems: dict[str, Any] = {}
    for path in paths:
        start = time.perf_counter()
        loci = first if path == "exact" else loci_service(loci_home, embedder, ann=path == "ann")
        warm_loci(loci, question[0], ann=path == "ann")
        built[f"loci {path} indexes"] = time.perf_counter() - start
        systems[f"loci-{path}"] = loci
    lance_home = home / "lance"
    start = time.perf_counter()
    if (lance_home / "passages.lance").exists():
        table = open_lance(lance_home)
    else:
        table = build_lance(lance_home, texts, vectors)
        built["lancedb table+indexes"] = time.perf_counter() - start
    systems["lancedb"] = table
    lance_search(table, question[0], query_vectors[0], "hybrid", args.ef)  # warm

    # Vector recall@10 against exact float32 search over the same vectors.
    numbers = passage_numbers(first)
    truth = [list(np.argsort(-(vectors @ q))[:LIMIT]) for q in query_vectors]
    recalls: dict[str, list[float]] = {name: [] for name in systems}
    for q, want in zip(query_vectors, truth, strict=True):
        for name, system in systems.items():
            if name == "lancedb":
                got = lance_search(system, "", q, "vector", args.ef)
            else:
                got = [numbers[i] for i in loci_vector_leg(system, q)]
            recalls[name].append(recall(got, want))

    times: dict[tuple[str, str], list[float]] = {}
    for vector in query_vectors:  # the leg as hybrid search asks it: 100 candidates
        for name, system in systems.items():
            if name != "lancedb":
                start = time.perf_counter()
                loci_vector_leg(system, vector, 100)
                times.setdefault((name, "leg"), []).append((time.perf_counter() - start) * 1000)
    for mode in MODES:
        for text, vector in zip(question, query_vectors, strict=True):
            for name, system in systems.items():  # interleaved: the same load for each
                start = time.perf_counter()
                if name == "lancedb":
                    lance_search(system, text, vector, mode, args.ef)
                else:
                    loci_search(system, text, mode)
                times.setdefault((name, mode), []).append((time.perf_counter() - start) * 1000)

    print(f"chunks={len(texts)} queries={len(question)} lancedb ef={args.ef or 'default'}")
    for what, seconds in built.items():
        print(f"build {what:24} {seconds:8.1f} s")
    for mode in MODES:
        lance = times[("lancedb", mode)]
        for name in systems:
            mine = times[(name, mode)]
            line = (
                f"{mode:7} {name:12} p50={statistics.median(mine):6.1f} ms"
                f" p95={percentile(mine, 95):6.1f} ms"
            )
            if name != "lancedb":
                paired = statistics.median(a / b for a, b in zip(mine, lance, strict=True))
                line += f"  paired ratio to lancedb {paired:.2f}"
            print(line)
    for name in systems:
        if name != "lancedb":
            leg = times[(name, "leg")]
            print(
                f"vector leg alone (100 candidates) {name:12} p50={statistics.median(leg):.2f} ms"
                f" p95={percentile(leg, 95):.2f} ms"
            )
    for name, values in recalls.items():
        print(f"vector recall@10 {name:12} {statistics.mean(values):.3f}")
    print(f"disk loci    {folder_size(loci_home) / 1e6:8.1f} MB")
    print(f"disk lancedb {folder_size(lance_home) / 1e6:8.1f} MB")
    if not args.no_rss:
        for name in [*(f"loci-{p}" for p in paths), "lancedb"]:
            rss = serving_rss(args, home, name)
            print(f"serving RSS {name:12} {rss['rss_mb']:7.0f} MB (peak {rss['peak_mb']:.0f} MB)")
    if args.keep is None:
        shutil.rmtree(home, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--datasets", type=Path, default=Path("datasets"))
    parser.add_argument("--cache", type=Path, default=Path(tempfile.gettempdir()) / "loci-peers")
    parser.add_argument("--keep", type=Path, help="reuse/keep the data directories here")
    parser.add_argument("--ef", type=int, help="LanceDB's HNSW search breadth (default: its own)")
    parser.add_argument("--paths", default="exact,ann", help="Loci vector paths: exact, ann")
    parser.add_argument("--no-rss", action="store_true", help="skip the serving-RSS processes")
    parser.add_argument("--embed-only", action="store_true", help="fill the vector cache only")
    parser.add_argument("--serve", help=argparse.SUPPRESS)  # the serving-RSS child process
    parser.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args)
    else:
        run(args)


if __name__ == "__main__":
    main()
