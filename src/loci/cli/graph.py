"""`loci brain …`: the brain graph's documents, links and timeline (seed 002's brain CLI).

Thin over `loci.graph.service.BrainGraph` (and `transfer` for import, export, materialize and
sync, `doctor` for the health check). Writes record the actor "cli", read the current
version and write against its hash in one call (`--expected-hash` pins the version you saw),
then wait until search has indexed the change unless `--no-wait`.
"""

from __future__ import annotations

import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli.context import BrainOption, JsonOption, NoWaitOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import FAILED, PARTIAL, emit_json, err, out, to_jsonable
from loci.graph.doctor import Checkup, Doctor
from loci.graph.results import Summary
from loci.graph.service import BrainGraph
from loci.graph.transfer import GraphTransfer, TransferReport
from loci.models import Brain, GraphEdge

ACTOR = "cli"
ExpectedHash = Annotated[
    str | None,
    typer.Option("--expected-hash", help="Refuse the edit unless the document is at this hash."),
]
IdArg = Annotated[str, typer.Argument(help="Document id (or its exact title or an alias).")]
IncludeMerged = Annotated[bool, typer.Option("--include-merged", help="Also merged tombstones.")]
IncludeArchived = Annotated[
    bool, typer.Option("--include-archived", help="Also archived documents.")
]


def _open(brain: str | None) -> tuple[BrainGraph, Brain]:
    loci = service()
    return BrainGraph(loci.store, loci.blobs, loci.search), loci.brain(brain)


def _text(value: str | None) -> str:
    return sys.stdin.read() if value in (None, "-") else value or ""


def _settle(target: Brain, no_wait: bool) -> None:
    """Index what the write queued, so the next search finds it (the worker would, later)."""
    if no_wait:
        return
    loci = service()
    waiting = [
        d.id for d in loci.documents(target, status="processing") if d.kind in ("page", "evidence")
    ]
    if waiting:
        loci.wait_for(target, waiting)


def _written(verb: str, document: Summary, json_: bool, changed: bool = True) -> None:
    if json_:
        emit_json({"changed": changed, "document": document})
        return
    if not changed:
        out.print(f"unchanged: {escape(document.path)} already has that")
        return
    out.print(
        f"{verb} {escape(document.path)} [dim]({document.status} · "
        f"hash {document.content_hash[:12]})[/dim]"
    )


def _edges(label: str, edges: tuple[GraphEdge, ...], incoming: bool) -> None:
    if edges:
        shown = ", ".join(f"{e.type} {e.source if incoming else e.target}" for e in edges)
        out.print(f"[dim]{label}: {escape(shown)}[/dim]")


def _summaries(found: list[Summary]) -> Table:
    table = Table("id", "type", "status", "folder", "title", box=None, header_style="bold")
    for d in found:
        table.add_row(escape(d.id), d.type, d.status, escape(d.folder), escape(d.title))
    return table


def register(app: typer.Typer) -> None:
    brain_app = typer.Typer(
        help="The brain graph: Markdown pages and evidence with typed links and a timeline.",
        no_args_is_help=True,
    )
    app.add_typer(brain_app, name="brain")
    _register_reads(brain_app)
    _register_writes(brain_app)
    _register_transfer(brain_app)


