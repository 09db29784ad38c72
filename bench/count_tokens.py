"""Token counting for the chunker on real text: memoised word counts against plain tokenization.

    .venv/bin/python bench/count_tokens.py [--docs 5183] [--dataset DIR]

Texts are SciFact abstracts (`../shared/datasets/scifact` beside the repository, or --dataset:
any folder with a BEIR corpus.jsonl), a vocabulary far richer than bench/parse_pdf.py's generated
prose. Two measurements, each against the shipped tokenizer run plainly (`encode` per text, which
is what count_tokens did before it memoised word counts):

1. count every abstract, with a new embedder (memo empty: "cold"), then again ("warm");
   the counts must be identical to the plain ones.
2. chunk all the abstracts as one markdown document (a heading per title) at the indexer's limit
   with each counter; the chunks must be identical.

Prints figures and the number of disagreements (which must be zero).
"""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from tokenizers import Tokenizer

from loci.embed.local import LocalEmbedder
from loci.ingest.chunking import chunk_document
from loci.ingest.parsers import ParseBudgets, parse

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "scifact"
MAX_TOKENS = 206  # what the indexer gives MiniLM: 254 content tokens less 48 for context


def load(dataset: Path, limit: int) -> list[tuple[str, str]]:
    rows: list[tuple[str, str]] = []
    with open(dataset / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            rows.append((row["title"], row["text"]))
            if len(rows) >= limit:
                break
    return rows


def plain_counter() -> Callable[[str], int]:
    raw = (resources.files("loci.embed") / "model" / "tokenizer.json").read_text(encoding="utf-8")
    tokenizer = Tokenizer.from_str(raw)
    tokenizer.no_truncation()
    tokenizer.no_padding()
    return lambda text: len(tokenizer.encode(text, add_special_tokens=False).ids)


def fresh_counter() -> Callable[[str], int]:
    embedder = LocalEmbedder()
    embedder.count_tokens("probe")  # loads the tokenizer outside the timed part
    return embedder.count_tokens


def timed(count: Callable[[str], int], texts: list[str]) -> tuple[list[int], float]:
    started = time.perf_counter()
    counts = [count(text) for text in texts]
    return counts, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--docs", type=int, default=5183)
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    args = parser.parse_args()
    rows = load(args.dataset, args.docs)
    texts = [f"{title}\n\n{text}" for title, text in rows]
    megabytes = sum(len(t) for t in texts) / 1e6
    print(f"{len(texts)} abstracts, {megabytes:.1f} M characters")

    plain = plain_counter()
    expected, plain_s = timed(plain, texts)
    memoised = fresh_counter()
    cold, cold_s = timed(memoised, texts)
    warm, warm_s = timed(memoised, texts)
    wrong = sum(a != e for a, e in zip(cold, expected, strict=True))
    wrong += sum(a != e for a, e in zip(warm, expected, strict=True))
    print(f"  count each abstract, plain encode: {plain_s:.2f} s")
    print(f"  count each abstract, word memo cold: {cold_s:.2f} s, warm: {warm_s:.2f} s")
    print(f"  counts that differ from plain: {wrong}")

    markdown = "\n\n".join(f"## {title}\n\n{text}" for title, text in rows)
    doc = parse(markdown.encode(), "abstracts.md", ParseBudgets())
    results = []
    for name, count in (("plain encode", plain), ("word memo cold", fresh_counter())):
        started = time.perf_counter()
        result = chunk_document(doc, count, max_tokens=MAX_TOKENS, max_chunks=10**9)
        elapsed = time.perf_counter() - started
        results.append(result)
        print(f"  chunk them as one document, {name}: {elapsed:.2f} s, {len(result.chunks)} chunks")
    print(f"  chunkings identical: {results[0] == results[1]}")


if __name__ == "__main__":
    main()
