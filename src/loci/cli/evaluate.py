"""`loci eval`: retrieval quality and latency — on a BEIR-layout folder, per search mode, or on
your own brain with your own questions (see `loci.cli.eval_brain`)."""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from loci.cli.context import BrainOption, JsonOption, settings_or_error
from loci.cli.errors import exits_cleanly
from loci.cli.eval_brain import print_feedback_questions, run_questions
from loci.cli.output import emit_json, err, out
from loci.errors import InvalidInput
from loci.models import SearchMode

ModeChoice = Literal["hybrid", "text", "vector", "all"]


def register(app: typer.Typer) -> None:
    app.command("eval")(exits_cleanly(eval_command))


def eval_command(
    beir: Annotated[
        Path | None,
        typer.Option("--beir", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/."),
    ] = None,
    questions: Annotated[
        Path | None,
        typer.Option(
            "--questions",
            help='Your own questions (JSON Lines: {"question": …, "expect": {"document": '
            '…, "text": …}}), run against an existing brain.',
        ),
    ] = None,
    from_feedback: Annotated[
        bool,
        typer.Option(
            "--from-feedback",
            help="Print a questions file (JSON Lines) of the brain's thumbs-down answers.",
        ),
    ] = False,
    brain_name: BrainOption = None,
    top_k: Annotated[
        int | None,
        typer.Option(
            "--top-k",
            "-k",
            min=1,
            max=100,
            help="Results searched per question (default 10) or BEIR query (default 100).",
        ),
    ] = None,
    mode: Annotated[
        ModeChoice, typer.Option("--mode", help="Search mode to measure, or all.")
    ] = "all",
    split: Annotated[
        str | None,
        typer.Option("--split", help="qrels file to judge against (default: test, else dev)."),
    ] = None,
    max_queries: Annotated[
        int | None, typer.Option("--max-queries", help="Measure only the first N queries.")
    ] = None,
    home: Annotated[
        Path | None,
        typer.Option(
            "--work-dir",
            "--home",
            help="Keep the BEIR index here and reuse it next time (default: a scratch folder"
            " in the data directory, removed afterwards).",
        ),
    ] = None,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="With --beir: index and search with this local embedding model (`loci"
            " models list`); default: the configured one.",
        ),
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Measure retrieval: your own questions against a brain (--questions), or a BEIR
    corpus indexed into a scratch brain (--beir: nDCG@10, recall, MRR and latency).

    With --questions, each question passes when an expected document is among the top-k
    hits and the hits contain the expected phrase; the pass rate comes with a Wilson 95 %
    band. Failing questions do not change the exit code; a bad line does (it is named)."""
    chosen = [o for o, on in (("--beir", beir), ("--questions", questions),
                              ("--from-feedback", from_feedback)) if on]  # fmt: skip
    if len(chosen) != 1:
        raise InvalidInput(
            "give one of --beir FOLDER, --questions FILE or --from-feedback"
            + (f" (not {' and '.join(chosen)})" if chosen else "")
        )
    if from_feedback:
        print_feedback_questions(brain_name)
        return
    if questions is not None:
        run_questions(questions, brain_name, top_k or 10, json_)
        return
    assert beir is not None
    from loci.app import build_service
    from loci.config import load_settings
    from loci.eval.beir import default_split, evaluate, index_corpus, load_beir
    from loci.eval.metrics import NDCG_GAIN

    split = split or default_split(beir)
    data = load_beir(beir, split)
    # A folder may be named anything; a brain name may not (see loci.names).
    corpus = re.sub(r"[^A-Za-z0-9._-]", "-", beir.resolve().name)
    scratch = None
    if home is None:
        # Beside the data it measures, not in an unrelated temp folder; removed afterwards.
        scratch = settings_or_error().home / "eval" / f"{corpus}-{os.getpid()}"
        home = scratch
    started = time.perf_counter()
    try:
        loci = build_service(load_settings(home=home))
        brain = loci.brain(f"eval-{corpus}"[:64])
        if model is not None:
            brain = loci.use_model(brain, model)
        with Progress(
            TextColumn("indexing corpus"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        ) as progress:
            task = progress.add_task("index", total=len(data.corpus))
            mapping = index_corpus(
                loci,
                brain,
                data.corpus,
                lambda done, total: progress.update(task, completed=done, total=total),
            )
        indexing_s = round(time.perf_counter() - started, 1)
        stats = loci.brain_stats(brain)
        modes: list[SearchMode] = ["text", "vector", "hybrid"] if mode == "all" else [mode]
        results = evaluate(loci, brain, data, mapping, modes, max_queries, top_k or 100)
        loci.store.close()
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    if json_:
        emit_json(
            {
                "dataset": str(beir),
                "split": split,
                "ndcg_gain": NDCG_GAIN,
                "documents": sum(stats.documents_by_status.values()),
                "chunks": stats.chunks,
                "indexing_s": indexing_s,
                "results": results,
            }
        )
        return
    err.print(
        f"[dim]{sum(stats.documents_by_status.values())} documents, {stats.chunks} chunks,"
        f" indexed in {indexing_s} s;"
        f" nDCG with {NDCG_GAIN} gain (as BEIR and trec_eval)[/dim]"
    )
    table = Table(title=f"{beir.name} · {split} · {results[0].queries} queries", box=None)
    for column in ("mode", "nDCG@10", "Recall@10", "Recall@100", "MRR@10", "p50 ms", "p95 ms"):
        table.add_column(column, justify="left" if column == "mode" else "right")
    for r in results:
        table.add_row(
            r.mode,
            f"{r.ndcg_10:.4f}",
            f"{r.recall_10:.4f}",
            f"{r.recall_100:.4f}",
            f"{r.mrr_10:.4f}",
            f"{r.p50_ms:.1f}",
            f"{r.p95_ms:.1f}",
        )
    out.print(table)
