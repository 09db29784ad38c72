"""First vector search in a new process, with and without the saved vector matrix.

    python bench/matrix_load.py --chunks 100000 [--rounds 5] [--keep DIR]

Builds a brain of N chunks with random unit 384-dimensional vectors directly through the store
(short texts: only the vector leg is timed), then starts a fresh Python process per round that
opens the store and runs one vector search, timed from opening the store to the answer:

- "saved": the matrix file under `index/` is there, so the process maps it (vector_files.py);
- "sqlite": the process is pointed at an empty index folder, so it reads every vector out of
  SQLite as before the file existed (and then writes the file, timed separately).

Both include building the int8 copy (from 50,000 vectors). Rounds alternate, so both see the
same machine load; the files are in the page cache for both (warm). Prints the median per mode.
Figures go to docs/benchmarks-journal.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from loci.models import ChunkDraft, IndexedChunk, Location, NewDocument, SearchFilters
from loci.store.sqlite import SqliteStore
from loci.store.vector_files import MatrixIdentity
from loci.store.vector_matrix import VectorMatrix

MODEL = "bench-384"
DIMS = 384
CHUNKS_PER_DOC = 100


def build(path: Path, n_chunks: int) -> None:
    store = SqliteStore(path)
    brain = store.ensure_brain("bench")
    store.set_brain_embedder(brain.id, MODEL, DIMS)
    rng = np.random.default_rng(11)
    have = int(store.db.scalar("SELECT count(*) FROM chunks WHERE brain_id = ?", (brain.id,)))
    for d in range(have // CHUNKS_PER_DOC, n_chunks // CHUNKS_PER_DOC):
        digest = hashlib.sha256(f"doc{d}".encode()).hexdigest()
        doc = store.create_document(
            brain.id,
            NewDocument("file", f"doc-{d}.txt", None, None, "text/plain", 1000, digest),
            "none",
        )
        vectors = rng.standard_normal((CHUNKS_PER_DOC, DIMS)).astype(np.float32)
        vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
        chunks, new_vectors = [], {}
        for i in range(CHUNKS_PER_DOC):
            text = f"chunk {i} of document {d}"
            h = hashlib.sha256(f"{d}-{i}".encode()).hexdigest()
            chunks.append(
                IndexedChunk(ChunkDraft(i, text, (), Location(None, 1, 1, 0, len(text)), 6, h), h)
            )
            new_vectors[h] = vectors[i]
        store.replace_index(doc.id, chunks, new_vectors, MODEL, "", None, None)
    store.db.execute("DELETE FROM jobs")


def measure(path: Path, index_dir: Path | None) -> dict[str, float]:
    """One process's first search: seconds to open the store and answer, and to save the file."""
    start = time.perf_counter()
    store = SqliteStore(path)
    if index_dir is not None:
        store.search_index.folder = index_dir
    saving = 0.0
    save = store.search_index._save_matrix

    def timed_save(identity: MatrixIdentity, matrix: VectorMatrix) -> None:
        nonlocal saving
        began = time.perf_counter()
        save(identity, matrix)
        saving += time.perf_counter() - began

    store.search_index._save_matrix = timed_save  # type: ignore[method-assign]
    brain = store.get_brain("bench")
    query = np.random.default_rng(3).standard_normal(DIMS).astype(np.float32)
    query /= np.linalg.norm(query)
    hits = store.vector_search(brain.id, MODEL, query, 10, SearchFilters())
    total = time.perf_counter() - start
    assert len(hits) == 10
    return {"first_search": total, "save": saving}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--keep", type=Path, help="reuse/keep the synthetic data directory here")
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)  # a round's process
    parser.add_argument("--index-dir", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.index_dir)))
        return
    home = args.keep or Path(tempfile.mkdtemp(prefix="loci-bench-"))
    home.mkdir(parents=True, exist_ok=True)
    path = home / "loci.db"
    start = time.perf_counter()
    build(path, args.chunks)
    print(f"{args.chunks} chunks ready in {time.perf_counter() - start:.0f} s")
    # The first process writes the file the "saved" rounds map.
    first = measure(path, None)
    print(f"first process ever: {first['first_search']:.2f} s (saving {first['save']:.2f} s)")
    results: dict[str, list[dict[str, float]]] = {"saved": [], "sqlite": []}
    for _ in range(args.rounds):
        for mode in results:
            with tempfile.TemporaryDirectory(prefix="loci-bench-none-") as empty:
                command = [sys.executable, __file__, "--measure", str(path)]
                if mode == "sqlite":
                    command += ["--index-dir", empty]
                out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            results[mode].append(json.loads(out.strip().splitlines()[-1]))
    for mode, rounds in results.items():
        first_search = statistics.median(r["first_search"] for r in rounds)
        save = statistics.median(r["save"] for r in rounds)
        print(
            f"{mode:6} chunks={args.chunks} first search {first_search * 1000:.0f} ms"
            f" (of which writing the file {save * 1000:.0f} ms), median of {len(rounds)}"
        )


if __name__ == "__main__":
    main()
