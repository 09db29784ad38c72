"""`loci eval`: retrieval quality and latency on a BEIR-layout folder, per search mode."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Annotated, Literal

import typer
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from loci.app import build_service
from loci.cli.context import JsonOption
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, out
from loci.config import load_settings
from loci.eval.beir import evaluate, index_corpus, load_beir
from loci.models import SearchMode

ModeChoice = Literal["hybrid", "text", "vector", "all"]


def register(app: typer.Typer) -> None:
    @app.command("eval")
    @exits_cleanly
    def eval_command(
        beir: Annotated[
            Path, typer.Option("--beir", help="BEIR folder: corpus.jsonl, queries.jsonl, qrels/.")
        ],
        mode: Annotated[
            ModeChoice, typer.Option("--mode", help="Search mode to measure, or all.")
        ] = "all",
        split: Annotated[str, typer.Option("--split", help="qrels file to judge against.")] = "dev",
        max_queries: Annotated[
            int | None, typer.Option("--max-queries", help="Measure only the first N queries.")
        ] = None,
        home: Annotated[
            Path | None,
            typer.Option("--home", help="Keep the scratch index here and reuse it next time."),
        ] = None,
        json_: JsonOption = False,
    ) -> None:
        """Index a BEIR corpus into a scratch brain; print nDCG@10, recall, MRR and latency."""
        data = load_beir(beir, split)
        scratch = None
        if home is None:
            scratch = tempfile.TemporaryDirectory(prefix="loci-eval-")
            home = Path(scratch.name)
        try:
            loci = build_service(load_settings(home=home))
            # A folder may be named anything; a brain name may not (see loci.names).
            corpus = re.sub(r"[^A-Za-z0-9._-]", "-", beir.resolve().name)
            brain = loci.brain(f"eval-{corpus}"[:64])
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
            modes: list[SearchMode] = ["text", "vector", "hybrid"] if mode == "all" else [mode]
            results = evaluate(loci, brain, data, mapping, modes, max_queries)
        finally:
            if scratch is not None:
                scratch.cleanup()
        if json_:
            emit_json({"dataset": str(beir), "split": split, "results": results})
            return
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
