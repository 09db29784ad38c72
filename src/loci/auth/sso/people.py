"""Who a verified ID token is in Loci, and what their provider's groups give them.

The provider's subject (`sub`) is the identity: once linked, the same account signs in as the
same user whatever its name or e-mail becomes. A first sign-in links to a new user named from
the configured claim — or, only when the administrator set `link_by_email`, to the existing
user whose e-mail is the token's *verified* e-mail. Otherwise a taken name is refused: a
provider account must not take over a Loci account that merely has the same name.

Allowed domains are checked against the verified e-mail, allowed groups against the groups
claim. At each sign-in the groups also set admin rights (when admin groups are configured)
and roles in the brains the administrator mapped: a group member gets the role, a person who
left every group giving it loses it (unless they are the brain's last owner). A user disabled
in Loci is refused whatever the provider says.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import Any

from loci.auth.accounts import Accounts, OpenedSession
from loci.auth.records import User
from loci.auth.sso.provider import SsoProvider
from loci.errors import Conflict, Forbidden, InvalidInput, NotFound, Unauthenticated
from loci.models import Role
from loci.names import check_name
from loci.nul import nul_at

log = logging.getLogger(__name__)
RANK: dict[Role, int] = {"viewer": 1, "editor": 2, "owner": 3}


class SingleSignOn:
    def __init__(self, accounts: Accounts) -> None:
        self.accounts = accounts
        self.users = accounts.accounts
        self.identities = accounts.store.identities

    def sign_in(self, provider: SsoProvider, claims: Mapping[str, Any]) -> OpenedSession:
        subject = claims.get("sub")
        if not isinstance(subject, str) or not subject:
            raise Unauthenticated(f"{provider.label} gave no subject for this account")
        if nul_at([subject, claims.get("email"), claims.get(provider.username_claim)]) is not None:
            raise Unauthenticated(f"{provider.label} sent an account with a NUL character in it")
        email = _verified_email(claims)
        groups = _groups(claims.get(provider.groups_claim))
        _check_allowed(provider, email, groups)
        user_id = self.identities.identity_user(provider.name, subject)
        user = self._user(user_id) if user_id is not None else None
        if user is None:
            user = self._first_sign_in(provider, subject, claims, email, groups)
        if user.disabled:  # Loci decides last
            raise Unauthenticated("this account is disabled in Loci; ask an administrator")
        self.identities.touch_identity(provider.name, subject, email, self.accounts.clock())
        user = self._sync_groups(provider, user, groups)
        return self.accounts.open_password_session(user)

    def _user(self, user_id: int) -> User | None:
        try:
            return self.users.get_user(user_id)
        except NotFound:
            return None

    def _first_sign_in(
        self,
        provider: SsoProvider,
        subject: str,
        claims: Mapping[str, Any],
        email: str | None,
        groups: set[str],
    ) -> User:
        user: User | None = None
        if provider.link_by_email and email:
            matches = self.identities.users_with_email(email)
            if len(matches) == 1:
                user = self.users.get_user(matches[0])
        if user is None:
            name = _user_name(claims.get(provider.username_claim), provider)
            try:
                name = self.accounts.new_user_name(name)
            except Conflict:
                raise Conflict(
                    f"a Loci user named {name!r} already exists. An administrator can allow"
                    f" {provider.label} sign-ins to join the user with the same verified e-mail"
                    " (link_by_email), or rename one of them"
                ) from None
            admin = bool(set(provider.admin_groups) & groups)
            user = self.users.create_user(name, is_admin=admin, email=email)
            log.info("created user %s at their first sign-in with %s", name, provider.name)
        linked = self.identities.link_identity(provider.name, subject, user.id, email)
        return self.users.get_user(linked)

    def _sync_groups(self, provider: SsoProvider, user: User, groups: set[str]) -> User:
        if provider.admin_groups:
            admin = bool(set(provider.admin_groups) & groups)
            if admin != user.is_admin and (admin or self._another_admin(user)):
                self.users.update_user(user.id, is_admin=admin)
                user = self.users.get_user(user.id)
        wanted: dict[str, Role] = {}
        for group, brains in provider.group_brains.items():
            if group not in groups:
                continue
            for name, role in brains.items():  # the highest role any of their groups gives
                current = wanted.get(name)
                if current is None or RANK[role] > RANK[current]:
                    wanted[name] = role
        roles = self.users.roles(user.id)
        for brain_name in {b for brains in provider.group_brains.values() for b in brains}:
            try:
                brain = self.accounts.store.get_brain(brain_name)
            except NotFound:
                log.warning(
                    "%s maps a group to brain %r, which does not exist", provider.name, brain_name
                )
                continue
            given = wanted.get(brain_name)
            if given is not None and roles.get(brain.id) != given:
                self.users.set_member(brain.id, user.id, given)
            elif given is None and brain.id in roles and not self._last_owner(brain.id, user.id):
                self.users.remove_member(brain.id, user.id)
        return user

    def _another_admin(self, user: User) -> bool:
        return any(
            u.is_admin and not u.disabled and u.id != user.id for u in self.users.list_users()
        )

    def _last_owner(self, brain_id: int, user_id: int) -> bool:
        members = self.users.members(brain_id)
        owners = [m for m in members if m.role == "owner"]
        return len(owners) == 1 and owners[0].user.id == user_id


def _verified_email(claims: Mapping[str, Any]) -> str | None:
    """The e-mail, if the provider says it verified it (`email_verified`)."""
    email, verified = claims.get("email"), claims.get("email_verified")
    if isinstance(email, str) and "@" in email and (verified is True or verified == "true"):
        return email.strip()
    return None


def _groups(value: Any) -> set[str]:
    if isinstance(value, str):
        return {value}
    if isinstance(value, list):
        return {g for g in value if isinstance(g, str)}
    return set()


def _check_allowed(provider: SsoProvider, email: str | None, groups: set[str]) -> None:
    if provider.allowed_domains:
        domain = email.rpartition("@")[2].lower() if email else None
        if domain not in {d.lower() for d in provider.allowed_domains}:
            raise Forbidden(
                f"your {provider.label} account needs a verified e-mail address in an allowed"
                " domain to sign in here"
            )
    if provider.allowed_groups and not set(provider.allowed_groups) & groups:
        raise Forbidden(f"your {provider.label} account is in none of the groups allowed here")


def _user_name(value: Any, provider: SsoProvider) -> str:
    """A Loci name from the configured claim: an e-mail gives its local part; characters a
    name cannot hold become hyphens."""
    if not isinstance(value, str) or not value.strip():
        raise InvalidInput(
            f"{provider.label} gave no {provider.username_claim!r} claim to name a new user by;"
            " the administrator can choose another claim (username_claim)"
        )
    name = value.strip().partition("@")[0] if "@" in value else value.strip()
    name = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-._")[:64]
    return check_name("user", name or "user")
