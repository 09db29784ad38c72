"""`loci status` and `loci worker`: what the brain holds, and the background indexer."""

from __future__ import annotations

import logging
import signal
import threading
from typing import Annotated

import typer
from rich.markup import escape

from loci.cli.context import (
    BrainOption,
    JsonOption,
    existing_brain,
    service,
    settings_or_error,
)
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, human_size, out


def register(app: typer.Typer) -> None:
    app.command("status")(exits_cleanly(status))
    app.command("worker")(exits_cleanly(worker))


def status(brain: BrainOption = None, json_: JsonOption = False) -> None:
    """Documents by status, the job queue, the embedder identity and disk use."""
    loci = service()
    s = loci.status(existing_brain(brain))
    if json_:
        emit_json(s)
        return
    out.print(f"[bold]brain[/bold] {escape(s.brain.name)}")
    docs = s.stats.documents_by_status
    counts = [f"{docs.get(k, 0)} {k}" for k in ("ready", "processing", "failed")]
    if s.stats.vectors_pending:
        counts[1] += f" ({s.stats.vectors_pending} searchable by words, vectors pending)"
    out.print("  documents  " + ", ".join(counts))
    out.print(f"  chunks     {s.stats.chunks}")
    jobs = s.stats.jobs_by_status
    queue = ", ".join(f"{jobs.get(k, 0)} {k}" for k in ("queued", "running", "failed"))
    stages = s.stats.queue_by_stage
    if stages:  # the depth of each stage: words first, then vectors
        depth = "; ".join(f"{stage} {stages.get(stage, 0)}" for stage in ("text", "vectors"))
        queue += f" (by stage: {depth})"
    out.print(f"  queue      {queue}")
    dims = f" ({s.embedder_dims} dims)" if s.embedder_dims else ""
    model = s.embedder_model or "(none yet: set by the first indexed document)"
    out.print(f"  embedder   {escape(model)}{dims}")
    out.print(f"  language   {escape(s.language)} (how BM25 stems words)")
    held = ", ".join(f"{code} {count}" for code, count in s.languages.items())
    out.print(f"  languages  {escape(held or '(none detected yet)')} (documents in each)")
    out.print(
        f"  disk       database {human_size(s.database_bytes)},"
        f" originals {human_size(s.blob_bytes)}"
    )


def worker(
    once: Annotated[
        bool,
        typer.Option(
            "--once",
            help="Run the feeds and pages that are due, process what is queued, then exit.",
        ),
    ] = False,
) -> None:
    """Run a standalone ingestion worker (several may run at once); it also watches the
    registered folders (LOCI_SOURCES_WATCH), each by one worker or server at a time, and
    runs the followed feeds and pages as they fall due."""
    logging.getLogger("loci").setLevel(logging.INFO)
    loci = service()
    w = loci.worker()
    if once:  # for cron: the feeds and pages that are due, then what is queued
        ran = 0
        while w.run_scheduled():
            ran += 1
        count = 0
        while claimed := w.run_batch():
            count += claimed
        ran_sources = f", ran {ran} scheduled sources" if ran else ""
        err.print(f"processed {count} jobs{ran_sources}")
        return
    from loci.app import build_watcher

    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGINT, lambda *_: stop.set())
    watcher = build_watcher(settings_or_error(), loci)
    watching = " and watching folders" if watcher is not None else ""
    err.print(f"worker {w.name} waiting for jobs{watching} (Ctrl-C to stop)")
    if watcher is not None:
        watcher.start()
    try:
        w.run_forever(stop)
    finally:
        if watcher is not None:
            watcher.stop()
