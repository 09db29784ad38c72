"""Settings: the config file, the environment over it, and one clear line for a bad value."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.config import load_settings
from tests.conftest import run_cli


def test_config_file_then_environment_then_flags(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('max_file_mb = 7\ndefault_brain = "family"\n')
    monkeypatch.setenv("LOCI_HOME", str(home))
    monkeypatch.delenv("LOCI_MAX_FILE_MB", raising=False)
    settings = load_settings()
    assert settings.max_file_bytes == 7 * 1024 * 1024 and settings.default_brain == "family"
    monkeypatch.setenv("LOCI_MAX_FILE_MB", "9")
    assert load_settings().max_file_mb == 9  # the environment wins over the file
    assert load_settings(max_file_mb=3).max_file_mb == 3  # explicit overrides win over both


def test_default_brain_from_config_is_used_by_the_cli(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text('default_brain = "family"\n')
    assert run_cli("note", "Bins go out on Tuesday.", home=home).returncode == 0
    listed = run_cli("status", "--json", home=home)
    assert '"name": "family"' in listed.stdout


def test_a_bad_setting_is_one_clear_line(tmp_path: Path) -> None:
    result = run_cli("list", home=tmp_path / "home", env={"LOCI_MAX_FILE_MB": "lots"})
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: invalid setting LOCI_MAX_FILE_MB: Input should be a valid number, "
        "unable to parse string as a number"
    )


def test_sources_allowed_roots_are_comma_separated_absolute_folders(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCI_HOME", str(tmp_path / "home"))
    monkeypatch.setenv("LOCI_SOURCES_ALLOWED_ROOTS", f"{tmp_path}/shared, {tmp_path}/vaults")
    assert load_settings().sources_allowed_roots == [tmp_path / "shared", tmp_path / "vaults"]
    monkeypatch.delenv("LOCI_SOURCES_ALLOWED_ROOTS")
    assert load_settings().sources_allowed_roots == []  # unset: the API registers no folder
    result = run_cli(
        "list", home=tmp_path / "home", env={"LOCI_SOURCES_ALLOWED_ROOTS": "shared/notes"}
    )
    assert result.returncode == 1
    assert "LOCI_SOURCES_ALLOWED_ROOTS" in result.stderr and "not an absolute path" in result.stderr
