"""Shared CLI plumbing: common options and building the service once per command."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

import typer
from pydantic import ValidationError
from pydantic_settings import SettingsError

from loci.app import build_service
from loci.config import Settings, load_settings
from loci.errors import InvalidInput
from loci.service import Loci

BrainOption = Annotated[
    str | None, typer.Option("--brain", "-b", help="Brain to use (default: the default brain).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]
NoWaitOption = Annotated[
    bool, typer.Option("--no-wait", help="Return at once; `loci worker` indexes later.")
]


def settings_or_error() -> Settings:
    """Settings, or one clear line naming the setting that is wrong."""
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
    return build_service(settings_or_error())
