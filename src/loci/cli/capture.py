"""`loci save` and `loci brain ingest-item`: capture first, curate later.

Both keep what they are given at once (an inbox draft, a transcript's evidence snapshot) and
queue its curation; unless `--no-wait` they then run that curation here and index what it
wrote, so the next query finds it (a running `loci worker` or server does it otherwise).
"""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape

from loci.cli.context import JsonOption, NewBrainOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.graph_common import settle
from loci.cli.output import FAILED, emit_json, out
from loci.cli.waiting import WaitOption
from loci.errors import InvalidInput
from loci.json_input import read_json
from loci.models import Brain, Document
from loci.nul import refuse_nul

if TYPE_CHECKING:
    from loci.graph.results import Summary

ACTOR = "cli"


def _settle(target: Brain, items: list[Document], wait: bool | None) -> list[Document]:
    """Curate the items here, then index the pages and evidence the curation wrote as far
    as `wait` says (`loci.cli.waiting`)."""
    loci = service()
    pending = [d.id for d in items if d.status == "processing"]
    if pending:
        loci.library.wait_for(target, pending)
    settle(target, wait)
    return [loci.library.document(target, d.id) for d in items]


def _now(target: Brain, summary: Summary | None) -> Summary | None:
    """The document as it is after curation (a folded draft is now a merged tombstone)."""
    return None if summary is None else service().graph.get(target, summary.id).summary


def _curation(item: Document) -> str:
    if item.status == "processing":
        return "curation queued"
    if item.status == "failed":
        return f"curation failed: {item.status_reason}"
    return item.status_reason or "curated"


def _captured_json(
    target: Brain,
    item: Document,
    draft: Summary | None,
    evidence: Summary | None,
    deduped: bool,
) -> dict[str, object]:
    """The API's capture body (`CapturedOut`), with how curation went."""
    from loci.wire.documents import DocumentOut
    from loci.wire.graph import CapturedOut, GraphSummaryOut

    shown = CapturedOut(
        item=DocumentOut.of(item, target),
        draft=GraphSummaryOut.of(draft) if draft is not None else None,
        evidence=GraphSummaryOut.of(evidence) if evidence is not None else None,
        deduped=deduped,
    )
    return {**shown.model_dump(mode="json"), "curation": _curation(item)}


def _show(verb: str, summary: Summary | None, item: Document, deduped: bool) -> None:
    note = " (already saved)" if deduped else ""
    if summary is not None:
        where = f"{escape(summary.path)} [dim]({summary.status})[/dim]"
        if summary.merged_into:
            where += f" → {escape(summary.merged_into)}"
        out.print(f"{verb} {where}{note}")
    else:
        out.print(f"{verb} item #{item.id}{note}")
    colour = "red" if item.status == "failed" else "dim"
    out.print(f"[{colour}]{escape(_curation(item))}[/{colour}]")


def _read_text(value: str | None) -> str:
    text = sys.stdin.read() if value in (None, "-") else value or ""
    refuse_nul("the text", text)
    return text


def register(app: typer.Typer) -> None:
    app.command("save")(exits_cleanly(save))

    # `loci brain …` is made by loci.cli.graph, registered before this module.
    brain_app = next((g.typer_instance for g in app.registered_groups if g.name == "brain"), None)
    if brain_app is None:
        raise RuntimeError("register loci.cli.graph before loci.cli.capture")
    _register_ingest(brain_app)


def _register_ingest(brain_app: typer.Typer) -> None:
    @brain_app.command("ingest-item")
    @exits_cleanly
    def ingest_item(
        file: Annotated[
            str, typer.Argument(help="A JSON item (or a list of them); '-' reads stdin.")
        ],
        provider: Annotated[
            str, typer.Option("--provider", help="Where the item comes from, e.g. jamie.")
        ],
        wait: WaitOption = None,
        brain: NewBrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Keep a provider's item (e.g. a meeting transcript with attendees) and curate it."""
        loci = service()
        target = loci.brain(brain)
        raw = sys.stdin.read() if file == "-" else _read_file(Path(file))
        value: Any = read_json(raw, file)
        refuse_nul(file, value)
        values = value if isinstance(value, list) else [value]
        results = [loci.library.ingest_item(target, provider, v, actor=ACTOR) for v in values]
        items = [r.item for r in results]
        if wait is not False:
            items = _settle(target, items, wait)
        rows = []
        for result, item in zip(results, items, strict=True):
            shown = result.evidence or result.draft
            rows.append((result, item, _now(target, shown) if wait is not False else shown))
        if json_:
            emit_json([
                _captured_json(target, i, _now(target, r.draft) if wait is not False else r.draft,
                               r.evidence, r.deduped)
                for r, i, _ in rows
            ])  # fmt: skip
        else:
            for result, item, shown in rows:
                _show("kept", shown, item, result.deduped)
        if any(i.status == "failed" for i in items):
            raise typer.Exit(FAILED)


def _read_file(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidInput(f"cannot read {path}: {error.strerror}") from None
    except UnicodeDecodeError:
        raise InvalidInput(f"{path} is not UTF-8 text") from None


def save(
    text: Annotated[
        str | None, typer.Argument(help="What to keep (Markdown); '-' or none reads stdin.")
    ] = None,
    title: Annotated[str | None, typer.Option("--title", help="A title for it.")] = None,
    source: Annotated[
        str | None,
        typer.Option("--source", help="Where it came from, provider:id (default cli:<time>)."),
    ] = None,
    wait: WaitOption = None,
    brain: NewBrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Keep something in the brain now, as an inbox draft; curation finds its home."""
    loci = service()
    target = loci.brain(brain)
    stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    captured = loci.library.save(
        target, _read_text(text), title=title, source=source or f"cli:{stamp}", actor=ACTOR
    )
    item, draft = captured.item, captured.draft
    if wait is not False:
        item = _settle(target, [item], wait)[0]
        draft = _now(target, draft) or draft
    if json_:
        emit_json(_captured_json(target, item, draft, None, captured.deduped))
    else:
        _show("saved", draft, item, captured.deduped)
    if item.status == "failed":
        raise typer.Exit(FAILED)
