"""`loci users` and `loci tokens`: accounts managed from the machine that holds the data.

Whoever can run the CLI on the data directory is the workspace's administrator; these commands
act directly on the store, with no server and no token needed.
"""

from __future__ import annotations

import datetime as dt
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from loci.auth.accounts import Accounts, IssuedToken
from loci.cli.context import JsonOption, service
from loci.cli.errors import exits_cleanly
from loci.cli.output import emit_json, err, out
from loci.errors import InvalidInput
from loci.models import User

UserOption = Annotated[
    str | None, typer.Option("--user", "-u", help="Whose tokens (default: the first admin).")
]


def _accounts() -> Accounts:
    return Accounts(service().store)


def _user(accounts: Accounts, name: str | None) -> User:
    if name:
        return accounts.user(name)
    admins = [u for u in accounts.users() if u.is_admin]
    if not admins:
        raise InvalidInput("no accounts yet: `loci serve` creates the owner on first start")
    return admins[0]


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

    @users.command("add")
    @exits_cleanly
    def add_user(
        name: Annotated[str, typer.Argument(help="Sign-in name.")],
        admin: Annotated[bool, typer.Option("--admin", help="May add users.")] = False,
        json_: JsonOption = False,
    ) -> None:
        """Add a person; prints their first sign-in token, once."""
        _, issued = _accounts().add_user(name, is_admin=admin)
        _show_issued(issued, json_)

    @users.command("list")
    @exits_cleanly
    def list_users(json_: JsonOption = False) -> None:
        """Everyone who can sign in."""
        found = _accounts().users()
        if json_:
            emit_json(found)
            return
        table = Table("id", "name", "admin", "created", box=None)
        for u in found:
            table.add_row(str(u.id), escape(u.name), "yes" if u.is_admin else "", u.created_at)
        out.print(table)

    @tokens.command("create")
    @exits_cleanly
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
        accounts = _accounts()
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

    @tokens.command("list")
    @exits_cleanly
    def list_tokens(user: UserOption = None, json_: JsonOption = False) -> None:
        """A user's tokens: prefix, scope, brains, expiry, last use."""
        accounts = _accounts()
        found = accounts.tokens(_user(accounts, user))
        if json_:
            emit_json(found)
            return
        table = Table("id", "name", "prefix", "scope", "brains", "expires", "last used", box=None)
        for t in found:
            state = "revoked" if t.revoked_at is not None else _when(t.expires_at)
            brains = "all" if t.brain_ids is None else ",".join(map(str, t.brain_ids))
            table.add_row(
                str(t.id), escape(t.name), t.prefix + "…", t.scope, brains, state,
                _when(t.last_used_at),
            )  # fmt: skip
        out.print(table)

    @tokens.command("revoke")
    @exits_cleanly
    def revoke_token(
        token_id: Annotated[int, typer.Argument(help="Token id (see `loci tokens list`).")],
        user: UserOption = None,
    ) -> None:
        """Revoke a token; requests with it fail from the next one on."""
        accounts = _accounts()
        accounts.revoke(_user(accounts, user), token_id)
        err.print(f"token {token_id} revoked")
