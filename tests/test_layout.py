"""The tests' own layout: helpers that several suites share live in tests/support/, and no module
of the suite imports a test module (or conftest.py, which holds fixtures and hooks for pytest to
load). A suite that reaches into another for a helper ties the two together: renaming a test
file, or a private helper in it, breaks a suite that never mentioned it.
"""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
SUPPORT = "tests.support"


def imported_tests_modules(source: str, module: str) -> list[str]:
    """The modules of the `tests` package that `source` (the text of `module`, dotted) imports,
    wherever the import stands (top level or inside a function), absolute or relative."""
    package = module.rsplit(".", 1)[0]
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolved against the importing module's package
                parts = package.split(".")
                parts = parts[: len(parts) - (node.level - 1)]
                base = ".".join([*parts, base] if base else parts)
            if base in ("tests", SUPPORT):  # `from tests import test_x` imports a module
                found += [f"{base}.{alias.name}" for alias in node.names]
            else:  # `from tests.x import name`: a name in the module tests.x
                found.append(base)
    return [name for name in found if name == "tests" or name.startswith("tests.")]


def _modules() -> dict[str, Path]:
    """Every Python module of the suite, by dotted name."""
    return {
        ".".join(path.relative_to(TESTS.parent).with_suffix("").parts): path
        for path in sorted(TESTS.rglob("*.py"))
        if "node_modules" not in path.parts
    }


def _allowed(imported: str) -> bool:
    return imported == SUPPORT or imported.startswith(SUPPORT + ".")


def test_the_finder_sees_every_way_of_importing_a_test_module() -> None:
    source = """
from tests.test_web_app import open_session
from tests import test_sources, conftest
import tests.test_audio
from .test_mcp_http import over_http
from . import test_watching
from tests.support.web_app import sign_in
from tests.support import pdf_files

def late():
    from tests.test_ask import step_of
"""
    found = imported_tests_modules(source, "tests.test_example")
    assert [name for name in found if not _allowed(name)] == [
        "tests.test_web_app",
        "tests.test_sources",
        "tests.conftest",
        "tests.test_audio",
        "tests.test_mcp_http",
        "tests.test_watching",
        "tests.test_ask",
    ]
    assert [name for name in found if _allowed(name)] == [
        "tests.support.web_app",
        "tests.support.pdf_files",
    ]


def test_no_module_of_the_suite_imports_a_test_module_or_conftest() -> None:
    offenders = []
    for module, path in _modules().items():
        for imported in imported_tests_modules(path.read_text(encoding="utf-8"), module):
            if not _allowed(imported):
                offenders.append(f"{path.relative_to(TESTS.parent)} imports {imported}")
    assert offenders == [], (
        "helpers that suites share belong in tests/support/ (fixtures too: import them from "
        "there and name them in the module's __all__)"
    )


def test_tests_holds_test_modules_and_conftest_and_support_holds_the_rest() -> None:
    loose = [
        path.name
        for path in sorted(TESTS.glob("*.py"))
        if not path.name.startswith("test_") and path.name not in ("conftest.py", "__init__.py")
    ]
    assert loose == [], "a shared helper module belongs in tests/support/"
    tests_in_support = sorted(path.name for path in (TESTS / "support").glob("test_*.py"))
    assert tests_in_support == [], "pytest would collect these as tests: name them otherwise"
