"""`loci sources` (the folders, feeds and web pages a brain follows) and `loci sync` (bring each
folder up to date once).

Registering a folder reads nothing yet; `loci sync` walks every registered folder and adds,
updates, renames and removes documents so the brain matches the files (for cron, or a laptop
without `loci serve`). A folder followed `--as pages` (an Obsidian vault) is kept as graph pages
both ways; a file changed on both sides is a conflict, settled with `loci sources resolve`.
Like `loci brains`, these commands act as the administrator of the data directory: the path is
one of this machine's, so unlike the HTTP API they are not confined to
`LOCI_SOURCES_ALLOWED_ROOTS`.

A URL given to `loci sources add URL --every 1h` is a feed or web page the worker (`loci serve`,
`loci worker`) checks on that schedule; `loci sources sync ID` checks one now.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli.context import (
    BrainOption,
    JsonOption,
    NewBrainOption,
    brain_to_fill,
    existing_brain,
    service,
)
from loci.cli.errors import exits_cleanly
from loci.cli.output import PARTIAL, emit_json, err, out
from loci.cli.waiting import WaitOption, index_now

if TYPE_CHECKING:
    from collections.abc import Mapping

    from loci.models import Brain, OnDelete, Source, WatchMode
    from loci.service.sources import SourceSync


SourceModeOption = Literal["files", "pages"]
KeepOption = Literal["file", "loci"]
KindOption = Literal["feed", "page", "imap", "git", "webdav"]
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}


def parse_every(text: str) -> float:
    """Seconds of a period as typed: "90" (seconds), "30m", "1h", "1d", "1w", "1h30m"."""
    cleaned = text.strip().lower().replace(" ", "")
    if cleaned.replace(".", "", 1).isdigit():
        return float(cleaned)
    parts = re.findall(r"(\d+(?:\.\d+)?)([smhdw])", cleaned)
    if not parts or "".join(n + u for n, u in parts) != cleaned:
        raise typer.BadParameter(f"{text!r} is not a period (say 90s, 30m, 1h, 1d or 1w)")
    return sum(float(n) * _UNITS[u] for n, u in parts)


def _is_url(text: str) -> bool:
    return "://" in text


def _in(when: str | None, now: datetime) -> str:
    """How long until `when` (ISO 8601), as a person glances at it: "in 2h", "due"."""
    if when is None:
        return "-"
    seconds = (datetime.fromisoformat(when.replace("Z", "+00:00")) - now).total_seconds()
    if seconds <= 0:
        return "due"
    for size, unit in ((86400, "d"), (3600, "h"), (60, "m")):
        if seconds >= size:
            return f"in {seconds / size:.0f}{unit}"
    return f"in {seconds:.0f}s"


def _brain_names() -> dict[int, str]:
    return {b.id: b.name for b in service().brains()}


def _source_row(
    source: Source, brain_name: str, watching: Mapping[int, WatchMode] | None = None
) -> dict[str, Any]:
    from loci.wire.sources import SourceOut

    return SourceOut.of(source, brain_name, watching or {}).model_dump(mode="json")


def _sync_row(result: SourceSync, brain_name: str) -> dict[str, Any]:
    from loci.wire.sources import SourceSyncOut

    return SourceSyncOut.of(result, brain_name).model_dump(mode="json")


def _find(source_id: int, brain_name: str | None) -> tuple[Brain, Source]:
    """The source `source_id`: in the brain named, or (none named) in whichever brain has it."""
    loci = service()
    if brain_name is None:
        return loci.sources.find(source_id)
    owner = existing_brain(brain_name)
    return owner, loci.sources.get(owner, source_id)


CHANGES = (
    "added", "updated", "renamed", "removed", "gone", "returned", "written", "unchanged"
)  # fmt: skip


def _print_sync(row: dict[str, Any]) -> None:
    where = f"#{row['source_id']} {escape(row['path'])} ({escape(row['brain'])})"
    if row["unreachable"]:
        out.print(f"[red]✗[/red] {where}: unreachable — {escape(row['unreachable'])}")
        return
    counts = ", ".join(f"{row[k]} {k}" for k in CHANGES if row[k])
    failed, conflicts = len(row["failed"]), len(row["conflicts"])
    for n, what in ((failed, "failed"), (conflicts, "in conflict")):
        if n:
            counts += (", " if counts else "") + f"{n} {what}"
    mark = "[yellow]![/yellow]" if failed or conflicts else "[green]✓[/green]"
    out.print(f"{mark} {where}: {counts or 'no files'}")
    for failure in row["failed"]:
        out.print(f"    [red]✗[/red] {escape(failure['path'])} — {escape(failure['reason'])}")
    for conflict in row["conflicts"]:
        out.print(
            f"    [yellow]≠[/yellow] {escape(conflict['path'])} — {escape(conflict['reason'])}"
            f" (`loci sources resolve {row['source_id']} PATH --keep file|loci`)"
        )


def register(app: typer.Typer) -> None:
    sources = typer.Typer(
        help="Folders a brain follows: `loci sync` keeps their documents in step with the files."
    )
    app.add_typer(sources, name="sources")

    sources.command("add")(exits_cleanly(add))
    sources.command("list")(exits_cleanly(list_sources))
    sources.command("sync")(exits_cleanly(sync_one))
    sources.command("rm")(exits_cleanly(remove))
    sources.command("resolve")(exits_cleanly(resolve))
    app.command("sync")(exits_cleanly(sync))


def add(
    path: Annotated[
        str,
        typer.Argument(
            help="A folder (a vault, Documents, PDFs); or, checked on a schedule, the URL of a"
            " feed or web page, an IMAP folder, a git repository or a WebDAV folder."
        ),
    ],
    include: Annotated[
        list[str],
        typer.Option("--include", help="Only files matching this glob (name or path in it)."),
    ] = [],  # noqa: B006
    exclude: Annotated[
        list[str], typer.Option("--exclude", help="Skip files matching this glob.")
    ] = [],  # noqa: B006
    keep_deleted: Annotated[
        bool,
        typer.Option(
            "--keep-deleted",
            help="Keep the document of a file deleted from the folder (default: remove it).",
        ),
    ] = False,
    as_: Annotated[
        SourceModeOption,
        typer.Option(
            "--as",
            help="files: each file a document; pages: an Obsidian-style vault kept as "
            "graph pages, edits made in Loci written back to the files.",
        ),
    ] = "files",
    every: Annotated[
        str | None,
        typer.Option(
            "--every",
            help="A URL's schedule: how often the worker checks it (30m, 1h, 1d).",
        ),
    ] = None,
    kind: Annotated[
        KindOption | None,
        typer.Option(
            "--kind",
            help="What the URL is: a feed (RSS, Atom, JSON Feed: its entries are documents),"
            " a page (re-checked), an IMAP mailbox folder (imaps://user@host/INBOX), a git"
            " repository (a URL or a path), a WebDAV folder (davs://host/path); default: told"
            " by its scheme, or by what it answers.",
        ),
    ] = None,
    also: Annotated[
        list[str],
        typer.Option("--also", help="--kind page: another page checked with it."),
    ] = [],  # noqa: B006
    user: Annotated[
        str | None,
        typer.Option("--user", help="imap, webdav, git over https: the account to sign in as."),
    ] = None,
    password_env: Annotated[
        str | None,
        typer.Option(
            "--password-env",
            help="The environment variable holding the password or token (kept sealed with"
            " Loci's key, never shown).",
        ),
    ] = None,
    branch: Annotated[
        str | None, typer.Option("--branch", help="--kind git: the branch followed.")
    ] = None,
    brain: NewBrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Follow a folder (`loci sync` then adds its files and keeps them up to date), or a
    feed, web page, mailbox folder, git repository or WebDAV folder the worker checks on a
    schedule (`--every`)."""
    target = brain_to_fill(brain)
    on_delete: OnDelete = "keep" if keep_deleted else "remove"
    if _is_url(path) or kind is not None:
        if every is None:
            raise typer.BadParameter("a URL is followed on a schedule: add --every 1h")
        options: dict[str, object] = {"urls": also} if also else {}
        if user:
            options["user"] = user
        if branch:
            options["branch"] = branch
        if include:
            options["include"] = include
        if exclude:
            options["exclude"] = exclude
        secret = None
        if password_env is not None:
            secret = os.environ.get(password_env)
            if not secret:
                raise typer.BadParameter(f"the environment variable {password_env} is not set")
        source = service().scheduled.add(
            target,
            path,
            parse_every(every),
            kind=kind,
            on_delete=on_delete,
            options=options,
            secret=secret,
        )
        if json_:
            emit_json(_source_row(source, target.name))
            return
        out.print(
            f"following the {source.kind} {escape(source.path)} as source #{source.id} of"
            f" brain {escape(target.name)}, every {every}; a running `loci serve` or"
            f" `loci worker` checks it (`loci sources sync {source.id}` checks it now)"
        )
        return
    if every is not None:
        raise typer.BadParameter("--every is for a URL; a folder is watched")
    source = service().sources.add(target, Path(path), include, exclude, on_delete, as_)
    if json_:
        emit_json(_source_row(source, target.name))
        return
    kept_as = " (as pages)" if source.mode == "pages" else ""
    out.print(
        f"following {escape(source.path)}{kept_as} as source #{source.id} of brain"
        f" {escape(target.name)}; a running `loci serve` or `loci worker` watches it"
        " (`loci sync` adds its files now)"
    )


