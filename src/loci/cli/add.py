"""`loci add` and `loci note`: give a brain something to know."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from loci.cli.context import JsonOption, NewBrainOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import FAILED, PARTIAL, emit_json, err, human_size, out
from loci.cli.waiting import PENDING_NOTE, WaitOption, wait_until
from loci.errors import LociError
from loci.failure_advice import what_to_do
from loci.ingest.sources import expand_paths, is_url
from loci.models import Document, is_searchable, is_settled
from loci.nul import refuse_nul

if TYPE_CHECKING:
    from loci.ingest.preflight import Preflight, PreflightItem
    from loci.models import Brain


@dataclass
class Outcome:
    source: str
    document: Document | None = None
    deduped: bool = False
    error: str | None = None
    refreshed: bool = False

    @property
    def ok(self) -> bool:
        return self.error is None and (self.document is None or self.document.status != "failed")

    def as_json(self, brain: Brain) -> dict[str, object]:
        from loci.wire.documents import DocumentOut

        doc = self.document
        return {
            "source": self.source,
            "ok": self.ok,
            "deduped": self.deduped,
            "refreshed": self.refreshed,
            "error": self.error or (doc.status_reason if doc and doc.status == "failed" else None),
            "document": DocumentOut.of(doc, brain) if doc is not None else None,
        }


def _progress() -> Progress:
    return Progress(
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=err,
        transient=True,
    )


def _report(outcomes: list[Outcome], brain: Brain, as_json: bool) -> None:
    if as_json:
        emit_json([o.as_json(brain) for o in outcomes])
    else:
        for o in outcomes:
            d = o.document
            if o.error:
                out.print(f"[red]✗[/red] {escape(o.source)} — {escape(o.error)}")
            elif d is not None and d.status == "failed":
                out.print(
                    f"[red]✗[/red] {escape(d.name)} (#{d.id}) — "
                    f"{escape(d.status_reason or 'failed')}\n"
                    f"    {escape(what_to_do(d.failure_code, d.id))}"
                )
            elif d is not None:
                note = " (already in this brain)" if o.deduped else ""
                changed = "page" if d.kind == "web" else "file"
                note = (
                    f" (kept before; updated with the changed {changed})" if o.refreshed else note
                )
                chunks = f"{d.chunk_count} chunk{'' if d.chunk_count == 1 else 's'}"
                state = chunks if d.status == "ready" else d.status
                if d.status == "processing" and d.vectors_pending:
                    state = f"{chunks}, searchable by words (vectors pending)"
                extra = f" — {escape(d.status_reason)}" if d.status_reason else ""
                out.print(f"[green]✓[/green] {escape(d.name)} (#{d.id}) {state}{note}{extra}")
    failed = [o for o in outcomes if not o.ok]
    if failed:
        raise typer.Exit(PARTIAL if len(failed) < len(outcomes) else FAILED)


def _wait(outcomes: list[Outcome], brain_name: str | None, wait: bool | None) -> None:
    """Index the added documents in this process as far as `wait` says (`loci.cli.waiting`):
    first every one's text (searchable by words), then, unless a worker running on this
    database (`loci serve`, `loci worker`) writes them, their vectors; a bar for each stage."""
    loci = service()
    brain = loci.brain(brain_name)
    pending = [o.document.id for o in outcomes if o.document and o.document.status == "processing"]
    until = wait_until(wait) if pending else None
    if until is None:
        return
    with _progress() as progress:
        words = progress.add_task("searchable by words", total=len(pending))
        meaning = progress.add_task("embedding", total=len(pending)) if until == "ready" else None

        def update(docs: list[Document]) -> None:
            progress.update(words, completed=sum(is_searchable(d) for d in docs))
            if meaning is not None:
                progress.update(meaning, completed=sum(is_settled(d) for d in docs))

        final = {d.id: d for d in loci.library.wait_for(brain, pending, update, until=until)}
    for o in outcomes:
        if o.document is not None and o.document.id in final:
            o.document = final[o.document.id]
    if until == "searchable" and any(d.vectors_pending for d in final.values()):
        err.print(PENDING_NOTE)


_MARKS = {"add": "[green]+[/green]", "duplicate": "[yellow]=[/yellow]", "fail": "[red]✗[/red]"}


def _item_line(item: PreflightItem) -> str:
    mark = _MARKS.get(item.outcome, "[red]✗[/red]")
    size = f"{human_size(item.size_bytes)}, " if item.size_bytes is not None else ""
    what = f" ({size}{item.parser or item.media_type or item.kind})" if item.name else ""
    if item.outcome == "add":
        approx = "" if item.chunks_exact else "~"
        ocr = ", OCR" if item.ocr else ""
        if item.transcription:
            ocr += f", speech to text by {item.transcription}"
        plural = "" if item.chunks == 1 else "s"
        detail = f"{approx}{item.chunks} chunk{plural}, ~{item.seconds:g} s{ocr}"
        if item.replaces is not None:
            detail += f"; updates #{item.replaces.id} {item.replaces.name}"
    elif item.duplicate_of is not None:
        ref = item.duplicate_of
        detail = (
            f"already in this brain as #{ref.id} {ref.name}"
            + (ref.retry_hint() if ref.status == "failed" else "")
            if ref.id is not None
            else f"same as {ref.name} above"
        )
    elif item.outcome == "fail":
        detail = f"will be stored but fail: {item.error}"
    else:
        detail = f"refused: {item.error}"
    line = f"{mark} {escape(item.source)}{escape(what)} — {escape(detail)}"
    return line + "".join(f"\n    [yellow]![/yellow] {escape(w)}" for w in item.warnings)


def _report_preflight(flight: Preflight, as_json: bool) -> None:
    if as_json:
        from loci.wire.preflight import PreflightOut

        emit_json(PreflightOut.of(flight))
    else:
        for item in flight.items:
            out.print(_item_line(item))
        t = flight.totals
        failed_there = sum(
            i.duplicate_of is not None and i.duplicate_of.status == "failed" for i in flight.items
        )
        there = f"{t.duplicate} already there" + (
            f" ({failed_there} of them failed)" if failed_there else ""
        )
        out.print(
            f"{t.items} items: {t.add} to add, {there}, {t.fail} will fail, "
            f"{t.refuse} refused — {human_size(t.new_bytes)} new, {t.chunks} chunks, "
            f"about {t.seconds:g} s to index" + (f", {t.ocr} with OCR" if t.ocr else "")
        )
        out.print(f"status: {flight.status} (dry run: nothing was written)")
    failing = flight.totals.fail + flight.totals.refuse
    if failing:  # the exit code `add` would give
        raise typer.Exit(PARTIAL if failing < flight.totals.items else FAILED)


def register(app: typer.Typer) -> None:
    app.command("add")(exits_cleanly(add))
    app.command("note")(exits_cleanly(note))


def add(
    sources: Annotated[list[str], typer.Argument(help="Files, folders, globs or http(s) URLs.")],
    include: Annotated[
        list[str], typer.Option("--include", help="Only file names matching this glob.")
    ] = [],  # noqa: B006
    exclude: Annotated[
        list[str], typer.Option("--exclude", help="Skip paths matching this glob.")
    ] = [],  # noqa: B006
    tag: Annotated[list[str], typer.Option("--tag", "-t", help="Tag the added documents.")] = [],  # noqa: B006
    wait: WaitOption = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Only report what adding would do (type, size, duplicates, limits, OCR, "
            "chunks, time); write nothing.",
        ),
    ] = False,
    brain: NewBrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Add files, folders (recursively) and web pages to a brain, then index them."""
    loci = service()
    urls = [s for s in sources if is_url(s)]
    paths, problems = expand_paths([s for s in sources if not is_url(s)], include, exclude)
    if dry_run:
        existing = loci.find_brain(brain)  # a dry run does not create the brain
        flight = loci.library.preflight(existing, paths=paths, urls=urls, problems=problems)
        _report_preflight(flight, json_)
        return
    target = loci.brain(brain)
    outcomes = [Outcome(p.arg, error=p.reason) for p in problems]
    for url in urls:
        try:
            result = loci.library.add_url(target, url, tag)
            outcomes.append(
                Outcome(url, result.document, result.deduped, refreshed=result.refreshed)
            )
        except LociError as error:
            outcomes.append(Outcome(url, error=error.message))
    for path in paths:
        try:
            result = loci.library.add_file(target, path, tag)
            outcomes.append(
                Outcome(str(path), result.document, result.deduped, refreshed=result.refreshed)
            )
        except LociError as error:
            outcomes.append(Outcome(str(path), error=error.message))
        except OSError as error:
            outcomes.append(Outcome(str(path), error=f"cannot read: {error.strerror}"))
    if not outcomes:
        err.print("nothing to add: no files matched")
        raise typer.Exit(FAILED)
    _wait(outcomes, brain, wait)
    _report(outcomes, target, json_)


def note(
    text: Annotated[
        str | None, typer.Argument(help="The note (Markdown); '-' or none reads stdin.")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="A title for the note.")] = None,
    tag: Annotated[list[str], typer.Option("--tag", "-t", help="Tag the note.")] = [],  # noqa: B006
    wait: WaitOption = None,
    brain: NewBrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Save a Markdown note; it is searched together with files."""
    import sys

    body = sys.stdin.read() if text in (None, "-") else text
    refuse_nul("the note", body or "")
    loci = service()
    result = loci.library.add_note(loci.brain(brain), body or "", title=title, tags=tag)
    outcomes = [Outcome(title or "note", result.document, result.deduped)]
    _wait(outcomes, brain, wait)
    _report(outcomes, loci.brain(brain), json_)
