"""Per-language retrieval on real documentation vaults: hit@5 and MRR@10 of natural questions.

    python bench/vault_languages.py --vaults ../shared/datasets/nushell-book \\
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
from pathlib import Path

from loci.app import build_embedder, service_settings
from loci.config import Settings
from loci.graph.transfer import GraphTransfer
from loci.search.engine import SearchRequest
from loci.service.facade import Loci
from loci.store.blobs import BlobStore
from loci.store.sqlite import SqliteStore

MODES = ("text", "vector", "hybrid")


def run_language(folder: Path, questions: list[dict[str, object]], home: Path) -> dict[str, object]:
    settings = Settings(home=home)
    home.mkdir(parents=True, exist_ok=True)
    loci = Loci(
        SqliteStore(settings.database_path),
        BlobStore(settings.blob_dir),
        (lambda e=build_embedder(settings): e),
        service_settings(settings),
    )
    try:
        brain = loci.brain("vault")
        files = sorted(p for p in folder.rglob("*.md"))
        started = time.perf_counter()
        report = GraphTransfer(loci.graph).import_folder(brain, folder, actor="bench")
        loci.library.wait_for(
            brain, [d.id for d in loci.library.documents(brain, status="processing")]
        )
        indexed = time.perf_counter() - started
        created = report.counts.get("created", 0)
        # target file name -> the page's document id
        by_file = {Path(f.path).name: f.id for f in report.files}
        documents = {
            d.name.rsplit("/", 1)[-1].removesuffix(".md"): d.id
            for d in loci.store.list_documents(brain.id)
        }
        scores: dict[str, list[tuple[bool, float]]] = defaultdict(list)
        misses: dict[str, list[str]] = defaultdict(list)
        for q in questions:
            target = str(q["expect"]["document"])  # type: ignore[index]
            wanted = documents[by_file[target]]
            for mode in MODES:
                hits = loci.searching.search(
                    brain, SearchRequest(str(q["question"]), mode=mode, limit=10)
                )  # type: ignore[arg-type]
                ranking = list(dict.fromkeys(h.citation.document_id for h in hits))
                rank = ranking.index(wanted) + 1 if wanted in ranking else None
                scores[mode].append((rank is not None and rank <= 5, 1.0 / rank if rank else 0.0))
                if mode == "hybrid" and (rank is None or rank > 5):
                    misses[mode].append(f"{q['question']} -> {target} (rank {rank})")
        status = loci.status(brain)
        return {
            "files": len(files),
            "pages": created,
            "index_s": indexed,
            "db_mb": status.database_bytes / 1e6,
            "languages": getattr(status, "languages", {}),  # a build before languages: none
            "scores": {
                mode: (sum(h for h, _ in s), len(s), sum(r for _, r in s) / len(s))
                for mode, s in scores.items()
            },
            "misses": dict(misses),
        }
    finally:
        loci.store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vaults", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--languages", default="en,de,ja,zh")
    args = parser.parse_args()
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line]
    print(
        "| language | files → pages | detected | text hit@5, MRR@10 | vector | hybrid | import + index | database |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    with tempfile.TemporaryDirectory(prefix="loci-vaults-") as scratch:
        for language in args.languages.split(","):
            mine = [q for q in questions if q["language"] == language]
            result = run_language(args.vaults / language, mine, Path(scratch) / language)
            cells = [
                f"{hits}/{n}, {mrr:.2f}"
                for hits, n, mrr in (result["scores"][m] for m in MODES)  # type: ignore[index]
            ]
            print(
                f"| {language} | {result['files']} → {result['pages']} | {result['languages']} |"
                f" {' | '.join(cells)} | {result['index_s']:.0f} s | {result['db_mb']:.1f} MB |",
                flush=True,
            )
            for miss in result["misses"].get("hybrid", []):  # type: ignore[union-attr]
                print(f"    hybrid miss: {miss}", flush=True)


if __name__ == "__main__":
    main()