def list_sources(brain: BrainOption = None, json_: JsonOption = False) -> None:
    """The folders, feeds and pages followed (every brain's, unless --brain): files or
    entries, last sync, next run, what the last run did, errors."""
    loci = service()
    chosen = existing_brain(brain) if brain is not None else None
    names = _brain_names()
    watching = loci.sources.watching(chosen)
    rows = [_source_row(s, names.get(s.brain_id, "?"), watching) for s in loci.sources.list(chosen)]
    if json_:
        emit_json(rows)
        return
    if not rows:
        err.print("no folders followed: `loci sources add PATH` registers one")
        return
    # At 80 columns the path is what tells two folders apart: it wraps, whole; the short
    # columns never do, and those that would say nothing (no folder kept as pages, no
    # conflict anywhere) are left out.
    pages = any(r["mode"] != "files" for r in rows)
    conflicts = any(r["conflicts"] for r in rows)
    scheduled = any(r["kind"] != "folder" for r in rows)
    table = Table(box=None, pad_edge=False)
    for header in ("id", "brain"):
        table.add_column(header, no_wrap=True)
    table.add_column("path", overflow="fold", min_width=16, ratio=1)
    shown = ["kind"] * scheduled + ["as"] * pages + ["files", "last sync", "errors"]
    shown += ["conflicts"] * conflicts
    # A folder is watched, a feed runs on a schedule: one column says which and when.
    last = "watch/next" if scheduled else "watching"
    for header in (*shown, last):
        table.add_column(header, no_wrap=True)
    now = datetime.now(UTC)
    for r in rows:
        synced = (r["last_sync_at"] or "never")[:16].replace("T", " ")
        if scheduled:  # the year gives way to the next run's column
            synced = synced[5:] if r["last_sync_at"] else synced
        errors = "unreachable" if r["unreachable"] else str(len(r["errors"]))
        if r["last_error"]:
            errors = "failing"
        files = "-" if r["files"] is None else str(r["files"])
        path = escape(r["path"])
        cells = {
            "kind": r["kind"], "as": r["mode"] if r["kind"] == "folder" else "-",
            "files": files, "last sync": synced, "errors": errors,
            "conflicts": str(len(r["conflicts"])),
        }  # fmt: skip
        watched = r["watching"]
        if r["kind"] != "folder":
            watched = "running" if r["running"] else _in(r["next_run_at"], now)
        table.add_row(str(r["id"]), escape(r["brain"]), path, *(cells[h] for h in shown), watched)
    out.print(table)
    for r in rows:  # what the last run of each scheduled source did, and why it failed
        if r["kind"] == "folder":
            continue
        done = ", ".join(f"{n} {what}" for what, n in r["counts"].items() if n)
        if r["last_sync_at"] is not None:
            out.print(f"#{r['id']} last run: {escape(done or 'nothing to do')}")
        if r["moved_to"]:
            out.print(f"[yellow]→[/yellow] #{r['id']} moved to {escape(r['moved_to'])}")
        if r["last_error"]:
            tries = f" ({r['failures']} failures in a row)" if r["failures"] > 1 else ""
            out.print(f"[red]✗[/red] #{r['id']} {escape(r['last_error'])}{tries}")
    for r in rows:  # what needs the person's attention, file by file
        for failure in r["errors"]:
            out.print(
                f"[red]✗[/red] #{r['id']} {escape(failure['path'])} — {escape(failure['reason'])}"
            )


