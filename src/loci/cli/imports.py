"""`loci import KIND PATH`: bring in an export of another tool (`loci.service.importing`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from loci.cli.context import JsonOption, NewBrainOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import NOT_FOUND, PARTIAL, emit_json, err, out
from loci.cli.waiting import WaitOption, index_now
from loci.imports.readers import KINDS

if TYPE_CHECKING:
    from loci.service.importing import ImportReport

_KINDS_HELP = "; ".join(f"{k.name}: {k.what}" for k in KINDS)
_VERBS = {
    "add": "added",
    "update": "updated",
    "unchanged": "unchanged",
    "fail": "failed",
    "skip": "skipped",
}


def register(app: typer.Typer) -> None:
    app.command("import")(exits_cleanly(import_))


def _show(report: ImportReport) -> None:
    would = "would be " if report.dry_run else ""
    for outcome in report.outcomes:
        if outcome.action in ("fail", "skip"):
            mark = "[red]✗[/red]" if outcome.action == "fail" else "[dim]-[/dim]"
            out.print(f"{mark} {escape(outcome.name)}: {escape(outcome.reason or '')}")
    counts = ", ".join(
        f"{n} {would}{_VERBS[a]}" for a, n in report.counts.items() if n or a == "add"
    )
    out.print(f"{report.kind}: {counts}")


def import_(
    kind: Annotated[str, typer.Argument(help=f"What the export is. {_KINDS_HELP}.")],
    path: Annotated[
        Path,
        typer.Argument(help="The export: a file, a zip, or the folder it was unpacked into."),
    ],
    tag: Annotated[
        list[str], typer.Option("--tag", "-t", help="Tag every imported document.")
    ] = [],  # noqa: B006
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Only say what the import would add, update, skip and fail."
        ),
    ] = False,
    wait: WaitOption = None,
    brain: NewBrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Import what another tool exported: each item a document, cited at its own place.
    Running it again adds nothing; an item edited since updates its document."""
    from loci.wire.imports import ImportReportOut

    loci = service()
    if not path.exists():
        err.print(f"{escape(str(path))} does not exist")
        raise typer.Exit(NOT_FOUND)
    target = loci.find_brain(brain) if dry_run else loci.brain(brain)
    report = loci.importing.run(target, kind, path, dry_run=dry_run, tags=tag)
    if target is not None and not dry_run:
        pending = [
            o.document_id
            for o in report.outcomes
            if o.document_id is not None and o.action in ("add", "update")
        ]
        index_now(target, pending, wait)
    if json_:
        emit_json(ImportReportOut.of(report).model_dump(mode="json"))
    else:
        _show(report)
    if report.counts["fail"]:
        raise typer.Exit(PARTIAL)
