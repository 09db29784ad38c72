"""Dense-only retrieval quality and speed of ONNX variants of the local embedding model.

For every model file given, embeds a BEIR corpus (`title + " " + text`, truncated at the model's
256 tokens) and its judged queries through `LocalEmbedder`, ranks the corpus by cosine (brute
force) and prints nDCG@10, corpus documents per CPU-second of this process, and the file's size.

    .venv/bin/python bench/embed_quality.py                       # the shipped model, SciFact dev
    .venv/bin/python bench/embed_quality.py variant-a.onnx variant-b.onnx --threads 1
    .venv/bin/python bench/embed_quality.py --dataset ../shared/datasets/dbpedia-subset

`--save-vectors DIR` keeps each variant's vectors (DIR/<name>.corpus.npy, .queries.npy).
`--reference DIR` reads PyTorch's vectors of the same dataset as `scripts/reference_vectors.py`
writes them (DIR/corpus.npy, DIR/queries.npy, every query in file order): it prints their own
nDCG@10 first, then each variant's mean and minimum cosine to them over the corpus.

The dataset defaults to `../shared/datasets/scifact` beside the repository (`--dataset` to change):
corpus.jsonl, queries.jsonl and qrels/<split>.tsv in the BEIR layout; the split is `dev` where
that file exists, else `test` (`--split` to choose).
"""

from __future__ import annotations

import argparse
import json
import math
import resource
from importlib import resources
from pathlib import Path

import numpy as np

from loci.embed.local import MODEL_FILE, LocalEmbedder

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DATASET = REPO.parent / "shared" / "datasets" / "scifact"


def shipped_model() -> Path:
    resource = resources.files("loci.embed") / "model" / MODEL_FILE
    return Path(str(resource))


def load_beir(
    root: Path, split: str
) -> tuple[list[str], list[str], list[str], list[str], dict[str, dict[str, int]], list[int]]:
    """Corpus ids and texts, judged query ids and texts, qrels, and each judged query's row in
    queries.jsonl."""
    doc_ids, docs = [], []
    with open(root / "corpus.jsonl", encoding="utf-8") as f:
        for line in f:
            row = json.loads(line)
            doc_ids.append(row["_id"])
            docs.append(row["title"] + " " + row["text"])
    qrels: dict[str, dict[str, int]] = {}
    with open(root / "qrels" / f"{split}.tsv", encoding="utf-8") as f:
        next(f)  # header
        for line in f:
            qid, did, score = line.rstrip("\n").split("\t")
            qrels.setdefault(qid, {})[did] = int(score)
    query_ids, queries, rows = [], [], []
    with open(root / "queries.jsonl", encoding="utf-8") as f:
        for row_number, line in enumerate(f):
            row = json.loads(line)
            if row["_id"] in qrels:
                query_ids.append(row["_id"])
                queries.append(row["text"])
                rows.append(row_number)
    return doc_ids, docs, query_ids, queries, qrels, rows


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def ndcg_at_10(
    scores: np.ndarray, doc_ids: list[str], query_ids: list[str], qrels: dict[str, dict[str, int]]
) -> float:
    top = np.argsort(-scores, axis=1)[:, :10]
    total = 0.0
    for row, qid in enumerate(query_ids):
        rel = qrels[qid]
        dcg = sum(rel.get(doc_ids[j], 0) / math.log2(rank + 2) for rank, j in enumerate(top[row]))
        ideal = sorted(rel.values(), reverse=True)[:10]
        idcg = sum(g / math.log2(rank + 2) for rank, g in enumerate(ideal))
        total += dcg / idcg if idcg > 0 else 0.0
    return total / len(query_ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("models", nargs="*", type=Path, help="ONNX files (default: shipped model)")
    parser.add_argument("--dataset", type=Path, default=DEFAULT_DATASET)
    parser.add_argument("--split", default=None, help="qrels file (default: dev, else test)")
    parser.add_argument("--tokenizer", type=Path, default=None, help="tokenizer.json to use")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--batch-size", type=int, default=1, help="LocalEmbedder's batch_size")
    parser.add_argument("--limit", type=int, default=None, help="embed only the first N documents")
    parser.add_argument("--save-vectors", type=Path, default=None)
    parser.add_argument("--reference", type=Path, default=None)
    args = parser.parse_args()

    split = args.split or ("dev" if (args.dataset / "qrels" / "dev.tsv").exists() else "test")
    doc_ids, docs, query_ids, queries, qrels, query_rows = load_beir(args.dataset, split)
    if args.limit:
        doc_ids, docs = doc_ids[: args.limit], docs[: args.limit]
    variants: list[Path | None] = list(args.models) or [None]

    print(f"{args.dataset.name} {split}: {len(docs)} passages, {len(queries)} judged queries")
    header = f"{'variant':<40} {'nDCG@10':>8} {'docs/CPU-s':>10} {'MB':>6}"
    reference = None
    if args.reference:
        header += f" {'cos mean':>9} {'cos min':>8}"
        reference = np.load(args.reference / "corpus.npy")[: len(docs)]
        reference_queries = np.load(args.reference / "queries.npy")[query_rows]
        ndcg = ndcg_at_10(reference_queries @ reference.T, doc_ids, query_ids, qrels)
        print(header)
        print(f"{'reference (' + args.reference.name + ')':<40} {ndcg:>8.4f}")
    else:
        print(header)
    for model in variants:
        name = model.stem if model else "shipped"
        embedder = LocalEmbedder(
            threads=args.threads,
            batch_size=args.batch_size,
            model_path=model,
            tokenizer_path=args.tokenizer,
        )
        embedder.embed(["warm up the session"])
        started = _cpu_seconds()
        doc_vectors = embedder.embed(docs)
        docs_per_cpu_second = len(docs) / (_cpu_seconds() - started)
        query_vectors = embedder.embed(queries)
        ndcg = ndcg_at_10(query_vectors @ doc_vectors.T, doc_ids, query_ids, qrels)
        size_mb = (model or shipped_model()).stat().st_size / 1e6
        line = f"{name:<40} {ndcg:>8.4f} {docs_per_cpu_second:>10.1f} {size_mb:>6.1f}"
        if reference is not None:
            cos = np.sum(reference * doc_vectors, axis=1)
            line += f" {cos.mean():>9.5f} {cos.min():>8.5f}"
        print(line, flush=True)
        if args.save_vectors:
            args.save_vectors.mkdir(parents=True, exist_ok=True)
            np.save(args.save_vectors / f"{name}.corpus.npy", doc_vectors)
            np.save(args.save_vectors / f"{name}.queries.npy", query_vectors)


if __name__ == "__main__":
    main()
