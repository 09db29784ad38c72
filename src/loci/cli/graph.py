"""`loci brain …`: the brain graph's documents, links and timeline (pages people and agents write).

Thin over `loci.graph.service.BrainGraph` (and `transfer` for import, export, materialize and
sync, `doctor` for the health check). Writes record the actor "cli", read the current
version and write against its hash in one call (`--expected-hash` pins the version you saw),
then wait until search has indexed the change unless `--no-wait`.
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli.context import BrainOption, JsonOption, NewBrainOption
from loci.cli.errors import exits_cleanly
from loci.cli.graph_common import ACTOR, open_graph, settle
from loci.cli.graph_files import register_files
from loci.cli.output import emit_json, err, out, render_snippet
from loci.cli.waiting import WaitOption
from loci.graph.records import GraphEdge
from loci.graph.results import Summary, Written
from loci.models import Brain
from loci.nul import refuse_nul

ExpectedHash = Annotated[
    str | None,
    typer.Option("--expected-hash", help="Refuse the edit unless the document is at this hash."),
]
IdArg = Annotated[str, typer.Argument(help="Document id (or its exact title or an alias).")]
IncludeMerged = Annotated[bool, typer.Option("--include-merged", help="Also merged tombstones.")]
IncludeArchived = Annotated[
    bool, typer.Option("--include-archived", help="Also archived documents.")
]


def _text(value: str | None) -> str:
    text = sys.stdin.read() if value in (None, "-") else value or ""
    refuse_nul("the text", text)
    return text


def _written(verb: str, document: Summary, json_: bool, changed: bool = True) -> None:
    if json_:
        from loci.wire.graph import GraphWrittenOut

        emit_json(GraphWrittenOut.of(Written(document, changed)))
        return
    if not changed:
        out.print(f"unchanged: {escape(document.path)} already has that")
        return
    out.print(
        f"{verb} {escape(document.path)} [dim]({document.status} · "
        f"hash {document.content_hash[:12]})[/dim]"
    )


def _settled(
    verb: str, done: Summary | Written, target: Brain, wait: bool | None, json_: bool
) -> None:
    """After a one-page write: let search catch up (unless --no-wait), then report it."""
    settle(target, wait)
    if isinstance(done, Written):
        _written(verb, done.document, json_, done.changed)
    else:
        _written(verb, done, json_)


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
        help="The graph inside one brain: Markdown pages and evidence with typed links and a"
        " timeline (`loci brains` lists, creates, renames and deletes brains).",
        no_args_is_help=True,
    )
    app.add_typer(brain_app, name="brain")
    _register_reads(brain_app)
    _register_writes(brain_app)
    register_files(brain_app)


def _register_reads(app: typer.Typer) -> None:
    app.command("get")(exits_cleanly(get))
    app.command("list")(exits_cleanly(list_))
    app.command("query")(exits_cleanly(query))
    app.command("timeline")(exits_cleanly(timeline))
    app.command("folder")(exits_cleanly(folder))
    app.command("history")(exits_cleanly(history))


def _register_writes(app: typer.Typer) -> None:
    app.command("create")(exits_cleanly(create))
    app.command("rewrite")(exits_cleanly(rewrite))
    app.command("set")(exits_cleanly(set_))
    app.command("append-timeline")(exits_cleanly(append_timeline))
    app.command("append-evidence")(exits_cleanly(append_evidence))
    app.command("alias")(exits_cleanly(alias))
    app.command("link")(exits_cleanly(link))
    app.command("merge")(exits_cleanly(merge))
    app.command("move")(exits_cleanly(move))
    app.command("delete")(exits_cleanly(delete))


def get(doc_id: IdArg, brain: BrainOption = None, json_: JsonOption = False) -> None:
    """Print a document's Markdown, then its links and backlinks."""
    graph, target = open_graph(brain)
    page = graph.get(target, doc_id)
    if json_:
        from loci.wire.graph import GraphPageOut

        emit_json(GraphPageOut.of(page))
        return
    sys.stdout.write(page.content)
    _edges("links", page.links, incoming=False)
    _edges("backlinks", page.backlinks, incoming=True)


