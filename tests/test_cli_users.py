"""`loci users invite / passwd / disable / enable`, run as the real command on a data directory,
checked through the account service a server would use on the same directory."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from loci.auth.accounts import Accounts
from loci.auth.people import People
from loci.errors import Unauthenticated
from loci.store.sqlite import SqliteStore
from tests.support.cli import run_cli

PASSWORD = "tea with the neighbours"


def people(home: Path) -> People:
    return People(Accounts(SqliteStore(home / "loci.db")))


def test_invite_prints_a_one_time_link_for_the_server(tmp_path: Path) -> None:
    home = tmp_path / "home"
    made = run_cli(
        "users", "invite", "sam", "--email", "sam@example.org", "--server-url",
        "https://brain.example.org/", home=home,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    link = made.stdout.strip()
    assert link.startswith("https://brain.example.org/#invite/locinv_")
    assert "shown once" in made.stderr

    secret = link.split("#invite/", 1)[1]
    user, invite = people(home).invited(secret)
    assert user.name == "sam" and user.email == "sam@example.org" and not user.is_admin
    assert abs(invite.expires_at - (time.time() + 7 * 86400)) < 600  # seven days by default
    people(home).accept(secret, PASSWORD)
    assert people(home).sign_in("sam", PASSWORD).principal.user.name == "sam"

    again = run_cli("users", "invite", "sam", home=home)  # signed up: no second invite
    assert again.returncode != 0 and "already has an account" in again.stderr

    admin = json.loads(run_cli("users", "invite", "ada", "--admin", "--json", home=home).stdout)
    assert admin["user"]["is_admin"] is True
    assert admin["link"].startswith("http://127.0.0.1:8765/#invite/")
    assert "secret_hash" not in json.dumps(admin)


def test_passwd_reads_stdin_when_not_a_terminal(tmp_path: Path) -> None:
    home = tmp_path / "home"
    assert run_cli("users", "add", "jo", home=home).returncode == 0
    set_ = run_cli("users", "passwd", "jo", home=home, stdin=PASSWORD + "\n")
    assert set_.returncode == 0, set_.stderr
    assert PASSWORD not in set_.stdout + set_.stderr
    assert people(home).sign_in("jo", PASSWORD).principal.user.name == "jo"

    short = run_cli("users", "passwd", "jo", home=home, stdin="short\n")
    assert short.returncode != 0 and "at least 10 characters" in short.stderr
    assert people(home).sign_in("jo", PASSWORD)  # unchanged
    unknown = run_cli("users", "passwd", "nobody", home=home, stdin=PASSWORD + "\n")
    assert unknown.returncode != 0 and "no user named 'nobody'" in unknown.stderr

    listed = json.loads(run_cli("users", "list", "--json", home=home).stdout)
    assert listed[0]["has_password"] is True and "password_hash" not in json.dumps(listed)


def test_disable_and_enable(tmp_path: Path) -> None:
    home = tmp_path / "home"
    run_cli("users", "add", "jo", home=home)
    run_cli("users", "passwd", "jo", home=home, stdin=PASSWORD + "\n")
    assert run_cli("users", "disable", "jo", home=home).returncode == 0
    with pytest.raises(Unauthenticated):
        people(home).sign_in("jo", PASSWORD)
    assert run_cli("users", "enable", "jo", home=home).returncode == 0
    assert people(home).sign_in("jo", PASSWORD)
