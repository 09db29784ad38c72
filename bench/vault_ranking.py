"""Loci against a plain baseline on a real Markdown vault: hit@5 and MRR@10 by document.

    python bench/vault_ranking.py [--vault bench/data/foam-vault] [--keep DIR] [--json]

The vault's notes are added to a scratch brain as `loci add` adds a folder (each file by its
path), indexed by the worker, and each question of `questions.jsonl` is searched as a person
searches: `loci search`'s hybrid search, ten hits. A question counts as found at the rank of the
first hit from one of its expected notes; hit@5 is the share found in the first five hits,
MRR@10 the mean of 1/rank (0 past ten).

The baseline is issue 17's: BM25 over each whole note with its file name prepended (k1 1.2,
b 0.75, lowercase word tokens), MiniLM (the same bundled model) over the file name and the
note's first 256 tokens, the two rankings fused by reciprocal rank (k = 60). It ranks
documents, so its ten hits are ten different notes.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import tempfile
from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from loci.app import build_service
from loci.config import load_settings
from loci.search.engine import SearchRequest
from loci.service import Loci

HERE = Path(__file__).resolve().parent
RRF_K = 60.0


def load_questions(vault: Path) -> list[tuple[str, set[str]]]:
    rows = [json.loads(line) for line in (vault / "questions.jsonl").open() if line.strip()]
    return [(row["question"], set(row["expect"])) for row in rows]


def notes_of(vault: Path) -> dict[str, Path]:
    """The vault's Markdown files by path: those under its `notes/`, or the folder's own."""
    folder = vault / "notes" if (vault / "notes").is_dir() else vault
    return {p.relative_to(folder).as_posix(): p for p in sorted(folder.rglob("*.md"))}


def vault_parser(json_help: str) -> argparse.ArgumentParser:
    """The options every vault benchmark takes: the vault, a data directory to keep, --json."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--vault", type=Path, default=HERE / "data" / "foam-vault")
    parser.add_argument("--keep", type=Path, help="reuse/keep the data directory here")
    parser.add_argument("--json", action="store_true", help=json_help)
    return parser


@contextmanager
def vault_service(keep: Path | None) -> Iterator[Loci]:
    """Loci over `keep`, or over a scratch data directory removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="loci-vault-") as scratch:
        loci = build_service(load_settings(home=keep or Path(scratch)))
        try:
            yield loci
        finally:
            loci.store.close()


def add_vault(loci: Loci, notes: dict[str, Path]) -> dict[int, str]:
    """The notes added to the brain "vault" as `loci add` adds a folder's files, and indexed;
    document id -> the note's path in the vault."""
    brain = loci.brain("vault")
    path_of = {loci.library.add_file(brain, path).document.id: rel for rel, path in notes.items()}
    loci.library.wait_for(brain, list(path_of))
    return path_of


def scores(ranked: Sequence[str], expected: set[str]) -> tuple[bool, float]:
    """(found in the first five, reciprocal rank within ten) of the first expected note."""
    for rank, name in enumerate(ranked[:10], start=1):
        if name in expected:
            return rank <= 5, 1.0 / rank
    return False, 0.0


# Loci -------------------------------------------------------------------------------------
def loci_rankings(loci: Loci, notes: dict[str, Path], questions: Sequence[str]) -> list[list[str]]:
    brain = loci.brain("vault")
    path_of = add_vault(loci, notes)
    out = []
    for question in questions:
        hits = loci.searching.search(brain, SearchRequest(question, limit=10))
        out.append([path_of.get(h.citation.document_id, "?") for h in hits])
    return out


# the baseline -----------------------------------------------------------------------------
def tokens(text: str) -> list[str]:
    return re.findall(r"\w+", text.lower())


def bm25_ranking(docs: dict[str, str], query: str, k1: float = 1.2, b: float = 0.75) -> list[str]:
    bags = {name: Counter(tokens(text)) for name, text in docs.items()}
    lengths = {name: sum(bag.values()) for name, bag in bags.items()}
    mean = sum(lengths.values()) / len(lengths)
    n = len(bags)
    scored = {}
    for name, bag in bags.items():
        total = 0.0
        for term in set(tokens(query)):
            df = sum(term in other for other in bags.values())
            if not df or term not in bag:
                continue
            idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
            tf = bag[term]
            total += idf * tf * (k1 + 1) / (tf + k1 * (1 - b + b * lengths[name] / mean))
        scored[name] = total
    return sorted(scored, key=lambda name: -scored[name])


def baseline_rankings(
    loci: Loci, notes: dict[str, Path], questions: Sequence[str]
) -> list[list[str]]:
    embedder = loci.embedder
    docs = {rel: f"{path.stem}\n\n{path.read_text()}" for rel, path in notes.items()}
    names = list(docs)
    # The model reads at most 256 tokens: the rest of each note is cut, as the baseline has it.
    matrix = np.asarray(embedder.embed([docs[name] for name in names]))
    out = []
    for question in questions:
        lexical = bm25_ranking(docs, question)
        cosine = matrix @ np.asarray(embedder.embed([question])[0])
        dense = [names[i] for i in np.argsort(-cosine)]
        fused: dict[str, float] = {}
        for ranking in (lexical, dense):
            for rank, name in enumerate(ranking, start=1):
                fused[name] = fused.get(name, 0.0) + 1.0 / (RRF_K + rank)
        out.append(sorted(fused, key=lambda name: -fused[name])[:10])
    return out


def main() -> None:
    args = vault_parser("per-question ranks as JSON").parse_args()
    with vault_service(args.keep) as loci:
        compare(loci, args.vault, args.json)


def compare(loci: Loci, vault: Path, as_json: bool) -> None:
    """Loci and the baseline on the vault's questions, side by side."""
    questions = load_questions(vault)
    notes = notes_of(vault)
    asked = [q for q, _ in questions]
    systems = {
        "loci": loci_rankings(loci, notes, asked),
        "baseline": baseline_rankings(loci, notes, asked),
    }
    report = {}
    for system, rankings in systems.items():
        found = [scores(r, expected) for r, (_, expected) in zip(rankings, questions, strict=True)]
        report[system] = {
            "hit@5": sum(hit for hit, _ in found),
            "mrr@10": round(sum(rr for _, rr in found) / len(found), 3),
            "questions": len(found),
            "ranks": [round(1 / rr) if rr else None for _, rr in found],
        }
        print(
            f"{system:9} hit@5 {report[system]['hit@5']}/{len(found)}"
            f"  MRR@10 {report[system]['mrr@10']:.3f}"
        )
    if as_json:
        for system, rankings in systems.items():
            report[system]["top"] = [r[:5] for r in rankings]
        print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
