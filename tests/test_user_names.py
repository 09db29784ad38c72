"""One user name, however it is spelt: case, width and accents fold to one key, the same on
SQLite and PostgreSQL, for finding a user, keeping names unique and counting failed sign-ins."""

from __future__ import annotations

import pytest

from loci.auth.accounts import Accounts
from loci.auth.passwords import hash_password
from loci.auth.people import People
from loci.auth.sign_in_limit import FailedSignIns
from loci.errors import Conflict, InvalidInput, NotFound, RateLimited, Unauthenticated
from loci.store.base import Store

pytestmark = [pytest.mark.both_backends, pytest.mark.attack]  # attack: `make attack`

PASSWORD = "correct horse battery"
# What a person (or an attacker) may type for the user "Alice": capitals, a Turkish dotted
# capital I (PostgreSQL's lower() makes it `i`, Python's casefold `i` + a combining dot), and
# fullwidth letters from a phone keyboard.
SPELLINGS = ["alice", "ALICE", "alİce", "ａｌｉｃｅ"]


def alice(store: Store) -> People:
    people = People(Accounts(store), FailedSignIns(limit=len(SPELLINGS)))
    user = store.accounts.create_user("Alice")
    store.accounts.set_password(user.id, hash_password(PASSWORD), 0.0)
    return people


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_every_spelling_signs_in_as_the_one_user(store: Store, spelling: str) -> None:
    people = alice(store)
    assert people.sign_in(spelling, PASSWORD).principal.user.name == "Alice"
    assert store.accounts.find_user(spelling).name == "Alice"


def test_the_failure_budget_is_shared_by_every_spelling(store: Store) -> None:
    people = alice(store)
    for spelling in SPELLINGS:  # one failure each uses the whole budget of four
        with pytest.raises(Unauthenticated):
            people.sign_in(spelling, "not the password")
    for spelling in SPELLINGS:
        with pytest.raises(RateLimited):
            people.sign_in(spelling, PASSWORD)


def test_a_name_that_folds_to_no_stored_name_is_no_one(store: Store) -> None:
    people = alice(store)
    for stranger in ("al☃ce", "alıce"):  # a snowman; a dotless ı, which folds to no ASCII
        with pytest.raises(NotFound):
            store.accounts.find_user(stranger)
        with pytest.raises(Unauthenticated, match="wrong name or password"):
            people.sign_in(stranger, PASSWORD)


@pytest.mark.parametrize("spelling", ["ALICE", "alİce", "ａｌｉｃｅ", "Alice"])
def test_another_spelling_of_a_users_name_is_a_conflict(store: Store, spelling: str) -> None:
    accounts = Accounts(store)
    accounts.add_user("alice")
    with pytest.raises(Conflict, match="a user named 'alice' already exists"):
        accounts.add_user(spelling)
    people = People(accounts)
    store.accounts.set_password(store.accounts.find_user("alice").id, hash_password(PASSWORD), 0)
    with pytest.raises(Conflict, match="'alice' already has an account"):
        people.invite(spelling)
    assert [u.name for u in accounts.users()] == ["alice"]


def test_a_new_name_outside_the_rule_is_still_invalid(store: Store) -> None:
    with pytest.raises(InvalidInput, match="must be 1–64 letters"):
        Accounts(store).add_user("zoë smith")
    with pytest.raises(InvalidInput, match="must be written 'zoe'"):
        Accounts(store).add_user("ｚｏｅ")
    # Letters of any script are in the rule: zoë is one person with ZOË and zoe.
    zoe, _ = Accounts(store).add_user("zoë")
    assert store.accounts.find_user("ZOË").id == store.accounts.find_user("zoe").id == zoe.id