def _register_reads(app: typer.Typer) -> None:
    @app.command("get")
    @exits_cleanly
    def get(doc_id: IdArg, brain: BrainOption = None, json_: JsonOption = False) -> None:
        """Print a document's Markdown, then its links and backlinks."""
        graph, target = _open(brain)
        page = graph.get(target, doc_id)
        if json_:
            # Frontmatter keys Loci does not use may hold YAML dates: show them as text.
            extra = json.loads(json.dumps(page.doc.extra, default=str))
            emit_json(replace(page, doc=page.doc.with_changes(extra=extra)))
            return
        sys.stdout.write(page.content)
        _edges("links", page.links, incoming=False)
        _edges("backlinks", page.backlinks, incoming=True)

    @app.command("list")
    @exits_cleanly
    def list_(
        folder: Annotated[
            str | None, typer.Option("--folder", help="This folder and below.")
        ] = None,
        doc_type: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
        status: Annotated[str | None, typer.Option("--status", help="Only this status.")] = None,
        include_merged: IncludeMerged = False,
        include_archived: IncludeArchived = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Documents by folder, type or status (merged and archived hidden unless asked)."""
        graph, target = _open(brain)
        found = graph.list_documents(
            target, folder=folder, doc_type=doc_type, status=status,
            include_merged=include_merged, include_archived=include_archived,
        )  # fmt: skip
        if json_:
            emit_json(found)
        elif not found:
            out.print("no brain documents yet — create one with `loci brain create`")
        else:
            out.print(_summaries(found))

    @app.command("query")
    @exits_cleanly
    def query(
        text: Annotated[str, typer.Argument(help="What you are looking for.")],
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=30)] = 10,
        include_merged: IncludeMerged = False,
        include_archived: IncludeArchived = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Hybrid search over pages and evidence; each hit with its links."""
        graph, target = _open(brain)
        hits = graph.query(
            target, text, limit=limit, include_merged=include_merged,
            include_archived=include_archived,
        )  # fmt: skip
        if json_:
            emit_json({"query": text, "brain": target.name, "hits": hits})
            return
        if not hits:
            out.print("no matches")
        for number, hit in enumerate(hits, start=1):
            d = hit.document
            out.print(
                f"[bold]{number}. {escape(d.id)}[/bold] {escape(d.title)} "
                f"[dim]{d.type} · {d.status} · score {hit.score:.3f} · {hit.matched_by}[/dim]"
            )
            out.print("   " + escape(hit.snippet))
            _edges("   links", hit.links, incoming=False)

    @app.command("timeline")
    @exits_cleanly
    def timeline(
        doc_id: Annotated[str | None, typer.Argument(help="One document (default: all).")] = None,
        since: Annotated[
            str | None, typer.Option("--since", help="On or after (ISO date).")
        ] = None,
        until: Annotated[str | None, typer.Option("--until", help="Before (ISO date).")] = None,
        limit: Annotated[int, typer.Option("--limit", "-n", min=1, max=1000)] = 100,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Timeline entries, newest first."""
        graph, target = _open(brain)
        entries = graph.timeline(target, doc_id, since=since, until=until, limit=limit)
        if json_:
            emit_json(entries)
            return
        for e in entries:
            source = f" — {e.source}" if e.source else ""
            out.print(f"{e.at}  [bold]{escape(e.doc_id)}[/bold]  {escape(e.text + source)}")

    @app.command("folder")
    @exits_cleanly
    def folder(brain: BrainOption = None, json_: JsonOption = False) -> None:
        """The folder tree with document counts (in the folder · with its subfolders)."""
        graph, target = _open(brain)
        folders = graph.folders(target)
        if json_:
            emit_json(folders)
            return
        for f in folders:
            depth = f.folder.count("/")
            name = f.folder.rsplit("/", 1)[-1]
            out.print(f"{'  ' * depth}{escape(name)}/  [dim]{f.documents} · {f.total}[/dim]")

    @app.command("history")
    @exits_cleanly
    def history(doc_id: IdArg, brain: BrainOption = None, json_: JsonOption = False) -> None:
        """The versions writes replaced or deleted, newest first, with who and when."""
        graph, target = _open(brain)
        versions = graph.history(target, doc_id)
        if json_:
            emit_json(versions)
            return
        for v in versions:
            out.print(
                f"#{v.id}  {v.created_at[:19].replace('T', ' ')}  {escape(v.action)} by "
                f"{escape(v.actor)}  [dim]replaced {v.content_hash[:12]}[/dim]"
            )


def _register_writes(app: typer.Typer) -> None:
    @app.command("create")
    @exits_cleanly
    def create(
        doc_type: Annotated[str | None, typer.Option("--type", help="person, company, …")] = None,
        title: Annotated[str | None, typer.Option("--title")] = None,
        folder: Annotated[str | None, typer.Option("--folder", help="Default: per type.")] = None,
        doc_id: Annotated[
            str | None, typer.Option("--id", help="Default: the title's slug.")
        ] = None,
        status: Annotated[str | None, typer.Option("--status", help="Default: draft.")] = None,
        text: Annotated[
            str | None,
            typer.Option(
                "--text", help="Compiled truth, or a whole Markdown document; - reads stdin."
            ),
        ] = "",
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Create a document (validated; refused with every problem listed)."""
        graph, target = _open(brain)
        made = graph.create(
            target, actor=ACTOR, doc_type=doc_type, title=title, folder=folder,
            doc_id=doc_id, status=status, text=_text(text) if text == "-" else text or "",
        )  # fmt: skip
        _settle(target, no_wait)
        _written("created", made, json_)

    @app.command("rewrite")
    @exits_cleanly
    def rewrite(
        doc_id: IdArg,
        text: Annotated[str, typer.Argument(help="The new compiled truth; - reads stdin.")],
        expected_hash: ExpectedHash = None,
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Replace the compiled truth; frontmatter and timeline stay."""
        graph, target = _open(brain)
        done = graph.rewrite(target, doc_id, _text(text), actor=ACTOR, expected_hash=expected_hash)
        _settle(target, no_wait)
        _written("rewrote", done, json_)

    @app.command("set")
    @exits_cleanly
    def set_(
        doc_id: IdArg,
        assignments: Annotated[
            list[str],
            typer.Argument(
                help="key=value (title, type, status, folder, aliases, relations, sources)."
            ),
        ],
        expected_hash: ExpectedHash = None,
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Set frontmatter fields; lists comma-separated, relations as type:target."""
        graph, target = _open(brain)
        done = graph.set_fields(
            target, doc_id, assignments, actor=ACTOR, expected_hash=expected_hash
        )
        _settle(target, no_wait)
        _written("updated", done, json_)

    @app.command("append-timeline")
    @exits_cleanly
    def append_timeline(
        doc_id: IdArg,
        text: Annotated[str, typer.Argument(help="What happened.")],
        at: Annotated[str | None, typer.Option("--at", help="ISO date (default: today).")] = None,
        source: Annotated[str | None, typer.Option("--source", help="provider:id")] = None,
        expected_hash: ExpectedHash = None,
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Add a dated timeline entry (the same entry twice is kept once)."""
        graph, target = _open(brain)
        done = graph.append_timeline(
            target, doc_id, text, actor=ACTOR, at=at, source=source, expected_hash=expected_hash
        )
        _settle(target, no_wait)
        _written("appended to", done.document, json_, done.changed)

    @app.command("append-evidence")
    @exits_cleanly
    def append_evidence(
        doc_id: IdArg,
        text: Annotated[str, typer.Argument(help="The text to snapshot; - reads stdin.")],
        title: Annotated[str, typer.Option("--title", help="What the evidence is.")],
        source: Annotated[str | None, typer.Option("--source", help="provider:id")] = None,
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Snapshot text into evidence/ and cite it from the page's timeline."""
        graph, target = _open(brain)
        evidence, page = graph.append_evidence(
            target, doc_id, _text(text), title=title, actor=ACTOR, source=source
        )
        _settle(target, no_wait)
        if json_:
            emit_json({"evidence": evidence, "document": page})
            return
        _written("snapshotted", evidence, False)
        _written("cited from", page, False)

    @app.command("alias")
    @exits_cleanly
    def alias(
        doc_id: IdArg,
        name: Annotated[str, typer.Argument(help="Another name for it.")],
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Add an alias (refused if it already names another document)."""
        graph, target = _open(brain)
        done = graph.alias(target, doc_id, name, actor=ACTOR)
        _settle(target, no_wait)
        _written("aliased", done.document, json_, done.changed)

    @app.command("link")
    @exits_cleanly
    def link(
        doc_id: IdArg,
        relation: Annotated[str, typer.Argument(help="Relation type, e.g. works_at.")],
        to: Annotated[str, typer.Argument(help="The document it relates to.")],
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Add a typed relation to another document."""
        graph, target = _open(brain)
        done = graph.link(target, doc_id, relation, to, actor=ACTOR)
        _settle(target, no_wait)
        _written("linked", done.document, json_, done.changed)

    @app.command("merge")
    @exits_cleanly
    def merge(
        source: Annotated[
            str, typer.Argument(help="The document to fold in (becomes a tombstone).")
        ],
        into: Annotated[str, typer.Argument(help="The document that survives.")],
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Fold one document into another: aliases and timeline move, a tombstone stays."""
        graph, target = _open(brain)
        done = graph.merge(target, source, into, actor=ACTOR)
        _settle(target, no_wait)
        _written(f"merged {escape(source)} into", done, json_)

    @app.command("move")
    @exits_cleanly
    def move(
        doc_id: IdArg,
        folder: Annotated[str | None, typer.Option("--folder", help="The new folder.")] = None,
        new_id: Annotated[
            str | None, typer.Option("--id", help="The new id (links follow).")
        ] = None,
        expected_hash: ExpectedHash = None,
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Move to another folder and/or rename; links from other pages are rewritten."""
        graph, target = _open(brain)
        done = graph.move(
            target, doc_id, actor=ACTOR, folder=folder, new_id=new_id, expected_hash=expected_hash
        )
        _settle(target, no_wait)
        _written("moved to", done, json_)

    @app.command("delete")
    @exits_cleanly
    def delete(
        doc_id: IdArg,
        yes: Annotated[
            bool, typer.Option("--yes", help="Really delete (default: dry run).")
        ] = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Delete a document: a dry run that reports what would happen unless --yes."""
        graph, target = _open(brain)
        plan = graph.delete(target, doc_id, actor=ACTOR, confirm=yes)
        if json_:
            emit_json(plan)
            return
        verb = "deleted" if plan.deleted else "would delete"
        out.print(f"{verb} {escape(plan.document.path)} (its versions are kept)")
        for e in plan.backlinks:
            out.print(f"  [yellow]{escape(e.source)}[/yellow] links to it ({e.type})")
        if not plan.deleted:
            err.print("dry run: nothing changed; add --yes to delete")


DirArg = Annotated[
    Path, typer.Argument(help="A directory of Markdown files.", file_okay=False, dir_okay=True)
]


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


def _register_transfer(app: typer.Typer) -> None:
    @app.command("import")
    @exits_cleanly
    def import_(
        folder: DirArg,
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Read a folder of Markdown: brain documents byte for byte, plain notes (an
        Obsidian vault) as draft pages with their [[wikilinks]] as page links."""
        graph, target = _open(brain)
        report = GraphTransfer(graph).import_folder(target, folder, actor=ACTOR)
        _settle(target, no_wait)
        _transferred(report, json_)

    @app.command("export")
    @exits_cleanly
    def export(folder: DirArg, brain: BrainOption = None, json_: JsonOption = False) -> None:
        """Write every document to FOLDER/folder/id.md exactly as stored."""
        graph, target = _open(brain)
        _transferred(GraphTransfer(graph).export(target, folder), json_)

    @app.command("materialize")
    @exits_cleanly
    def materialize(
        folder: DirArg,
        force: Annotated[
            bool, typer.Option("--force", help="Discard edits not synced back yet.")
        ] = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Write the brain to a working directory (with a hidden manifest) to edit as files."""
        graph, target = _open(brain)
        _transferred(GraphTransfer(graph).materialize(target, folder, force=force), json_)

    @app.command("sync")
    @exits_cleanly
    def sync(
        folder: DirArg,
        no_wait: NoWaitOption = False,
        brain: BrainOption = None,
        json_: JsonOption = False,
    ) -> None:
        """Bring a materialized directory's edits, new files and deletions back; a document
        that changed in the brain since is a conflict, and nothing is overwritten."""
        graph, target = _open(brain)
        report = GraphTransfer(graph).sync(target, folder, actor=ACTOR)
        _settle(target, no_wait)
        _transferred(report, json_)

    @app.command("doctor")
    @exits_cleanly
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
        """Check the graph: duplicate ids, parse errors, invalid documents, broken links,
        relations and citations, alias collisions, orphans, weak provenance, nonstandard
        source refs; then write, index and find a page in a scratch brain."""
        graph, target = _open(brain)
        loci = service()

        def settle(scratch: Brain) -> None:
            loci.wait_for(scratch, [d.id for d in loci.documents(scratch, status="processing")])

        checker = Doctor(graph, settle)
        checkup = (
            checker.check_directory(folder, roundtrip=not no_roundtrip)
            if folder is not None
            else checker.check_brain(target, roundtrip=not no_roundtrip)
        )
        _doctor_report(checkup, json_)
