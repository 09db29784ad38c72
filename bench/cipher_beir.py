"""A BEIR folder in a script the bundled embedder cannot read, for testing fusion's trust.

    python bench/cipher_beir.py SOURCE OUT [--queries 300] [--documents 1500] [--split dev]

Every Latin letter of the corpus and the queries is replaced by an Arabic one (a to ي, one for
one, case folded), so words stay words — BM25 ranks them exactly as before, but for no stemming
— while English-trained MiniLM sees letters it has no words for: its vector leg falls to what
it scores on a real Arabic set (nDCG@10 0.03 on SciFact this way, 0.07 there). The first
`--queries` judged queries are kept with every document they judge, and random other documents
(seeded) make up `--documents`. Measure with `loci eval --beir OUT --mode all`.
"""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path

ARABIC = "ابتثجحخدذرزسشصضطظعغفقكلمنهوي"
LATIN = "abcdefghijklmnopqrstuvwxyz"
TABLE = str.maketrans(LATIN + LATIN.upper(), ARABIC[:26] * 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("source", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--documents", type=int, default=1500)
    parser.add_argument("--split", default="dev")
    args = parser.parse_args()
    qrels: dict[str, dict[str, str]] = {}
    with (args.source / "qrels" / f"{args.split}.tsv").open() as handle:
        next(handle)  # header
        for line in handle:
            query, document, score = line.rstrip("\n").split("\t")
            qrels.setdefault(query, {})[document] = score
    kept = sorted(qrels)[: args.queries]
    judged = {d for q in kept for d in qrels[q]}
    corpus = [json.loads(line) for line in (args.source / "corpus.jsonl").open()]
    others = [e for e in corpus if e["_id"] not in judged]
    chosen = [e for e in corpus if e["_id"] in judged]
    chosen += random.Random(0).sample(others, max(0, args.documents - len(chosen)))
    (args.out / "qrels").mkdir(parents=True, exist_ok=True)
    with (args.out / "corpus.jsonl").open("w") as out:
        for e in chosen:
            entry = {"_id": e["_id"], "title": e["title"].translate(TABLE),
                     "text": e["text"].translate(TABLE)}  # fmt: skip
            out.write(json.dumps(entry, ensure_ascii=False) + "\n")
    texts = {}
    for line in (args.source / "queries.jsonl").open():
        query = json.loads(line)
        texts[query["_id"]] = query["text"]
    with (args.out / "queries.jsonl").open("w") as out:
        for q in kept:
            out.write(json.dumps({"_id": q, "text": texts[q].translate(TABLE)}, ensure_ascii=False))
            out.write("\n")
    with (args.out / "qrels" / "test.tsv").open("w") as out:
        out.write("query-id\tcorpus-id\tscore\n")
        for q in kept:
            out.writelines(f"{q}\t{d}\t{s}\n" for d, s in qrels[q].items())
    print(f"{len(chosen)} documents, {len(kept)} queries, {len(judged)} judged documents")


if __name__ == "__main__":
    main()
