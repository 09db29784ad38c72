"""The surfaces do not import each other: the HTTP API (`loci.api`), the MCP server (`loci.mcp`)
and the CLI (`loci.cli`) each call down into the service, and show what they answer with the
models of `loci.wire`. The server that mounts MCP beside the API is assembled above both
(`loci.server`). Imports are read from the source, inside functions and `TYPE_CHECKING` too."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.support.paths import REPO

SRC = REPO / "src" / "loci"

# (package whose modules import, imported package it may not reach, why)
FORBIDDEN = [
    ("api", "loci.mcp", "the API serves endpoints it is given; loci.server mounts MCP"),
    ("mcp", "loci.api", "MCP's outputs come from loci.wire, as the API's do"),
    ("cli", "loci.api.schemas", "the CLI's --json shows loci.wire models, not the API's"),
    ("cli", "loci.mcp.outputs", "the CLI's --json shows loci.wire models"),
    ("wire", "loci.api", "wire models sit below every surface"),
    ("wire", "loci.mcp", "wire models sit below every surface"),
    ("wire", "loci.cli", "wire models sit below every surface"),
]


def imported(path: Path) -> set[str]:
    """Every module `path` imports, absolute, wherever the import statement is."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def reaching(package: str, target: str) -> list[str]:
    return sorted(
        f"{path.relative_to(SRC)} imports {name}"
        for path in (SRC / package).rglob("*.py")
        for name in imported(path)
        if name == target or name.startswith(target + ".")
    )


@pytest.mark.parametrize(("package", "target", "why"), FORBIDDEN)
def test_a_surface_does_not_import_another(package: str, target: str, why: str) -> None:
    assert reaching(package, target) == [], why


def test_the_reading_sees_imports_in_functions_and_the_server_above_both() -> None:
    # what the rules above rely on: a lazy import inside a function is seen
    assert "loci.mcp.http.McpEndpoint" in imported(SRC / "server.py")
    assert "loci.api.app.create_app" in imported(SRC / "server.py")
    assert reaching("cli", "loci.wire")  # the CLI's --json does use the wire models
    assert reaching("mcp", "loci.wire")
