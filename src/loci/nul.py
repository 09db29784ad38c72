"""The one rule for NUL (U+0000) in text, on both backends alike.

PostgreSQL cannot store a NUL in a text column (SQLite can), so a brain that accepted one on
SQLite could never move to PostgreSQL. Text a person or a program sends — a request's field, a
tool's argument, a note on stdin — that holds one is refused, naming where it is. Text read out
of a file has it stripped instead: a stray NUL in a PDF's text layer is no reason to lose the file.
"""

from __future__ import annotations

from typing import Any

from loci.errors import InvalidInput

NUL = "\x00"
PROBLEM = "contains a NUL character (\\u0000), which Loci does not store; remove it"


def nul_at(value: object) -> str | None:
    """Where in `value` (a string, or JSON-like lists and dicts of them) a NUL is, as a suffix
    to the value's own name: "" for the string itself, "[2]" or ".title" inside; None if nowhere.
    Iterative, so a deeply nested value cannot exhaust the stack."""
    pending: list[tuple[str, object]] = [("", value)]
    while pending:
        where, item = pending.pop()
        if isinstance(item, str):
            if NUL in item:
                return where
        elif isinstance(item, dict):
            for key, inner in item.items():
                if isinstance(key, str) and NUL in key:
                    return f"{where} (a key)"
                pending.append((f"{where}.{key}", inner))
        elif isinstance(item, list | tuple):
            pending.extend((f"{where}[{i}]", inner) for i, inner in enumerate(item))
    return None


def refuse_nul(name: str, value: object) -> None:
    """`InvalidInput` naming the field if `value` holds a NUL anywhere."""
    where = nul_at(value)
    if where is not None:
        raise InvalidInput(f"{name}{where} {PROBLEM}")


def strip_nul(text: str) -> str:
    return text.replace(NUL, "") if NUL in text else text


def strip_nul_deep(value: Any) -> Any:
    """`value` (JSON-like: a file's metadata) with every NUL gone from its strings and keys."""
    if isinstance(value, str):
        return strip_nul(value)
    if isinstance(value, dict):
        return {strip_nul_deep(k): strip_nul_deep(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return type(value)(strip_nul_deep(v) for v in value)
    return value
