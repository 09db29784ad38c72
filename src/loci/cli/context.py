"""Shared CLI plumbing: common options and building the service once per command."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated

import typer

from loci.app import build_service
from loci.config import load_settings
from loci.service import Loci

BrainOption = Annotated[
    str | None, typer.Option("--brain", "-b", help="Brain to use (default: the default brain).")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout.")]


@lru_cache(maxsize=1)
def service() -> Loci:
    return build_service(load_settings())
