"""Per-language retrieval on real documentation vaults: hit@5 and MRR@10 of natural questions.

    python bench/vault_languages.py --vaults bench/data/nushell-book \\
        --questions bench/vaults/nushell-questions.jsonl [--languages en,de,ja,zh]

Each language's folder (the Nushell book in English, German, Japanese and Chinese: see
SOURCE.md beside the vaults for its origin and licence) is imported into its own scratch brain
as `loci brain import` does — every file must become a page — and indexed with the configured
embedder (the bundled MiniLM unless LOCI_EMBEDDER says otherwise). Then each of the language's
questions (JSON Lines: language, question, expect.document — the target note's file name) is
searched in the text, vector and hybrid modes; a hit is the target note among the first five
documents, MRR@10 the reciprocal rank of it among the first ten. Also printed: the time to
import and index, and the database's size.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from loci.app import build_embedder, service_settings
from loci.config import Settings
from loci.graph.transfer import GraphTransfer
from loci.models import SearchMode
from loci.search.engine import SearchRequest
from loci.service.facade import Loci
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore

MODES: tuple[SearchMode, ...] = ("text", "vector", "hybrid")


HEADER = (
    "language", "files → pages", "detected", "text hit@5, MRR@10", "vector", "hybrid",
    "import + index", "database",
)  # fmt: skip


@dataclass
class LanguageResult:
    files: int
    pages: int
    index_s: float
    db_mb: float
    detected: dict[str, int]
    # mode -> (hits in the first five, questions, MRR@10)
    scores: dict[str, tuple[int, int, float]] = field(default_factory=dict)
    misses: list[str] = field(default_factory=list)  # hybrid's, for the reader


def run_language(folder: Path, questions: list[dict[str, Any]], home: Path) -> LanguageResult:
    settings = Settings(home=home)
    home.mkdir(parents=True, exist_ok=True)
    embedder = build_embedder(settings)
    loci = Loci(
        SqliteStore(settings.database_path),
        BlobStore(settings.blob_dir),
        lambda: embedder,
        service_settings(settings),
    )
    try:
        brain = loci.brain("vault")
        started = time.perf_counter()
        report = GraphTransfer(loci.graph).import_folder(brain, folder, actor="bench")
        waiting = [d.id for d in loci.library.documents(brain, status="processing")]
        loci.library.wait_for(brain, waiting)
        indexed = time.perf_counter() - started
        page_of = {Path(f.path).name: str(f.id) for f in report.files}  # file name -> page id
        document_of = {
            d.name.rsplit("/", 1)[-1].removesuffix(".md"): d.id
            for d in loci.store.list_documents(brain.id)
        }
        hits: dict[str, list[tuple[bool, float]]] = defaultdict(list)
        misses = []
        for q in questions:
            target = str(q["expect"]["document"])
            wanted = document_of[page_of[target]]
            for mode in MODES:
                request = SearchRequest(str(q["question"]), mode=mode, limit=10)
                found = loci.searching.search(brain, request)
                ranking = list(dict.fromkeys(h.citation.document_id for h in found))
                rank = ranking.index(wanted) + 1 if wanted in ranking else None
                hits[mode].append((rank is not None and rank <= 5, 1.0 / rank if rank else 0.0))
                if mode == "hybrid" and (rank is None or rank > 5):
                    misses.append(f"{q['question']} -> {target} (rank {rank})")
        status = loci.status(brain)
        return LanguageResult(
            files=len(list(folder.rglob("*.md"))),
            pages=report.counts.get("created", 0),
            index_s=indexed,
            db_mb=status.database_bytes / 1e6,
            # a build from before languages has none
            detected=getattr(status, "languages", {}),
            scores={
                mode: (sum(h for h, _ in s), len(s), sum(r for _, r in s) / len(s))
                for mode, s in hits.items()
            },
            misses=misses,
        )
    finally:
        loci.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vaults", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--languages", default="en,de,ja,zh")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line]
    print(" | ".join(HEADER).join(("| ", " |")))
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="loci-vaults-") as scratch:
        for language in args.languages.split(","):
            mine = [q for q in questions if q["language"] == language]
            result = run_language(args.vaults / language, mine, Path(scratch) / language)
            cells = [f"{h}/{n}, {mrr:.2f}" for h, n, mrr in (result.scores[m] for m in MODES)]
            print(
                f"| {language} | {result.files} → {result.pages} | {result.detected} |"
                f" {' | '.join(cells)} | {result.index_s:.0f} s | {result.db_mb:.1f} MB |",
                flush=True,
            )
            for miss in result.misses:
                print(f"    hybrid miss: {miss}", flush=True)


if __name__ == "__main__":
    main()
