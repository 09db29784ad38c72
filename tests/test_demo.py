"""`make demo` as a newcomer runs it: the examples land in a brain of their own, so the demo
lease never answers a question about the person's own flat, and the search finds the manual."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from tests.support.cli import run_cli
from tests.support.paths import REPO


def demo_commands() -> list[list[str]]:
    """The `loci` commands of the Makefile's demo recipe, as arguments."""
    recipe = re.search(r"^demo:.*\n((?:\t.*\n)+)", (REPO / "Makefile").read_text(), re.M)
    assert recipe is not None, "the Makefile has no demo target"
    return [
        shlex.split(line.strip())[1:]
        for line in recipe[1].splitlines()
        if line.strip().startswith("$(BIN)/loci ")
    ]


def test_make_demo_keeps_the_examples_out_of_the_default_brain(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.chdir(REPO)  # as make runs the recipe
    commands = demo_commands()
    assert len(commands) == 2
    added = run_cli(*commands[0], home=home)
    assert added.returncode == 0, added.stderr
    found = run_cli(*commands[1], home=home)
    assert found.returncode == 0, found.stderr
    assert "boiler-manual.md" in found.stdout.split("\n\n")[0]

    brains = run_cli("brains", "list", home=home).stdout
    assert "demo" in brains
    default = run_cli("list", home=home)
    assert "boiler-manual.md" not in default.stdout and "lease-summary" not in default.stdout
    removed = run_cli("brains", "rm", "demo", "--yes", home=home)
    assert removed.returncode == 0, removed.stderr
    assert "demo" not in run_cli("brains", "list", home=home).stdout
