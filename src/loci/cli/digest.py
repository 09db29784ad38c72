"""`loci digest`: a recap of what came into a brain over a period (a weekly review)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from loci.cli.context import BrainOption, JsonOption, existing_brain, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, out

if TYPE_CHECKING:
    from loci.review.facade import Digest

MAX_SHOWN = 15  # per list on screen; --json has them all


def register(app: typer.Typer) -> None:
    app.command("digest")(exits_cleanly(digest))


def _show(made: Digest) -> None:
    facts, counts = made.facts, made.facts.counts
    out.print(f"[bold]Digest of {escape(facts.brain)}[/bold] — {facts.period.describe()}")
    kinds = ", ".join(f"{n} {k}" for k, n in sorted(facts.by_kind.items()))
    out.print(
        f"{counts['added']} added ({kinds or 'none'}) · {counts['notes']} notes · "
        f"{counts['inbox']} in the inbox ({counts['inbox_new']} new) · "
        f"{counts['pages_created']} pages created, {counts['pages_changed']} changed · "
        f"{counts['failed']} failed"
    )
    out.print(
        "\n[bold]Summary[/bold]" + (" [dim](extracts)[/dim]" if made.recap.by == "extract" else "")
    )
    out.print(escape(made.recap.text) or "[dim]nothing new in this period[/dim]")
    for source in made.recap.sources:
        out.print(f"  [dim][{source.number}] {escape(source.label())}[/dim]")
    if facts.themes:
        out.print("\n[bold]Themes[/bold]")
        for theme in facts.themes:
            out.print(f"  {escape(theme.label)} [dim]({_documents(len(theme.document_ids))})[/dim]")
    _list("Added", [f"{d.kind}: {d.title}" for d in facts.added])
    _list("Notes", [d.title for d in facts.notes])
    pages = []
    for p in facts.pages:
        pages.append(f"{p.title} ({p.type}, {'new' if p.created else 'changed'})")
        pages += [f"    {e.at}: {e.text}" for e in p.entries]
    _list("Pages", pages)
    _list("Inbox (waiting to be curated)", [d.title for d in facts.inbox])
    _list("Failed", [f"{f.name}: {f.reason}" for f in facts.failed])


def _list(heading: str, lines: list[str]) -> None:
    if not lines:
        return
    out.print(f"\n[bold]{heading}[/bold]")
    for line in lines[:MAX_SHOWN]:
        out.print(f"  {escape(line)}")
    if len(lines) > MAX_SHOWN:
        out.print(f"  [dim]… and {len(lines) - MAX_SHOWN} more (--json lists them all)[/dim]")


def _documents(n: int) -> str:
    return f"{n} document" if n == 1 else f"{n} documents"


def digest(
    since: Annotated[
        str, typer.Option("--since", help="24h, 7d, 2w … back from now, or a date 2026-11-01.")
    ] = "7d",
    brain: BrainOption = None,
    save: Annotated[
        bool,
        typer.Option("--save", help="Keep it as a page in reviews/ (same period: same page)."),
    ] = False,
    json_: JsonOption = False,
) -> None:
    """What you added, wrote, captured and changed over a period, what failed, and the
    themes of the new material, with a short recap citing the documents."""
    loci = service()
    target = existing_brain(brain)
    saved = loci.reviews.save_digest(target, since) if save else None
    made = saved.digest if saved is not None else loci.reviews.digest(target, since)
    if json_:
        data = made.as_dict()
        if saved is not None:
            data["page"] = {"id": saved.page.id, "path": saved.page.path,
                            "created": saved.created}  # fmt: skip
        emit_json(data)
        return
    _show(made)
    if saved is not None:
        verb = "saved as" if saved.created else "updated"
        out.print(f"\n{verb} [bold]{escape(saved.page.path)}[/bold]")
