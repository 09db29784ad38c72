"""`loci migrate --to postgresql://…`: move the embedded SQLite data into PostgreSQL."""

from __future__ import annotations

from typing import Annotated

import typer

from loci.cli.context import JsonOption, settings_or_error
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, out
from loci.errors import InvalidInput, NotFound


def register(app: typer.Typer) -> None:
    app.command("migrate")(exits_cleanly(migrate))


def migrate(
    to: Annotated[str, typer.Option("--to", help="postgresql:// URL of an empty database.")],
    blobs: Annotated[
        bool,
        typer.Option(
            "--blobs-in-database/--blobs-on-disk",
            help="Also copy the original files into PostgreSQL (LOCI_BLOBS=database).",
        ),
    ] = False,
    json_: JsonOption = False,
) -> None:
    """Copy this data directory's SQLite database into PostgreSQL and verify the counts.

    Ids, vectors (not re-embedded), the graph, users and tokens are copied; then the row
    counts of both are compared."""
    from loci.app import open_migration
    from loci.store.postgres import is_postgres_url
    from loci.store.postgres.transfer import copy_blobs, copy_sqlite_to_postgres

    settings = settings_or_error()
    if not is_postgres_url(to):
        raise InvalidInput("--to must be a postgresql:// URL")
    if not settings.database_path.exists():
        raise NotFound(f"no SQLite database in {settings.home} to migrate")
    source, target = open_migration(settings, to)
    started: set[str] = set()

    def progress(table: str, _rows: int) -> None:
        if table not in started:
            started.add(table)
            err.print(f"copying {table}…")

    try:
        counts = copy_sqlite_to_postgres(source, target, progress)
        if blobs:
            counts["blobs"] = copy_blobs(settings.blob_dir, target)
    finally:
        source.close()
        target.close()
    if json_:
        emit_json({"copied": counts})
        return
    for table, rows in counts.items():
        out.print(f"{table:16} {rows:>10}")
    out.print("counts verified; set LOCI_DATABASE_URL to the new database to use it")
