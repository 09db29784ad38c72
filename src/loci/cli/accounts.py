"""`loci users` and `loci tokens`: accounts managed from the machine that holds the data.

Whoever can run the CLI on the data directory is the workspace's administrator; these commands
act directly on the store, with no server and no token needed.
"""

from __future__ import annotations

import datetime as dt
import getpass
import sys
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from loci.auth.records import INVITE_DAYS, User
from loci.cli import context
from loci.cli.context import JsonOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, out
from loci.errors import InvalidInput

if TYPE_CHECKING:  # the accounts service loads when a command runs, not at start-up
    from loci.auth.accounts import Accounts, IssuedToken

UserOption = Annotated[
    str | None, typer.Option("--user", "-u", help="Whose tokens (default: the first admin).")
]


def _user(accounts: Accounts, name: str | None) -> User:
    if name:
        return accounts.user(name)
    admins = [u for u in accounts.users() if u.is_admin]
    if not admins:
        raise InvalidInput("no accounts yet: `loci serve` creates the owner on first start")
    return admins[0]


def _read_password(name: str) -> str:
    """Prompted twice without echo on a terminal; one line of stdin otherwise (scripts). Never
    an argument, which would sit in the shell history and the process list."""
    if sys.stdin.isatty():
        first = getpass.getpass(f"New password for {name}: ")
        if getpass.getpass("Again: ") != first:
            raise InvalidInput("the two passwords differ")
        return first
    return sys.stdin.readline().rstrip("\r\n")


def _when(value: float | None) -> str:
    if value is None:
        return "-"
    return dt.datetime.fromtimestamp(value, dt.UTC).strftime("%Y-%m-%d %H:%M")


def _show_issued(issued: IssuedToken, json_: bool) -> None:
    if json_:
        emit_json({"token": issued.token, "secret": issued.secret})
        return
    err.print("Token created. It is shown once — store it now:")
    out.print(issued.secret)


def register(app: typer.Typer) -> None:
    users = typer.Typer(help="People who can sign in to `loci serve`.", no_args_is_help=True)
    tokens = typer.Typer(help="API tokens: create, list, revoke.", no_args_is_help=True)
    app.add_typer(users, name="users")
    app.add_typer(tokens, name="tokens")

    users.command("add")(exits_cleanly(add_user))
    users.command("invite")(exits_cleanly(invite_user))
    users.command("passwd")(exits_cleanly(set_password))
    users.command("email")(exits_cleanly(set_email))
    users.command("disable")(exits_cleanly(disable_user))
    users.command("enable")(exits_cleanly(enable_user))
    users.command("list")(exits_cleanly(list_users))
    tokens.command("create")(exits_cleanly(create_token))
    tokens.command("list")(exits_cleanly(list_tokens))
    tokens.command("revoke")(exits_cleanly(revoke_token))


def add_user(
    name: Annotated[str, typer.Argument(help="Sign-in name.")],
    admin: Annotated[bool, typer.Option("--admin", help="May add users.")] = False,
    json_: JsonOption = False,
) -> None:
    """Add a person; prints their first sign-in token, once."""
    _, issued = context.accounts().add_user(name, is_admin=admin)
    _show_issued(issued, json_)


def invite_user(
    name: Annotated[str, typer.Argument(help="Sign-in name.")],
    email: Annotated[str | None, typer.Option("--email", help="Their email (kept).")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="May manage people.")] = False,
    days: Annotated[
        float, typer.Option("--days", help="The link expires after this many days.")
    ] = INVITE_DAYS,
    server_url: Annotated[
        str, typer.Option("--server-url", help="The address people open Loci at.")
    ] = "http://127.0.0.1:8765",
    json_: JsonOption = False,
) -> None:
    """Invite a person: prints a one-time link where they choose a password."""
    issued = context.people().invite(
        name, email=email, role="admin" if admin else "member", days=days
    )
    link = server_url.rstrip("/") + issued.path
    if json_:
        emit_json({"user": issued.user, "invite": issued.invite, "link": link})
        return
    err.print(
        f"Invite for {escape(issued.user.name)}, valid until"
        f" {_when(issued.invite.expires_at)} UTC. It is shown once — send it now:"
    )
    out.print(link, soft_wrap=True)


