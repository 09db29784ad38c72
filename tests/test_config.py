"""Settings: the config file, the environment over it, and one clear line for a bad value."""

from __future__ import annotations

from pathlib import Path

import pytest

from loci.config import load_settings
from tests.support.cli import run_cli


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


def test_identity_providers_from_the_environment_or_the_config_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from loci.app import build_sso_providers

    home = tmp_path / "home"
    home.mkdir()
    (home / "config.toml").write_text(
        "password_sign_in = false\n"
        "[[oidc_providers]]\n"
        'name = "keycloak"\nlabel = "Keycloak"\n'
        'issuer = "https://id.example.org/realms/home"\n'
        'client_id = "loci"\nclient_secret = "s3cret"\n'
        'allowed_groups = ["family"]\n'
        '[oidc_providers.group_brains.family]\nrecipes = "editor"\n'
    )
    monkeypatch.setenv("LOCI_HOME", str(home))
    monkeypatch.delenv("LOCI_OIDC_PROVIDERS", raising=False)
    monkeypatch.delenv("LOCI_PASSWORD_SIGN_IN", raising=False)
    settings = load_settings()
    assert settings.password_sign_in is False
    (keycloak,) = build_sso_providers(settings)
    assert keycloak.client_secret == "s3cret" and keycloak.allowed_groups == ("family",)
    assert keycloak.group_brains == {"family": {"recipes": "editor"}}
    assert "s3cret" not in repr(settings)  # a secret setting never shows in a repr or a log

    monkeypatch.setenv(
        "LOCI_OIDC_PROVIDERS",
        '[{"name": "google", "issuer": "https://accounts.google.com", "client_id": "x.apps",'
        ' "allowed_domains": ["example.org"], "username_claim": "email"}]',
    )
    (google,) = build_sso_providers(load_settings())
    assert google.label == "google" and google.username_claim == "email"
    assert google.client_secret is None and google.allowed_domains == ("example.org",)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ('[{"name": "a", "issuer": "ftp://x", "client_id": "c"}]', "issuer"),
        ('[{"name": "Bad Name", "issuer": "https://x", "client_id": "c"}]', "name"),
        (
            '[{"name": "a", "issuer": "https://x", "client_id": "c"},'
            ' {"name": "a", "issuer": "https://y", "client_id": "d"}]',
            "name of its own",
        ),
        ('[{"name": "a", "issuer": "https://x", "client_id": "c", "typo": 1}]', "typo"),
    ],
)
def test_a_bad_identity_provider_setting_is_refused(
    value: str, problem: str, tmp_path: Path
) -> None:
    result = run_cli("list", home=tmp_path / "home", env={"LOCI_OIDC_PROVIDERS": value})
    assert result.returncode == 1
    assert problem in result.stderr.lower()
