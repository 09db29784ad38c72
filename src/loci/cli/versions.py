"""`loci versions`: a document's earlier contents — list them, diff two, restore one, save one.

A file synced or added again after an edit, a note rewritten and a web page fetched again keep
the content they had as a numbered version (`LOCI_VERSIONS_KEEP` of them). `loci show ID
--versions` lists them too.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli.context import BrainOption, JsonOption, existing_brain, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, human_size, out
from loci.cli.waiting import WaitOption, index_now
from loci.errors import InvalidInput

if TYPE_CHECKING:
    from loci.models import Brain

DocumentArg = Annotated[int, typer.Argument(help="Document id (see `loci list`).")]


def _when(stamp: str) -> str:
    return stamp[:16].replace("T", " ")


def print_versions(target: Brain, document_id: int, json_: bool) -> None:
    """The document's contents, current first (`loci show ID --versions`, `versions list`)."""
    listed = service().versions.list(target, document_id)
    if json_:
        from loci.wire.versions import VersionListOut

        emit_json(VersionListOut.of(listed, target))
        return
    document = listed.document
    out.print(f"[bold]{escape(document.title or document.name)}[/bold]  (#{document.id})")
    table = Table("version", "saved", "replaced", "size", "sha256", "name", box=None)
    table.add_row(
        f"{listed.current} (current)",
        _when(listed.current_since),
        "",
        human_size(document.size_bytes),
        document.content_hash[:12],
        escape(document.name),
    )
    for v in listed.versions:
        table.add_row(
            str(v.number),
            _when(v.saved_at),
            _when(v.replaced_at),
            human_size(v.size_bytes),
            v.content_hash[:12],
            escape(v.name),
        )
    out.print(table)
    graph_id = document.metadata.get("graph_id")
    if document.kind in ("page", "evidence") and isinstance(graph_id, str):
        out.print(f"a page keeps its earlier texts in `loci brain history {escape(graph_id)}`")
    elif not listed.versions:
        out.print("no earlier versions: it has not been replaced since it was added")


def register(app: typer.Typer) -> None:
    versions = typer.Typer(help="A document's earlier contents: list, diff, restore, save.")
    app.add_typer(versions, name="versions")

    versions.command("list")(exits_cleanly(list_versions))
    versions.command("diff")(exits_cleanly(diff))
    versions.command("restore")(exits_cleanly(restore))
    versions.command("save")(exits_cleanly(save))


def list_versions(
    document_id: DocumentArg, brain: BrainOption = None, json_: JsonOption = False
) -> None:
    """List the document's versions with their dates, sizes and hashes, newest first."""
    print_versions(existing_brain(brain), document_id, json_)


def diff(
    document_id: DocumentArg,
    old: Annotated[int, typer.Argument(help="The earlier version's number.")],
    new: Annotated[
        int | None, typer.Argument(help="The later version's number (default: current).")
    ] = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """What changed between two versions, as a unified diff of their text."""
    target = existing_brain(brain)
    result = service().versions.diff(target, document_id, old, new)
    if json_:
        from loci.wire.versions import VersionDiffOut

        emit_json(VersionDiffOut.of(result))
    elif result.diff is None:
        out.print(escape(result.reason or "no diff"))
    elif not result.diff:
        out.print(f"versions {result.old} and {result.new} have the same text")
    else:
        out.print(escape(result.diff), end="")


def restore(
    document_id: DocumentArg,
    number: Annotated[int, typer.Argument(help="The version to make current again.")],
    wait: WaitOption = None,
    brain: BrainOption = None,
    json_: JsonOption = False,
) -> None:
    """Make an earlier version current again (same id); the content it replaces is kept
    as the newest version. A followed folder's file gets the restored bytes too (refused,
    with nothing changed, if the file changed since Loci last read it)."""
    loci = service()
    target = existing_brain(brain)
    restored = loci.versions.restore(target, document_id, number)
    waited = index_now(target, [document_id], wait) if restored.changed else None
    if waited:
        restored = replace(restored, document=waited[0])
    if json_:
        from loci.wire.versions import RestoredOut

        emit_json(RestoredOut.of(restored, target))
    elif not restored.changed:
        out.print(f"version {number} is the current content already; nothing changed")
    else:
        name = escape(restored.document.name)
        out.print(f"restored version {number} of {name} (#{document_id})")
        if restored.written_to is not None:
            out.print(f"  and wrote it to {escape(restored.written_to)}: the folder agrees")
        elif restored.document.gone_at is not None:
            out.print(f"  in Loci only: its file {escape(str(restored.document.source_path))}"
                      " was deleted")  # fmt: skip


def save(
    document_id: DocumentArg,
    number: Annotated[int, typer.Argument(help="The version to save.")],
    to: Annotated[Path, typer.Argument(help="The file to write (it must not exist).")],
    brain: BrainOption = None,
) -> None:
    """Write a version's exact bytes to a new file."""
    version, data = service().versions.content(existing_brain(brain), document_id, number)
    try:
        with to.open("xb") as handle:  # never overwrite a file the person has
            handle.write(data)
    except FileExistsError:
        raise InvalidInput(f"{to} exists; name a new file") from None
    except OSError as error:
        raise InvalidInput(f"cannot write {to}: {error.strerror}") from None
    out.print(f"wrote version {version.number} ({human_size(len(data))}) to {escape(str(to))}")
