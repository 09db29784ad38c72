"""Shared CLI plumbing: common options and building the service once per command."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Annotated

import typer

from loci.errors import InvalidInput, NotFound

if TYPE_CHECKING:
    from loci.auth.accounts import Accounts
    from loci.auth.people import People
    from loci.config import Settings
    from loci.integrations.slack_links import SlackLinks
    from loci.integrations.webhooks import Webhooks
    from loci.models import Brain
    from loci.service import Loci

BrainOption = Annotated[
    str | None,
    typer.Option("--brain", "-b", help="Brain to use (default: the default brain); it must exist."),
]
# For commands that add things: naming a brain that does not exist yet starts it.
NewBrainOption = Annotated[
    str | None,
    typer.Option(
        "--brain", "-b", help="Brain to add to (default: the default brain); created if new."
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


def settings_or_error() -> Settings:
    """Settings, or one clear line naming the setting that is wrong."""
    # Imported here, not at the top: `loci --version` and `--help` need no settings.
    from pydantic import ValidationError
    from pydantic_settings import SettingsError

    from loci.config import load_settings

    try:
        return load_settings()
    except ValidationError as error:
        first = error.errors()[0]
        field = "_".join(str(part) for part in first["loc"]).upper()
        raise InvalidInput(f"invalid setting LOCI_{field}: {first['msg']}") from None
    except SettingsError as error:
        raise InvalidInput(f"invalid setting: {error}") from None


@lru_cache(maxsize=1)
def service() -> Loci:
    from loci.app import build_service

    return build_service(settings_or_error())


# What a command works with besides the service: assembled in `loci.app`, received here.
def accounts() -> Accounts:
    from loci.app import build_accounts

    return build_accounts(service())


def people() -> People:
    from loci.app import build_people

    return build_people(accounts())


def slack_links() -> SlackLinks:
    from loci.app import build_slack_links

    return build_slack_links(accounts())


def webhooks() -> Webhooks:
    from loci.app import build_webhooks

    return build_webhooks(settings_or_error(), service())


def existing_brain(name: str | None) -> Brain:
    """The brain a reading (or editing) command works in. An unknown name is an error, never a
    new empty brain: `loci list --brain typo` would otherwise answer "nothing" and keep "typo"."""
    try:
        return service().existing_brain(name)
    except NotFound:
        raise NotFound(
            f"no brain {name!r} (create it with `loci brains create {name}`;"
            " `loci brains` lists them)"
        ) from None


def brain_to_fill(name: str | None) -> Brain:
    """The brain an adding command writes to, created on first use (its name checked)."""
    return service().brain(name)
