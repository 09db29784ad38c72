"""PDF parsing + chunking throughput (pages/s) and the peak memory of a ~50 MB PDF.

    .venv/bin/python bench/parse_pdf.py [--pages 500] [--big-mb 50]

Throughput: an N-page text PDF (~400 words a page, the shape of a report) is generated, then
parsed and chunked (max_chunks lifted so every page is chunked) with a whitespace counter and,
when the bundled model is present, the local embedder's real tokenizer. Each timed run with the
real tokenizer gets a new embedder, so its memo of word counts starts empty. The generated prose
draws on a small vocabulary, so that memo is soon all hits; bench/count_tokens.py measures
counting on real text.

Memory: a ~50 MB PDF (200 pages of text, each with one incompressible image, as scans and
figures make real files big) is written to a temporary file and parsed + chunked in a fresh
subprocess, whose peak RSS (getrusage ru_maxrss) is printed; interpreter and imports included,
and the real tokenizer with its memo of word counts when the bundled model is present.
Prints figures only; nothing is asserted. The parse + chunk + FTS line also gives the process's
CPU time (all threads): on a machine whose cores are shared with other work, wall time swings
with the neighbours' load while CPU time mostly does not.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # for tests.support, the PDF generator

from tests.support import pdf_files  # noqa: E402

from loci.ingest.chunking import chunk_document  # noqa: E402
from loci.ingest.parsers import ParseBudgets, parse  # noqa: E402
from loci.models import IndexedChunk, NewDocument  # noqa: E402
from loci.store.sqlite import SqliteStore  # noqa: E402

MAX_TOKENS = 206  # what the indexer gives MiniLM: 254 content tokens less 48 for context


def words(text: str) -> int:
    return len(text.split())


def real_counter() -> tuple[str, Callable[[str], int]] | None:
    try:
        from loci.embed.local import LocalEmbedder

        embedder = LocalEmbedder()
        embedder.count_tokens("probe")
    except Exception as exc:  # no bundled model in this checkout
        print(f"(real tokenizer unavailable: {exc})")
        return None
    return "MiniLM tokenizer", embedder.count_tokens


def throughput(pages: int) -> None:
    data = pdf_files.text_pdf(pages)
    print(f"{pages}-page text PDF, {len(data) / 1e6:.1f} MB")
    counters: list[tuple[str, Callable[[str], int]]] = [("whitespace counter", words)]
    real = real_counter()
    if real:
        counters.append(real)
    started = time.perf_counter()
    doc = parse(data, "bench.pdf", ParseBudgets())
    parse_s = time.perf_counter() - started
    print(f"  parse only: {parse_s:.2f} s = {pages / parse_s:.0f} pages/s")
    for name, count in counters:
        started = time.perf_counter()
        doc = parse(data, "bench.pdf", ParseBudgets())
        parsed = time.perf_counter()
        result = chunk_document(doc, count, max_tokens=MAX_TOKENS, max_chunks=10**9)
        done = time.perf_counter()
        total = done - started
        print(
            f"  parse + chunk, {name}: {total:.2f} s = {pages / total:.0f} pages/s "
            f"(chunking {done - parsed:.2f} s, {len(result.chunks)} chunks, "
            f"max {max(c.token_count for c in result.chunks)} tokens)"
        )
    fresh = real_counter()  # a new embedder: no word counts remembered from the runs above
    with_fts(pages, fresh[1] if fresh else words)


def with_fts(pages: int, count: Callable[[str], int]) -> None:
    """Parse + chunk + write the chunk rows and their FTS5 entries, as the indexer does (minus
    the embedding, which bench/embed_throughput.py measures)."""
    data = pdf_files.text_pdf(pages)
    with tempfile.TemporaryDirectory() as folder:
        store = SqliteStore(Path(folder) / "loci.db")
        brain = store.ensure_brain("bench")
        digest = hashlib.sha256(data).hexdigest()
        new = NewDocument("file", "bench.pdf", None, None, "application/pdf", len(data), digest)
        document = store.create_document(brain.id, new, "index")
        started, cpu_started = time.perf_counter(), time.process_time()
        doc = parse(data, "bench.pdf", ParseBudgets())
        result = chunk_document(doc, count, max_tokens=MAX_TOKENS, max_chunks=10**9)
        chunks = [IndexedChunk(c, c.content_hash) for c in result.chunks]
        store.replace_index(document.id, chunks, {}, "bench", doc.text, doc.title, None)
        total = time.perf_counter() - started
        cpu = time.process_time() - cpu_started
        store.close()
    print(
        f"  parse + chunk + chunk rows and FTS5: {total:.2f} s = {pages / total:.0f} pages/s "
        f"({len(chunks)} chunks; CPU {cpu:.2f} s = {pages / cpu:.0f} pages per CPU-second)"
    )


def peak_memory(megabytes: int) -> None:
    # Both steps run in fresh processes, before this one has grown: Linux carries a process's
    # peak RSS over fork and exec, so a child started from a big parent would report its parent.
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "big.pdf"
        for step in ("--generate", "--measure"):
            out = subprocess.run(
                [sys.executable, __file__, step, str(path), "--big-mb", str(megabytes)],
                capture_output=True,
                text=True,
                check=True,
            )
            if out.stdout.strip():
                print(out.stdout.strip())


def generate(path: Path, megabytes: int) -> None:
    pages = 200
    path.write_bytes(pdf_files.text_pdf(pages, image_bytes=megabytes * 1_000_000 // pages))


def measure(path: Path) -> None:
    baseline = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    real = real_counter()
    name, count = real or ("whitespace counter", words)
    data = path.read_bytes()
    started = time.perf_counter()
    doc = parse(data, path.name, ParseBudgets())
    result = chunk_document(doc, count, max_tokens=MAX_TOKENS)
    elapsed = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    print(
        f"{len(data) / 1e6:.1f} MB PDF ({len(set(b.location.page for b in doc.blocks))} pages): "
        f"parse + chunk ({name}) {elapsed:.2f} s, {len(result.chunks)} chunks, "
        f"peak RSS {peak / 1024:.0f} MB (interpreter + imports before reading: "
        f"{baseline / 1024:.0f} MB)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=500)
    parser.add_argument("--big-mb", type=int, default=50)
    parser.add_argument("--generate", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.generate:
        generate(args.generate, args.big_mb)
    elif args.measure:
        measure(args.measure)
    else:
        peak_memory(args.big_mb)
        throughput(args.pages)


if __name__ == "__main__":
    main()
