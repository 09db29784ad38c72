"""`loci webhooks`: per-integration secrets that sign pushes to a brain's source route.

An administrator's command on the machine that holds the data. The secret is printed once, on
stdout (the notice goes to stderr), so `loci webhooks create … > file` captures just it.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli import context
from loci.cli.context import JsonOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, out


def _when(value: float | None) -> str:
    if value is None:
        return ""
    return "revoked " + dt.datetime.fromtimestamp(value, dt.UTC).strftime("%Y-%m-%d %H:%M")


def register(app: typer.Typer) -> None:
    webhooks = typer.Typer(
        help="Signed webhooks: secrets a provider signs its pushes with.", no_args_is_help=True
    )
    app.add_typer(webhooks, name="webhooks")

    webhooks.command("create")(exits_cleanly(create))
    webhooks.command("list")(exits_cleanly(list_secrets))
    webhooks.command("revoke")(exits_cleanly(revoke))


def create(
    brain: Annotated[str, typer.Option("--brain", "-b", help="The brain pushes go into.")],
    provider: Annotated[
        str, typer.Option("--provider", "-p", help="The provider slug in the push URL.")
    ],
    json_: JsonOption = False,
) -> None:
    """Create a signing secret for pushes to a brain's source route; printed once.

    Pushes go to /api/v1/brains/BRAIN/sources/PROVIDER."""
    from loci.integrations.webhooks import SIGNATURE_HEADER

    issued = context.webhooks().create(service().store.get_brain(brain), provider)
    if json_:
        emit_json({"webhook": issued.record, "secret": issued.secret})
        return
    err.print(
        f"Webhook secret #{issued.record.id} for {escape(brain)}/{escape(provider)}. It is "
        f"shown once — store it now. Sign each push with {SIGNATURE_HEADER}: "
        "t=<unix time>,v1=<hex HMAC-SHA256 of '<t>.<body>'>"
    )
    out.print(issued.secret)


def list_secrets(
    brain: Annotated[str | None, typer.Option("--brain", "-b", help="Only this brain's.")] = None,
    json_: JsonOption = False,
) -> None:
    """Webhook secrets: id, brain, provider, prefix (never the secret)."""
    target = service().store.get_brain(brain) if brain else None
    found = context.webhooks().list(target)
    if json_:
        emit_json(found)
        return
    table = Table("id", "brain", "provider", "prefix", "created", "state", box=None)
    for w in found:
        table.add_row(
            str(w.id), escape(w.brain_name), escape(w.provider), w.prefix + "…",
            w.created_at, _when(w.revoked_at) or "live",
        )  # fmt: skip
    out.print(table)


def revoke(
    secret_id: Annotated[int, typer.Argument(help="Secret id (see `loci webhooks list`).")],
) -> None:
    """Revoke a secret: pushes signed with it are refused (401) from now on."""
    context.webhooks().revoke(secret_id)
    err.print(f"webhook secret {secret_id} revoked")
