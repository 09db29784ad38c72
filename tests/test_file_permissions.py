"""The data directory is readable by its owner only: no other local account can open the
database, its WAL, the blobs or the saved indexes."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.support.cli import run_cli

pytestmark = pytest.mark.attack  # the attack suite: `make attack`, docs/security.md

OPEN_TO_OTHERS = stat.S_IRWXG | stat.S_IRWXO


def _open_paths(home: Path) -> list[str]:
    paths = [home, *home.rglob("*")]
    return [
        f"{oct(stat.S_IMODE(p.stat().st_mode))} {p.relative_to(home.parent)}"
        for p in paths
        if p.stat().st_mode & OPEN_TO_OTHERS
    ]


def test_a_fresh_home_has_no_group_or_other_permissions(tmp_path: Path) -> None:
    home = tmp_path / "data" / "home"  # parents missing too: Loci makes the whole path
    note = tmp_path / "pressure.txt"
    note.write_text("Bring the boiler pressure back to 1.5 bar with the filling loop.\n")

    added = run_cli("add", str(note), home=home)
    assert added.returncode == 0, added.stderr
    found = run_cli("search", "boiler pressure", "--json", home=home)
    assert found.returncode == 0, found.stderr

    names = {p.name for p in home.rglob("*")}
    assert "loci.db" in names and "blobs" in names and "index" in names  # what was checked
    assert _open_paths(home) == []
    assert not home.parent.stat().st_mode & OPEN_TO_OTHERS


def test_a_home_made_before_the_rule_is_tightened_on_start(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("note", "The wifi password is on the fridge.", home=home).returncode == 0
    home.chmod(0o755)
    (home / "loci.db").chmod(0o644)

    listed = run_cli("ls", home=home)
    assert listed.returncode == 0, listed.stderr
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert stat.S_IMODE((home / "loci.db").stat().st_mode) == 0o600
