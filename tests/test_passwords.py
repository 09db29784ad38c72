"""Password hashes (scrypt, parameters in the hash, upgraded at sign-in) and the cap on failed
sign-ins, with a clock the test moves."""

from __future__ import annotations

import pytest

from loci.auth.accounts import Accounts
from loci.auth.passwords import (
    CURRENT,
    ScryptParams,
    check_strength,
    hash_password,
    needs_rehash,
    verify_password,
)
from loci.auth.people import People
from loci.auth.sign_in_limit import FailedSignIns
from loci.errors import InvalidInput, RateLimited
from loci.store.base import Store

WEAK = ScryptParams(log2_n=10, r=8, p=1)


def test_a_hash_names_its_parameters_and_verifies_only_its_password() -> None:
    stored = hash_password("correct horse battery")
    scheme, params, salt, derived = stored.split("$")
    assert (scheme, params) == ("scrypt", "ln=15,r=8,p=1")
    assert len(salt) >= 20 and len(derived) >= 40
    assert verify_password("correct horse battery", stored)
    assert not verify_password("correct horse batterY", stored)
    assert hash_password("correct horse battery") != stored  # a fresh salt each time
    for broken in (
        "",
        "scrypt$ln=15$x$y",
        "md5$ln=15,r=8,p=1$AAAA$AAAA",
        "scrypt$ln=40,r=8,p=1$AA$AA",
    ):
        assert not verify_password("anything", broken)


def test_weaker_parameters_still_verify_and_are_flagged_for_upgrade() -> None:
    old = hash_password("correct horse battery", WEAK)
    assert old.startswith("scrypt$ln=10,r=8,p=1$")
    assert verify_password("correct horse battery", old)
    assert needs_rehash(old) and not needs_rehash(hash_password("x" * 10, CURRENT))


@pytest.mark.both_backends
def test_a_sign_in_upgrades_an_old_hash(store: Store) -> None:
    people = People(Accounts(store))
    user = store.accounts.create_user("ann")
    store.accounts.set_password(user.id, hash_password("correct horse battery", WEAK), 0.0)
    people.sign_in("ann", "correct horse battery")
    upgraded = store.accounts.password_hash(user.id)
    assert upgraded is not None and upgraded.startswith("scrypt$ln=15,r=8,p=1$")
    assert people.sign_in("ann", "correct horse battery").principal.user.name == "ann"


@pytest.mark.parametrize("password", ["short", " " * 12, "x" * 1025])
def test_the_length_rule(password: str) -> None:
    with pytest.raises(InvalidInput):
        check_strength(password)


def test_failures_are_capped_per_name_within_the_window() -> None:
    now = [1000.0]
    limit = FailedSignIns(limit=3, window_s=60, clock=lambda: now[0])
    for _ in range(3):
        limit.check("Sam")
        limit.failed("sam")
    with pytest.raises(RateLimited) as refused:
        limit.check("SAM")  # names without regard to case, as users are
    assert 0 < refused.value.retry_after_s <= 60
    limit.check("other")  # another name is not affected
    now[0] += 61
    limit.check("sam")  # the failures left the window
    limit.failed("sam")
    limit.succeeded("sam")  # a success forgets them
    for _ in range(2):
        limit.failed("sam")
    limit.check("sam")


def test_the_count_stays_bounded() -> None:
    limit = FailedSignIns(limit=2, window_s=60, clock=lambda: 0.0, max_names=100)
    for i in range(1000):
        limit.failed(f"name{i}")
    assert len(limit._failures) == 100