def set_password(name: Annotated[str, typer.Argument(help="Whose password.")]) -> None:
    """Set someone's password (asked for, or read from stdin); signs out their browsers."""
    people = context.people()
    user = people.store.find_user(name)
    people.set_password(user.name, _read_password(user.name))
    err.print(f"password set for {escape(user.name)}")


def set_email(
    name: Annotated[str, typer.Argument(help="Whose e-mail.")],
    email: Annotated[str, typer.Argument(help="Their address.")],
) -> None:
    """Record someone's e-mail: single sign-on with link_by_email joins them by it."""
    user = context.people().set_email(name, email)
    err.print(f"e-mail of {escape(user.name)} set")


def disable_user(name: Annotated[str, typer.Argument(help="Who.")]) -> None:
    """Disable a person: their tokens and sessions stop working at once."""
    context.people().update(name, by=None, disabled=True)
    err.print(f"{escape(name)} is disabled; their tokens are revoked")


def enable_user(name: Annotated[str, typer.Argument(help="Who.")]) -> None:
    """Let a disabled person sign in again (with their password; old tokens stay revoked)."""
    context.people().update(name, by=None, disabled=False)
    err.print(f"{escape(name)} may sign in again")


def list_users(json_: JsonOption = False) -> None:
    """Everyone who can sign in."""
    found = context.accounts().users()
    if json_:
        emit_json(found)
        return
    table = Table("id", "name", "admin", "password", "state", "created", box=None)
    for u in found:
        table.add_row(
            str(u.id), escape(u.name), "yes" if u.is_admin else "",
            "set" if u.has_password else "", "disabled" if u.disabled else "", u.created_at,
        )  # fmt: skip
    out.print(table)


def create_token(
    name: Annotated[str, typer.Option("--name", help="What the token is for.")] = "cli",
    user: UserOption = None,
    read_only: Annotated[
        bool, typer.Option("--read-only", help="May read but never write.")
    ] = False,
    brain: Annotated[
        list[str] | None, typer.Option("--brain", "-b", help="Limit to this brain (repeat).")
    ] = None,
    expires_days: Annotated[
        float | None, typer.Option("--expires-days", help="Expire after this many days.")
    ] = None,
    json_: JsonOption = False,
) -> None:
    """Create an API token (prefixed `loci_`, stored only as a hash)."""
    accounts = context.accounts()
    owner = _user(accounts, user)
    brain_ids = [service().store.get_brain(b).id for b in brain] if brain else None
    issued = accounts.issue_token(
        owner,
        name=name,
        scope="read" if read_only else "write",
        brain_ids=brain_ids,
        expires_in_days=expires_days,
    )
    _show_issued(issued, json_)


def list_tokens(user: UserOption = None, json_: JsonOption = False) -> None:
    """A user's tokens: prefix, scope, brains, expiry, last use."""
    accounts = context.accounts()
    found = accounts.tokens(_user(accounts, user))
    if json_:
        emit_json(found)
        return
    table = Table("id", "name", "prefix", "scope", "brains", "expires", "last used", box=None)
    for t in found:
        state = "revoked" if t.revoked_at is not None else _when(t.expires_at)
        brains = "all" if t.brain_ids is None else ",".join(map(str, t.brain_ids))
        # An OAuth application's token renews itself: its expiry is the current secret's.
        name = escape(t.name) + (" [dim](OAuth app)[/dim]" if t.client_id else "")
        table.add_row(
            str(t.id), name, t.prefix + "…", t.scope, brains, state, _when(t.last_used_at),
        )  # fmt: skip
    out.print(table)


def revoke_token(
    token_id: Annotated[int, typer.Argument(help="Token id (see `loci tokens list`).")],
    user: UserOption = None,
) -> None:
    """Revoke a token; requests with it fail from the next one on."""
    accounts = context.accounts()
    accounts.revoke(_user(accounts, user), token_id)
    err.print(f"token {token_id} revoked")
