"""`loci brain import | export | materialize | sync | doctor`: the brain graph as files, and
its health check (thin over `loci.graph.transfer` and `loci.graph.doctor`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from loci.cli.context import BrainOption, JsonOption, NewBrainOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.graph_common import ACTOR, DirArg, open_graph, settle
from loci.cli.output import FAILED, PARTIAL, emit_json, out, to_jsonable
from loci.cli.waiting import WaitOption
from loci.models import Brain

if TYPE_CHECKING:
    from loci.graph.doctor import Checkup
    from loci.graph.service import BrainGraph
    from loci.graph.transfer import GraphTransfer
    from loci.graph.transfer_results import TransferReport


def _transfer(graph: BrainGraph) -> GraphTransfer:
    from loci.graph.transfer import GraphTransfer  # on use: the other commands start without it

    return GraphTransfer(graph)


def _transferred(report: TransferReport, json_: bool) -> None:
    """Each file that changed or failed, then the counts; exit 4 when some files failed."""
    if json_:
        emit_json(report)
    else:
        for f in report.files:
            if f.action in ("unchanged", "written"):
                continue
            colour = "red" if f.action in ("refused", "conflict") else "green"
            note = " (converted)" if f.converted else ""
            out.print(f"[{colour}]{f.action}[/{colour}] {escape(f.path)}{note}")
            for line in (*f.problems, *([f.message] if f.message else [])):
                out.print(f"   [dim]{escape(line)}[/dim]")
        counts = " · ".join(f"{n} {action}" for action, n in sorted(report.counts.items()))
        out.print(f"{report.operation} ({escape(report.brain)}): {counts or 'no files'}")
    if report.failed:
        raise typer.Exit(PARTIAL)


def _doctor_report(checkup: Checkup, json_: bool) -> None:
    if json_:
        emit_json({**to_jsonable(checkup), "ok": checkup.ok})
    else:
        for f in checkup.findings:
            colour = "red" if f.severity == "error" else "yellow"
            out.print(
                f"[{colour}]{f.severity}[/{colour}] {f.kind:<18} [bold]{escape(f.document)}"
                f"[/bold]  {escape(f.message)}"
            )
        trip = checkup.roundtrip
        if trip is not None:
            timing = ", ".join(f"{name} {ms:.0f} ms" for name, ms in trip.steps)
            mark = "[green]ok[/green]" if trip.ok else "[red]failed[/red]"
            out.print(f"round trip {mark}: {escape(trip.message)} [dim]({timing})[/dim]")
        out.print(
            f"{escape(checkup.checked)}: {checkup.documents} documents, "
            f"{checkup.errors} errors, {checkup.warnings} warnings"
        )
    if not checkup.ok:
        raise typer.Exit(FAILED)


def register_files(app: typer.Typer) -> None:
    app.command("import")(exits_cleanly(import_))
    app.command("export")(exits_cleanly(export))
    app.command("materialize")(exits_cleanly(materialize))
    app.command("sync")(exits_cleanly(sync))
    app.command("doctor")(exits_cleanly(doctor))


def import_(
    folder: DirArg,
    wait: WaitOption = None,
    brain: NewBrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Read a folder of Markdown into the brain (created if new).

    Brain documents are kept byte for byte; plain notes (an Obsidian vault) become draft
    pages with their wikilinks as page links."""
    graph, target = open_graph(brain, adding=True)
    report = _transfer(graph).import_folder(target, folder, actor=ACTOR)
    settle(target, wait)
    _transferred(report, json_)


def export(folder: DirArg, brain: BrainOption = None, json_: JsonOption = False) -> None:
    """Write every document to FOLDER/folder/id.md exactly as stored."""
    graph, target = open_graph(brain)
    _transferred(_transfer(graph).export(target, folder), json_)


def materialize(
    folder: DirArg,
    force: Annotated[
        bool, typer.Option("--force", help="Discard edits not synced back yet.")
    ] = False,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Write the brain to a working directory (with a hidden manifest) to edit as files."""
    graph, target = open_graph(brain)
    _transferred(_transfer(graph).materialize(target, folder, force=force), json_)


def sync(
    folder: DirArg,
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Bring a materialized directory's edits, new files and deletions back.

    A document that changed in the brain since is a conflict, and nothing is overwritten."""
    graph, target = open_graph(brain)
    report = _transfer(graph).sync(target, folder, actor=ACTOR)
    settle(target, wait)
    _transferred(report, json_)


def doctor(
    folder: Annotated[
        Path | None,
        typer.Option("--dir", help="Check these files (e.g. a materialized brain) instead."),
    ] = None,
    no_roundtrip: Annotated[
        bool, typer.Option("--no-roundtrip", help="Skip the scratch-brain index check.")
    ] = False,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Check the graph's health, then round-trip a page through a scratch brain.

    Checks: duplicate ids, parse errors, invalid documents, broken links, relations and
    citations, alias collisions, orphans, weak provenance, nonstandard source refs; then a
    page is written, indexed and found in a scratch brain."""
    graph, target = open_graph(brain)
    loci = service()

    def index_now(scratch: Brain) -> None:
        loci.library.wait_for(
            scratch, [d.id for d in loci.library.documents(scratch, status="processing")]
        )

    from loci.graph.doctor import Doctor

    checker = Doctor(graph, index_now)
    checkup = (
        checker.check_directory(folder, roundtrip=not no_roundtrip)
        if folder is not None
        else checker.check_brain(target, roundtrip=not no_roundtrip)
    )
    _doctor_report(checkup, json_)
