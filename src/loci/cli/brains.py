"""`loci brains`: list, create, rename and delete the brains of this data directory.

A brain is the isolation boundary: every document, chunk and graph page lives in exactly one.
(`loci brain`, singular, works on the graph pages inside one brain.) Like `loci users`, these
commands act as the workspace's administrator, who can run the CLI on the data directory.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli.context import JsonOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, out
from loci.errors import NotFound
from loci.models import Brain

GRAPH_KINDS = ("page", "evidence")
NameArg = Annotated[str, typer.Argument(help="The brain's name.", show_default=False)]


class VisibilityChoice(StrEnum):
    restricted = "restricted"
    workspace = "workspace"


def _named(name: str) -> Brain:
    """An existing brain; unlike other commands, never makes the default one on the way."""
    found = service().find_brain(name)
    if found is None:
        raise NotFound(f"no brain {name!r} (`loci brains` lists them)")
    return found


def _row(brain: Brain) -> dict[str, Any]:
    loci = service()
    stats = loci.brain_stats(brain)
    return {
        "id": brain.id,
        "name": brain.name,
        "default": brain.name == loci.settings.default_brain,
        "documents": sum(stats.documents_by_status.values()),
        "chunks": stats.chunks,
        "graph_pages": sum(stats.documents_by_kind.get(k, 0) for k in GRAPH_KINDS),
        "embedder_model": brain.embedder_model,
        "embedder_dims": brain.embedder_dims,
        "visibility": brain.visibility,
        "created_at": brain.created_at,
    }


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _contents(row: dict[str, Any]) -> str:
    nouns = (("documents", "document"), ("chunks", "chunk"), ("graph_pages", "graph page"))
    return ", ".join(_count(row[key], noun) for key, noun in nouns)


def _list(json_: bool) -> None:
    rows = [_row(b) for b in service().brains()]
    if json_:
        emit_json(rows)
        return
    if not rows:
        err.print(
            "no brains yet: the default brain is made on first use, "
            "`loci brains create NAME` makes another"
        )
        return
    table = Table("name", "documents", "chunks", "embedder", "visibility", "created", box=None)
    for r in rows:
        name = escape(r["name"]) + (" [dim](default)[/dim]" if r["default"] else "")
        model = r["embedder_model"]  # shown without its publisher; --json has it whole
        embedder = f"{escape(model.rsplit('/', 1)[-1])} ({r['embedder_dims']})" if model else "-"
        created = r["created_at"][:16].replace("T", " ")
        table.add_row(
            name, str(r["documents"]), str(r["chunks"]), embedder, r["visibility"], created
        )
    out.print(table)


def register(app: typer.Typer) -> None:
    brains = typer.Typer(
        help="List, create, rename and delete brains, the separate collections Loci keeps"
        " (`loci brain` works on the graph pages inside one).",
        invoke_without_command=True,
    )
    app.add_typer(brains, name="brains")

    brains.callback()(brains_default)
    brains.command("list")(exits_cleanly(list_brains))
    brains.command("create")(exits_cleanly(create))
    brains.command("rename")(exits_cleanly(rename))
    brains.command("rm")(exits_cleanly(remove))


def brains_default(ctx: typer.Context, json_: JsonOption = False) -> None:
    """`loci brains` alone lists them."""
    if ctx.invoked_subcommand is None:
        exits_cleanly(_list)(json_)
    elif json_:
        raise typer.BadParameter("put --json after the subcommand", param_hint="--json")


def list_brains(json_: JsonOption = False) -> None:
    """Every brain: documents, chunks, embedder, visibility, created."""
    _list(json_)


def create(
    name: NameArg,
    visibility: Annotated[
        VisibilityChoice,
        typer.Option(help="Who may read it on `loci serve`: members, or every user."),
    ] = VisibilityChoice.restricted,
    model: Annotated[
        str | None,
        typer.Option(
            "--model",
            help="The local embedding model of its vectors (`loci models list`); default:"
            " the configured one.",
        ),
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Create an empty brain (a name already taken is refused)."""
    row = _row(service().create_brain(name, visibility.value, model))
    if json_:
        emit_json(row)
        return
    out.print(f"created brain {escape(row['name'])} ({row['visibility']})")


def rename(
    old: Annotated[str, typer.Argument(help="Its name now.", show_default=False)],
    new: Annotated[str, typer.Argument(help="The new name.", show_default=False)],
    json_: JsonOption = False,
) -> None:
    """Rename a brain; its documents, index, tokens and members stay with it."""
    loci = service()
    renamed = loci.rename_brain(_named(old), new)
    row = _row(renamed)
    if json_:
        emit_json({"renamed_from": old, "brain": row})
    else:
        out.print(f"renamed brain {escape(old)} to {escape(renamed.name)}")
    if old == loci.settings.default_brain:
        err.print(
            f"note: commands without --brain now start a new, empty {escape(repr(old))} brain"
        )


def remove(
    name: NameArg,
    yes: Annotated[
        bool, typer.Option("--yes", help="Really delete (without it: only say what would go).")
    ] = False,
    json_: JsonOption = False,
) -> None:
    """Say what deleting a brain would remove; with --yes, delete it and everything in it."""
    loci = service()
    target = _named(name)
    row = _row(target)
    if yes:
        loci.delete_brain(target)
    if json_:
        emit_json({"deleted": yes, "brain": row})
        return
    if yes:
        out.print(f"deleted brain {escape(name)}: {_contents(row)}")
        return
    out.print(
        f"would delete brain {escape(name)}: {_contents(row)}, with their originals "
        "unless another brain keeps them. Nothing was deleted; add --yes to delete it."
    )
    if row["default"]:
        out.print(
            f"{escape(repr(name))} is the default brain: deleting it needs --yes like any "
            "other, and commands without --brain then start it again, empty."
        )