def sync_one(
    source_id: Annotated[int, typer.Argument(help="The source's id (`loci sources list`).")],
    brain: BrainOption = None,
    wait: WaitOption = None,
    json_: JsonOption = False,
) -> None:
    """Check a followed feed or page now (a folder: `loci sync`), whatever its schedule."""
    from loci.jobs.worker import worker_name

    loci = service()
    owner, found = _find(source_id, brain)
    result = loci.scheduled.run_now(owner, found.id, worker_name())
    index_now(owner, result.queued, wait)
    row = _sync_row(result, owner.name)
    if json_:
        emit_json(row)
    else:
        _print_sync(row)
    if result.failed or result.unreachable:
        raise typer.Exit(PARTIAL)


def remove(
    source_id: Annotated[int, typer.Argument(help="The source's id (`loci sources list`).")],
    keep_documents: Annotated[
        bool,
        typer.Option(
            "--keep-documents", help="Keep the folder's documents (default: remove them)."
        ),
    ] = False,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Stop following a folder; its documents are removed unless --keep-documents."""
    loci = service()
    owner, found = _find(source_id, brain)
    source, removed = loci.sources.remove(owner, found.id, keep_documents)
    if json_:
        emit_json(
            {
                "source": _source_row(source, owner.name),
                "documents_kept": keep_documents,
                "documents_removed": removed,
            }
        )
        return
    fate = (
        "its documents stay in the brain"
        if keep_documents
        else f"its {removed} document{'' if removed == 1 else 's'} removed from the brain"
    )
    out.print(f"stopped following {escape(source.path)} (#{source.id}); {fate}")


def resolve(
    source_id: Annotated[int, typer.Argument(help="The source's id (`loci sources list`).")],
    path: Annotated[str, typer.Argument(help="The file in conflict, as the sync named it.")],
    keep: Annotated[
        KeepOption,
        typer.Option(
            "--keep",
            help="file: the file's text goes into the page (its history keeps Loci's); "
            "loci: the page is written to the file.",
        ),
    ],
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Settle a conflict of a folder kept as pages by keeping one side, then sync it."""
    loci = service()
    owner, found = _find(source_id, brain)
    result = loci.sources.resolve(owner, found.id, path, keep)
    row = _sync_row(result, owner.name)
    if json_:
        emit_json(row)
    else:
        _print_sync(row)
    if result.failed or result.conflicts or result.unreachable:
        raise typer.Exit(PARTIAL)


def sync(brain: BrainOption = None, wait: WaitOption = None, json_: JsonOption = False) -> None:
    """Bring every followed folder up to date once: added, updated, renamed, removed."""
    loci = service()
    chosen = existing_brain(brain) if brain is not None else None
    report = loci.sources.sync(chosen)
    for result in report.sources:
        if index_now(loci.sources.brain_of(result), result.queued, wait) is not None:
            loci.sources.note_index_failures(result)
    names = _brain_names()
    rows = [_sync_row(r, names.get(r.brain_id, "?")) for r in report.sources]
    if json_:
        emit_json({"ok": report.ok, "sources": rows})
    elif not rows:
        err.print("no folders followed: `loci sources add PATH` registers one")
    else:
        for row in rows:
            _print_sync(row)
    if not report.ok:  # some folder or file needs the person's attention
        raise typer.Exit(PARTIAL)
