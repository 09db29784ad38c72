"""`loci slack`: which Loci user and brain each Slack user's messages are saved as and into.

Like `loci users`, an administrator's command on the machine that holds the data: it acts on
the store directly. The server's Slack settings (signing secret, bot token) are environment
settings, never arguments, so they stay out of shell history.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from loci.cli import context
from loci.cli.context import JsonOption
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, out

TeamOption = Annotated[
    str, typer.Option("--team", help="The Slack workspace id (T…), as in an event's team_id.")
]
SlackUserOption = Annotated[str, typer.Option("--user", help="The Slack user id (U…).")]


def register(app: typer.Typer) -> None:
    slack = typer.Typer(
        help="Slack capture: link Slack users to a Loci user and brain.", no_args_is_help=True
    )
    app.add_typer(slack, name="slack")

    slack.command("link")(exits_cleanly(link))
    slack.command("list")(exits_cleanly(list_links))
    slack.command("unlink")(exits_cleanly(unlink))


def link(
    team: TeamOption,
    user: SlackUserOption,
    as_user: Annotated[str, typer.Option("--as", help="The Loci user the messages are saved as.")],
    brain: Annotated[str, typer.Option("--brain", "-b", help="The brain they go into.")],
    json_: JsonOption = False,
) -> None:
    """Save this Slack user's messages as a Loci user into a brain.

    The Loci user must be able to write the brain; linking again moves the link."""
    identity = context.slack_links().link(team, user, as_user, brain)
    if json_:
        emit_json(identity)
        return
    err.print(
        f"Slack user {escape(team)}/{escape(user)} → {escape(identity.user_name)} in "
        f"brain {escape(identity.brain_name)}"
    )


def list_links(json_: JsonOption = False) -> None:
    """Every linked Slack user."""
    found = context.slack_links().list()
    if json_:
        emit_json(found)
        return
    table = Table("team", "slack user", "loci user", "brain", "linked", box=None)
    for i in found:
        table.add_row(
            escape(i.team_id), escape(i.slack_user_id), escape(i.user_name),
            escape(i.brain_name), i.created_at,
        )  # fmt: skip
    out.print(table)


def unlink(team: TeamOption, user: SlackUserOption) -> None:
    """Stop saving this Slack user's messages (they are refused from now on)."""
    context.slack_links().unlink(team, user)
    err.print(f"Slack user {escape(team)}/{escape(user)} unlinked")
