"""Turning Loci's errors into one line on stderr and a meaningful exit code."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from loci.cli.output import FAILED, NOT_FOUND, error_line
from loci.errors import LociError, NotFound

P = ParamSpec("P")
R = TypeVar("R")


def exits_cleanly(command: Callable[P, R]) -> Callable[P, R]:
    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except LociError as error:
            error_line(error.message)
            raise typer.Exit(NOT_FOUND if isinstance(error, NotFound) else FAILED) from None

    return wrapper