def list_(
    folder: Annotated[str | None, typer.Option("--folder", help="This folder and below.")] = None,
    doc_type: Annotated[str | None, typer.Option("--type", help="Only this type.")] = None,
    status: Annotated[str | None, typer.Option("--status", help="Only this status.")] = None,
    include_merged: IncludeMerged = False,
    include_archived: IncludeArchived = False,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Documents by folder, type or status (merged and archived hidden unless asked)."""
    graph, target = open_graph(brain)
    found = graph.list_documents(
        target, folder=folder, doc_type=doc_type, status=status,
        include_merged=include_merged, include_archived=include_archived,
    )  # fmt: skip
    if json_:
        from loci.wire.graph import GraphSummaryOut

        emit_json([GraphSummaryOut.of(s) for s in found])
    elif not found:
        out.print("no brain documents yet — create one with `loci brain create`")
    else:
        out.print(_summaries(found))


def query(
    text: Annotated[str, typer.Argument(help="What you are looking for.")],
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=30, help="At most this many hits.")
    ] = 10,
    include_merged: IncludeMerged = False,
    include_archived: IncludeArchived = False,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Hybrid search over pages and evidence; each hit with its links."""
    graph, target = open_graph(brain)
    hits = graph.query(
        target, text, limit=limit, include_merged=include_merged,
        include_archived=include_archived,
    )  # fmt: skip
    if json_:
        from loci.wire.graph import GraphHitOut

        hits_out = [GraphHitOut.of(h) for h in hits]
        emit_json({"query": text, "brain": target.name, "hits": hits_out})
        return
    if not hits:
        out.print("no matches")
    for number, hit in enumerate(hits, start=1):
        d = hit.document
        out.print(
            f"[bold]{number}. {escape(d.id)}[/bold] {escape(d.title)} "
            f"[dim]{d.type} · {d.status} · score {hit.score:.3f} · {hit.matched_by}[/dim]"
        )
        out.print(render_snippet(hit.snippet, hit.highlights))
        if hit.path:
            out.print("   [dim]reached through " + escape(" → ".join(hit.path)) + "[/dim]")
        _edges("   links", hit.links, incoming=False)


def timeline(
    doc_id: Annotated[str | None, typer.Argument(help="One document (default: all).")] = None,
    since: Annotated[str | None, typer.Option("--since", help="On or after (ISO date).")] = None,
    until: Annotated[str | None, typer.Option("--until", help="Before (ISO date).")] = None,
    limit: Annotated[
        int, typer.Option("--limit", "-n", min=1, max=1000, help="At most this many entries.")
    ] = 100,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Timeline entries, newest first."""
    graph, target = open_graph(brain)
    entries = graph.timeline(target, doc_id, since=since, until=until, limit=limit)
    if json_:
        from loci.wire.graph import GraphTimelineEntryOut

        emit_json([GraphTimelineEntryOut.of(e) for e in entries])
        return
    for e in entries:
        source = f" — {e.source}" if e.source else ""
        out.print(f"{e.at}  [bold]{escape(e.doc_id)}[/bold]  {escape(e.text + source)}")


def folder(brain: BrainOption = None, json_: JsonOption = False) -> None:
    """The folder tree with document counts (in the folder · with its subfolders)."""
    graph, target = open_graph(brain)
    folders = graph.folders(target)
    if json_:
        from loci.wire.graph import GraphFolderOut

        emit_json([GraphFolderOut.of(f) for f in folders])
        return
    for f in folders:
        depth = f.folder.count("/")
        name = f.folder.rsplit("/", 1)[-1]
        out.print(f"{'  ' * depth}{escape(name)}/  [dim]{f.documents} · {f.total}[/dim]")


def history(doc_id: IdArg, brain: BrainOption = None, json_: JsonOption = False) -> None:
    """The versions writes replaced or deleted, newest first, with who and when."""
    graph, target = open_graph(brain)
    versions = graph.history(target, doc_id)
    if json_:
        from loci.wire.graph import GraphVersionOut

        emit_json([GraphVersionOut.of(v) for v in versions])
        return
    for v in versions:
        out.print(
            f"#{v.id}  {v.created_at[:19].replace('T', ' ')}  {escape(v.action)} by "
            f"{escape(v.actor)}  [dim]replaced {v.content_hash[:12]}[/dim]"
        )


def create(
    doc_type: Annotated[str | None, typer.Option("--type", help="person, company, …")] = None,
    title: Annotated[str | None, typer.Option("--title", help="The page's title.")] = None,
    folder: Annotated[str | None, typer.Option("--folder", help="Default: per type.")] = None,
    doc_id: Annotated[str | None, typer.Option("--id", help="Default: the title's slug.")] = None,
    status: Annotated[str | None, typer.Option("--status", help="Default: draft.")] = None,
    text: Annotated[
        str | None,
        typer.Option("--text", help="Compiled truth, or a whole Markdown document; - reads stdin."),
    ] = "",
    wait: WaitOption = None,
    brain: NewBrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Create a document (validated; refused with every problem listed)."""
    graph, target = open_graph(brain, adding=True)
    done = graph.create(
        target, actor=ACTOR, doc_type=doc_type, title=title, folder=folder,
        doc_id=doc_id, status=status, text=_text(text) if text == "-" else text or "",
    )  # fmt: skip
    _settled("created", done, target, wait, json_)


def rewrite(
    doc_id: IdArg,
    text: Annotated[str, typer.Argument(help="The new compiled truth; - reads stdin.")],
    expected_hash: ExpectedHash = None,
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Replace the compiled truth; frontmatter and timeline stay."""
    graph, target = open_graph(brain)
    done = graph.rewrite(target, doc_id, _text(text), actor=ACTOR, expected_hash=expected_hash)
    _settled("rewrote", done, target, wait, json_)


def set_(
    doc_id: IdArg,
    assignments: Annotated[
        list[str],
        typer.Argument(
            help="key=value (title, type, status, folder, aliases, relations, sources)."
        ),
    ],
    expected_hash: ExpectedHash = None,
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Set frontmatter fields; lists comma-separated, relations as type:target."""
    graph, target = open_graph(brain)
    done = graph.set_fields(target, doc_id, assignments, actor=ACTOR, expected_hash=expected_hash)
    _settled("updated", done, target, wait, json_)


def append_timeline(
    doc_id: IdArg,
    text: Annotated[str, typer.Argument(help="What happened.")],
    at: Annotated[str | None, typer.Option("--at", help="ISO date (default: today).")] = None,
    source: Annotated[str | None, typer.Option("--source", help="provider:id")] = None,
    expected_hash: ExpectedHash = None,
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Add a dated timeline entry (the same entry twice is kept once)."""
    graph, target = open_graph(brain)
    done = graph.append_timeline(
        target, doc_id, text, actor=ACTOR, at=at, source=source, expected_hash=expected_hash
    )
    _settled("appended to", done, target, wait, json_)


def append_evidence(
    doc_id: IdArg,
    text: Annotated[str, typer.Argument(help="The text to snapshot; - reads stdin.")],
    title: Annotated[str, typer.Option("--title", help="What the evidence is.")],
    source: Annotated[str | None, typer.Option("--source", help="provider:id")] = None,
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Snapshot text into evidence/ and cite it from the page's timeline."""
    graph, target = open_graph(brain)
    evidence, page = graph.append_evidence(
        target, doc_id, _text(text), title=title, actor=ACTOR, source=source
    )
    settle(target, wait)
    if json_:
        from loci.wire.graph import GraphEvidenceOut, GraphSummaryOut

        emit_json(
            GraphEvidenceOut(
                evidence=GraphSummaryOut.of(evidence), document=GraphSummaryOut.of(page)
            )
        )
        return
    _written("snapshotted", evidence, False)
    _written("cited from", page, False)


def alias(
    doc_id: IdArg,
    name: Annotated[str, typer.Argument(help="Another name for it.")],
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Add an alias (refused if it already names another document)."""
    graph, target = open_graph(brain)
    done = graph.alias(target, doc_id, name, actor=ACTOR)
    _settled("aliased", done, target, wait, json_)


def link(
    doc_id: IdArg,
    relation: Annotated[str, typer.Argument(help="Relation type, e.g. works_at.")],
    to: Annotated[str, typer.Argument(help="The document it relates to.")],
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Add a typed relation to another document."""
    graph, target = open_graph(brain)
    done = graph.link(target, doc_id, relation, to, actor=ACTOR)
    _settled("linked", done, target, wait, json_)


def merge(
    source: Annotated[str, typer.Argument(help="The document to fold in (becomes a tombstone).")],
    into: Annotated[str, typer.Argument(help="The document that survives.")],
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Fold one document into another: aliases and timeline move, a tombstone stays."""
    graph, target = open_graph(brain)
    done = graph.merge(target, source, into, actor=ACTOR)
    _settled(f"merged {escape(source)} into", done, target, wait, json_)


def move(
    doc_id: IdArg,
    folder: Annotated[str | None, typer.Option("--folder", help="The new folder.")] = None,
    new_id: Annotated[str | None, typer.Option("--id", help="The new id (links follow).")] = None,
    expected_hash: ExpectedHash = None,
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Move to another folder and/or rename; links from other pages are rewritten."""
    graph, target = open_graph(brain)
    done = graph.move(
        target, doc_id, actor=ACTOR, folder=folder, new_id=new_id, expected_hash=expected_hash
    )
    _settled("moved to", done, target, wait, json_)


def delete(
    doc_id: IdArg,
    yes: Annotated[bool, typer.Option("--yes", help="Really delete (default: dry run).")] = False,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Delete a document: a dry run that reports what would happen unless --yes."""
    graph, target = open_graph(brain)
    plan = graph.delete(target, doc_id, actor=ACTOR, confirm=yes)
    if json_:
        from loci.wire.graph import GraphDeleteOut

        emit_json(GraphDeleteOut.of(plan))
        return
    verb = "deleted" if plan.deleted else "would delete"
    out.print(f"{verb} {escape(plan.document.path)} (its versions are kept)")
    for e in plan.backlinks:
        out.print(f"  [yellow]{escape(e.source)}[/yellow] links to it ({e.type})")
    if not plan.deleted:
        err.print("dry run: nothing changed; add --yes to delete")
