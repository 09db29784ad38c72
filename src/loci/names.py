"""The one rule for the names people give brains and users: what URLs, tokens and the CLI
carry as they are (`loci.api.schemas.common.BRAIN_NAME` is its pattern for the API's schema)."""

from __future__ import annotations

import re

from loci.errors import InvalidInput

NAME_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


def check_name(kind: str, name: str) -> str:
    if not NAME_PATTERN.fullmatch(name):
        raise InvalidInput(
            f"{kind} name {name!r} must be 1–64 letters, digits, '.', '_' or '-',"
            " starting with a letter or digit"
        )
    return name
