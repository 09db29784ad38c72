"""`loci models list`: the local embedding models, what each reads, whether it is installed, how
fast it embedded here, and which brains use it (`loci brain create --model`, `loci reindex
--embeddings --model`)."""

from __future__ import annotations

from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli.context import JsonOption, service, settings_or_error
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, out


def register(app: typer.Typer) -> None:
    models = typer.Typer(help="The local embedding models a brain can use.", no_args_is_help=True)
    app.add_typer(models, name="models")

    models.command("list")(exits_cleanly(list_models))
    models.command("add")(exits_cleanly(add_model))


def _rows(measure: bool) -> list[dict[str, Any]]:
    from loci.embed.catalog import all_models
    from loci.embed.installed import installed, measure_speed, measured_speeds

    settings = settings_or_error()
    loci = service()
    brains = loci.brains()
    rows = []
    for model in all_models(settings.models_dir):
        there = installed(model, settings.models_dir)
        if measure and there.ready:
            measure_speed(model.name, loci.embedders.named(model.name), settings.models_dir)
        speed = measured_speeds(settings.models_dir).get(model.name, {})
        default = settings.embedder == "local" and settings.embed_local_model == model.name
        rows.append(
            {
                "name": model.name,
                "model_id": model.model_id,
                "languages": sorted(model.languages) if model.languages is not None else None,
                "dimensions": model.dimensions,
                "what": model.what,
                "installed": there.ready,
                "install": there.how,
                "default": default,
                "chunks_per_cpu_s": speed.get("chunks_per_cpu_s"),
                "measured_at": speed.get("measured_at"),
                "brains": [
                    b.name
                    for b in brains
                    if b.embedder_model == model.model_id or (b.embedder_model is None and default)
                ],
            }
        )
    return rows


def list_models(
    measure: Annotated[
        bool,
        typer.Option(
            "--measure", help="Embed a few passages with each installed model to time it."
        ),
    ] = False,
    json_: JsonOption = False,
) -> None:
    """Each local model: name, languages (ISO 639-1), dimensions, installed or how to
    install it, chunks per CPU-second measured here, and the brains using it."""
    rows = _rows(measure)
    if json_:
        emit_json(rows)
        return
    table = Table("name", "languages", "dims", "installed", "speed", "brains", box=None)
    for r in rows:
        languages = r["languages"]
        if languages is None:
            shown = "any"
        else:
            shown = ", ".join(languages) if len(languages) <= 6 else f"{len(languages)} languages"
        speed = r["chunks_per_cpu_s"]
        table.add_row(
            escape(r["name"] + (" (default)" if r["default"] else "")),
            shown,
            str(r["dimensions"]),
            "yes" if r["installed"] else escape(r["install"]),
            f"{speed}/CPU-s" if speed is not None else "-",
            escape(", ".join(r["brains"])) or "-",
        )
    out.print(table)
    if not measure and any(r["chunks_per_cpu_s"] is None and r["installed"] for r in rows):
        out.print("speed: `loci models list --measure` times each installed model here")


def add_model(
    repo: Annotated[str, typer.Argument(help="The hub repository, e.g. BAAI/bge-small-en-v1.5.")],
    revision: Annotated[
        str, typer.Option("--revision", help="A branch, tag or commit of the repository.")
    ] = "main",
    languages: Annotated[
        str,
        typer.Option(
            "--languages",
            help="The languages it reads, as ISO 639-1 codes (en,de) or * for every one:"
            " search trusts its vectors for those.",
        ),
    ] = "en",
    json_: JsonOption = False,
) -> None:
    """Fetch a sentence-transformers model (BERT family) from the Hugging Face hub, check
    its files against the hub's hashes and make it an int8 ONNX model, once. Then
    `loci brains create NAME --model REPO` uses it."""
    from dataclasses import asdict

    from loci.app import fetch_policy
    from loci.embed.hub import add_model as fetch_model

    settings = settings_or_error()
    codes = [c.strip().lower() for c in languages.split(",") if c.strip()]
    added = fetch_model(
        repo,
        settings.models_dir,
        fetch_policy(settings),
        revision=revision,
        endpoint=settings.hub_endpoint,
        languages=None if "*" in codes or not codes else codes,
    )
    if json_:
        emit_json(asdict(added))
        return
    out.print(
        f"added {escape(added.name)} at {added.revision[:12]}: {added.dimensions} dimensions,"
        f" {added.pooling} pooling; `loci brains create NAME --model {escape(added.name)}`"
    )
