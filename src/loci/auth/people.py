"""People as an administrator and a signed-in person see them: invites, passwords, disabling.

An admin invites someone by name: the user exists at once (so brains can be shared with them)
but cannot sign in until they open the one-time link and choose a password. The link's secret is
random and kept only as a hash, and it expires. Signing in with a name and password opens the
same kind of web session a token does (see `Accounts.open_password_session`). A wrong password
and an unknown name get the same answer after the same work (one scrypt either way), and failed
attempts per name are capped (`FailedSignIns`).

Admin actions take `by`: the admin acting, or None for the CLI on the data directory, which is
the workspace's administrator by having the files.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from loci.auth.access import Principal, require_account
from loci.auth.accounts import DAY_S, Accounts, OpenedSession
from loci.auth.passwords import (
    check_strength,
    dummy_hash,
    hash_password,
    needs_rehash,
    verify_password,
)
from loci.auth.records import INVITE_DAYS, MAX_INVITE_DAYS, Invite, User
from loci.auth.secrets import hash_secret, new_secret
from loci.auth.sign_in_limit import FailedSignIns
from loci.errors import Conflict, Forbidden, InvalidInput, NotFound, Unauthenticated

INVITE_PREFIX = "locinv_"
SIGN_IN_REFUSED = "wrong name or password"  # the same words for an unknown name
PASSWORDS_OFF = "password sign-in is turned off here: sign in with your organisation's account"
InviteRole = Literal["member", "admin"]


@dataclass(frozen=True)
class IssuedInvite:
    """An invite as created: the only moment its secret exists outside the link."""

    user: User
    invite: Invite
    secret: str

    @property
    def path(self) -> str:
        return f"/#invite/{self.secret}"


@dataclass(frozen=True)
class Person:
    """A user as an admin sees them, with their open invite if any."""

    user: User
    invite: Invite | None


class People:
    def __init__(
        self,
        accounts: Accounts,
        limiter: FailedSignIns | None = None,
        password_sign_in: bool = True,
    ) -> None:
        """`password_sign_in` False: people sign in only through single sign-on (the
        administrator's choice); signing in with a password, or choosing one through an
        invite, is refused."""
        self.accounts = accounts
        self.store = accounts.accounts
        self.limiter = limiter or FailedSignIns()
        self.password_sign_in = password_sign_in

    def _check_passwords_on(self) -> None:
        if not self.password_sign_in:
            raise Forbidden(PASSWORDS_OFF)

    # invites ------------------------------------------------------------------------------
    def invite(
        self,
        name: str,
        *,
        email: str | None = None,
        role: InviteRole = "member",
        days: float = INVITE_DAYS,
    ) -> IssuedInvite:
        """Invite a new person — or send a new link to someone invited before who has not
        chosen a password yet (their earlier link stops working)."""
        if role not in ("member", "admin"):
            raise InvalidInput(f"role must be member or admin, got {role!r}")
        if not 0 < days <= MAX_INVITE_DAYS:
            raise InvalidInput(f"an invite lasts between a minute and {MAX_INVITE_DAYS:g} days")
        email = _check_email(email)
        try:
            user = self.store.find_user(name)
        except NotFound:
            user = self.store.create_user(
                self.accounts.new_user_name(name), is_admin=role == "admin", email=email
            )
        else:
            if user.has_password or user.disabled:
                raise Conflict(
                    f"{user.name!r} already has an account; an admin can set their password"
                    " (`loci users passwd`)"
                )
            self.store.update_user(user.id, is_admin=role == "admin", email=email)
            user = self.store.get_user(user.id)
        secret = new_secret(INVITE_PREFIX)
        expires_at = self.accounts.clock() + days * DAY_S
        invite = self.store.create_invite(user.id, hash_secret(secret), expires_at)
        return IssuedInvite(user, invite, secret)

    def invited(self, secret: str) -> tuple[User, Invite]:
        """Who an invite link is for, while it is valid."""
        invite = self.store.invite_by_hash(hash_secret(secret))
        if invite is None or invite.used_at is not None:
            raise NotFound("this invitation link is not valid (or was used already)")
        if invite.expires_at <= self.accounts.clock():
            raise NotFound("this invitation link has expired; ask for a new one")
        user = self.store.get_user(invite.user_id)
        if user.disabled:
            raise NotFound("this invitation link is not valid (or was used already)")
        return user, invite

    def accept(self, secret: str, password: str) -> OpenedSession:
        """Use the invite: set the person's password and sign them in. Once only."""
        self._check_passwords_on()
        check_strength(password)  # before using the link up, so a short password costs nothing
        user, invite = self.invited(secret)
        hashed = hash_password(password)
        if not self.store.use_invite(invite.id, self.accounts.clock()):
            raise NotFound("this invitation link is not valid (or was used already)")
        self.store.set_password(user.id, hashed, self.accounts.clock())
        return self.accounts.open_password_session(self.store.get_user(user.id))

    # passwords ----------------------------------------------------------------------------
    def sign_in(self, name: str, password: str) -> OpenedSession:
        self._check_passwords_on()
        self.limiter.check(name)
        user: User | None
        try:
            user = self.store.find_user(name)
        except NotFound:
            user = None
        stored = self.store.password_hash(user.id) if user else None
        # Always one scrypt, so an unknown name answers as slowly as a wrong password.
        matches = verify_password(password, stored or dummy_hash())
        if user is None or stored is None or not matches or user.disabled:
            self.limiter.failed(name)
            raise Unauthenticated(SIGN_IN_REFUSED)
        self.limiter.succeeded(name)
        if needs_rehash(stored):  # stronger parameters since it was set: upgrade it now
            self.store.set_password(user.id, hash_password(password), self.accounts.clock())
        return self.accounts.open_password_session(user)

    def change_password(self, principal: Principal, current: str | None, new: str) -> None:
        """A person changes their own password; the current one is required if they have one.
        Other browsers signed in with a password are signed out; this one stays."""
        require_account(principal, "change the account's password")
        check_strength(new)
        stored = self.store.password_hash(principal.user.id)
        if stored is not None:
            # Guessing it here counts against the same cap as at the sign-in.
            self.limiter.check(principal.user.name)
            if not current or not verify_password(current, stored):
                self.limiter.failed(principal.user.name)
                raise Forbidden("the current password is not right")
        self.store.set_password(
            principal.user.id, hash_password(new), self.accounts.clock(), principal.token.id
        )

    def set_email(self, name: str, email: str) -> User:
        """An administrator records someone's e-mail (the CLI's `loci users email`): what
        single sign-on links a first sign-in by, when the administrator allows it."""
        user = self.store.find_user(name)
        checked = _check_email(email)
        if checked is None:
            raise InvalidInput("give an e-mail address")
        self.store.update_user(user.id, email=checked)
        return self.store.get_user(user.id)

    def set_password(self, name: str, new: str) -> User:
        """An administrator sets someone's password (the CLI's `loci users passwd`)."""
        user = self.store.find_user(name)
        check_strength(new)
        self.store.set_password(user.id, hash_password(new), self.accounts.clock())
        return self.store.get_user(user.id)

    # managing people ----------------------------------------------------------------------
    def people(self) -> list[Person]:
        invites = self.store.open_invites(self.accounts.clock())
        return [Person(u, invites.get(u.id)) for u in self.store.list_users()]

    def person(self, name: str) -> Person:
        user = self.store.find_user(name)
        invite = self.store.open_invites(self.accounts.clock()).get(user.id)
        return Person(user, invite)

    def update(
        self,
        name: str,
        *,
        by: User | None,
        disabled: bool | None = None,
        is_admin: bool | None = None,
    ) -> Person:
        user = self.store.find_user(name)
        if disabled is True and not user.disabled:
            self._may_leave(user, by, "disable")
            self.store.set_disabled(user.id, self.accounts.clock())
        elif disabled is False and user.disabled:
            self.store.set_disabled(user.id, None)
        if is_admin is not None and is_admin != user.is_admin:
            if not is_admin:
                self._keep_an_admin(user, by, "take admin rights from")
            self.store.update_user(user.id, is_admin=is_admin)
        return self.person(name)

    def remove(self, name: str, *, by: User | None) -> None:
        user = self.store.find_user(name)
        self._may_leave(user, by, "remove")
        self.store.delete_user(user.id)

    def _may_leave(self, user: User, by: User | None, action: str) -> None:
        """Refuse what would lock the workspace or a brain out: acting on oneself, the last
        admin, or the last owner of a brain."""
        self._keep_an_admin(user, by, action)
        orphaned = []
        for brain_id, role in sorted(self.store.roles(user.id).items()):
            if role != "owner":
                continue
            others = [
                m
                for m in self.store.members(brain_id)
                if m.role == "owner" and m.user.id != user.id and not m.user.disabled
            ]
            if not others:
                orphaned.append(self.accounts.store.get_brain_by_id(brain_id).name)
        if orphaned:
            names = ", ".join(repr(n) for n in orphaned)
            raise Conflict(
                f"{user.name!r} is the only owner of {names}: make someone else an owner first"
            )

    def _keep_an_admin(self, user: User, by: User | None, action: str) -> None:
        if by is not None and by.id == user.id:
            raise Conflict(f"you cannot {action} yourself")
        if user.is_admin and not any(
            u.is_admin and not u.disabled and u.id != user.id for u in self.store.list_users()
        ):
            raise Conflict(f"cannot {action} the last admin")


def _check_email(email: str | None) -> str | None:
    if email is None or not email.strip():
        return None
    email = email.strip()
    local, at, domain = email.rpartition("@")
    if not at or not local or "." not in domain or len(email) > 254 or " " in email:
        raise InvalidInput(f"{email!r} is not an email address")
    return email
